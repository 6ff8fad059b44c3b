//go:build linux

package emulator

import (
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
)

// A /proc/net/tcp6 excerpt: a listener on [::]:8000 (inode 4242), one on
// 127.0.0.1-mapped :8000 in TIME_WAIT (06), and a listener on another port.
const procTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1F40 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:1F40 0000000000000000FFFF00000100007F:9C40 06 00000000:00000000 03:00000DAB 00000000     0        0 0 3 0000000000000000
   2: 00000000000000000000000000000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0000000000000000 100 0 0 10 0
`

// A /proc/net/tcp excerpt: listeners on 127.0.0.1:8000 (inode 11) and
// 0.0.0.0:80 (inode 12), and a connection from 192.168.1.10:8000.
const procTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 11 1 0000000000000000 100 0 0 10 0
   1: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12 1 0000000000000000 100 0 0 10 0
   2: 0A01A8C0:1F40 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 13 1 0000000000000000 20 4 30 10 -1
`

func TestListeningSockets(t *testing.T) {
	if !littleEndian() {
		t.Skip("the excerpts are from a little-endian machine")
	}
	for _, tc := range []struct {
		table string
		port  int
		want  []listenSocket
	}{
		{procTCP6, 8000, []listenSocket{{"socket:[4242]", netip.IPv6Unspecified()}}},
		{procTCP6, 80, []listenSocket{{"socket:[777]", netip.IPv6Unspecified()}}},
		{procTCP6, 40000, nil}, // only a connection's remote port
		{procTCP, 8000, []listenSocket{{"socket:[11]", netip.MustParseAddr("127.0.0.1")}}},
		{procTCP, 80, []listenSocket{{"socket:[12]", netip.IPv4Unspecified()}}},
	} {
		if got := listeningSockets([]byte(tc.table), tc.port); !slices.Equal(got, tc.want) {
			t.Errorf("port %d: %v, want %v", tc.port, got, tc.want)
		}
	}
}

func TestProcAddr(t *testing.T) {
	if !littleEndian() {
		t.Skip("the hex forms are a little-endian machine's")
	}
	for h, want := range map[string]string{
		"0100007F":                         "127.0.0.1",
		"00000000":                         "0.0.0.0",
		"0A01A8C0":                         "192.168.1.10",
		"00000000000000000000000001000000": "::1",
		"0000000000000000FFFF00000100007F": "::ffff:127.0.0.1",
		"000080FE00000000FF00FC00010000FE": "fe80::fc:ff:fe00:1",
	} {
		if got, ok := procAddr(h); !ok || got != netip.MustParseAddr(want) {
			t.Errorf("procAddr(%q) = %v, %v; want %s", h, got, ok, want)
		}
	}
	for _, h := range []string{"", "0100007", "0100007G", "0100007F00"} {
		if got, ok := procAddr(h); ok {
			t.Errorf("procAddr(%q) = %v, want not ok", h, got)
		}
	}
}

// listenAddrs reads back the addresses this process's own listeners are bound
// to, whatever the machine's byte order.
func TestListenAddrsOfOwnListeners(t *testing.T) {
	for _, tc := range []struct{ network, addr string }{
		{"tcp4", "127.0.0.1:0"},
		{"tcp4", "0.0.0.0:0"},
		{"tcp6", "[::1]:0"},
		{"tcp6", "[::]:0"},
	} {
		l, err := net.Listen(tc.network, tc.addr)
		if err != nil {
			t.Logf("skip %s: %v", tc.addr, err) // a machine without IPv6
			continue
		}
		defer l.Close()
		bound := l.Addr().(*net.TCPAddr).AddrPort()
		addrs, err := listenAddrs(os.Getpid(), int(bound.Port()))
		if err != nil {
			t.Fatal(err)
		}
		if want := []netip.Addr{bound.Addr()}; !slices.Equal(addrs, want) {
			t.Errorf("listener on %s: listenAddrs = %v, want %v", bound, addrs, want)
		}
	}
}

func littleEndian() bool {
	return binary.NativeEndian.Uint16([]byte{1, 0}) == 1
}

func FuzzListeningSockets(f *testing.F) {
	f.Add([]byte(procTCP6), uint16(8000))
	f.Add([]byte(procTCP), uint16(8000))
	f.Add([]byte("header\n 0: 0100007F:0050 00000000:0000 0A x x x x x 9\n"), uint16(80))
	f.Add([]byte("\n\n:::: 0A"), uint16(0))
	f.Fuzz(func(t *testing.T, table []byte, port uint16) {
		for _, s := range listeningSockets(table, int(port)) {
			inner, ok := strings.CutPrefix(s.link, "socket:[")
			if !ok || !strings.HasSuffix(inner, "]") || strings.ContainsAny(inner, " \t\n") {
				t.Fatalf("malformed socket link %q", s.link)
			}
			if !s.addr.IsValid() {
				t.Fatalf("socket %s: invalid address", s.link)
			}
		}
	})
}
