//go:build linux

package emulator

import (
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

func TestListeningSockets(t *testing.T) {
	if got, want := listeningSockets([]byte(procTCP6), 8000), []string{"socket:[4242]"}; !slices.Equal(got, want) {
		t.Errorf("port 8000: %v, want %v", got, want)
	}
	if got, want := listeningSockets([]byte(procTCP6), 80), []string{"socket:[777]"}; !slices.Equal(got, want) {
		t.Errorf("port 80: %v, want %v", got, want)
	}
	if got := listeningSockets([]byte(procTCP6), 40000); len(got) != 0 {
		t.Errorf("port 40000 (only a connection's remote port): %v, want none", got)
	}
}

func FuzzListeningSockets(f *testing.F) {
	f.Add([]byte(procTCP6), uint16(8000))
	f.Add([]byte("header\n 0: 0100007F:0050 00000000:0000 0A x x x x x 9\n"), uint16(80))
	f.Add([]byte("\n\n:::: 0A"), uint16(0))
	f.Fuzz(func(t *testing.T, table []byte, port uint16) {
		for _, s := range listeningSockets(table, int(port)) {
			inner, ok := strings.CutPrefix(s, "socket:[")
			if !ok || !strings.HasSuffix(inner, "]") || strings.ContainsAny(inner, " \t\n") {
				t.Fatalf("malformed socket link %q", s)
			}
		}
	})
}
