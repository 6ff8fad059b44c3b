//go:build linux

package emulator

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// sysProcAttr puts the child in its own process group (Stop signals the
// group) and has the kernel SIGKILL it when its creating thread dies (see
// spawner for why that thread lives as long as the child).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitExited blocks until pid has exited without reaping it (WNOWAIT), so
// the pid, and with it the process group id, cannot be reused until
// exec.Cmd.Wait collects it. It reports whether it saw the exit.
func waitExited(pid int) bool {
	const pPID = 1     // P_PID
	var info [128]byte // siginfo_t, unread
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info)), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return errno == 0 // if not waitable at all, Wait will say why
		}
	}
}

// listensOn reports whether process pid holds a listening TCP socket on port.
func listensOn(pid, port int) (bool, error) {
	addrs, err := listenAddrs(pid, port)
	return len(addrs) > 0, err
}

// listenAddrs returns the local addresses of the listening TCP sockets on
// port that process pid holds (0.0.0.0 or :: for all interfaces): the
// listeners for port in the process's network namespace (/proc/PID/net/tcp{,6})
// matched against its file descriptors.
func listenAddrs(pid, port int) ([]netip.Addr, error) {
	sockets := map[string]netip.Addr{}
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if errors.Is(err, fs.ErrNotExist) {
			continue // no IPv6, or the process is gone
		}
		if err != nil {
			return nil, err
		}
		for _, s := range listeningSockets(data, port) {
			sockets[s.link] = s.addr
		}
	}
	if len(sockets) == 0 {
		return nil, nil
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	for _, fd := range fds {
		link, err := os.Readlink(dir + "/" + fd.Name())
		if addr, ok := sockets[link]; err == nil && ok {
			addrs = append(addrs, addr)
			delete(sockets, link) // a socket held by several fds counts once
		}
	}
	return addrs, nil
}

// listenSocket is a listening socket from a /proc/net/tcp or tcp6 table.
type listenSocket struct {
	link string     // its fd link target, "socket:[INODE]"
	addr netip.Addr // its local address
}

// listeningSockets returns the sockets listening on port in a /proc/net/tcp or
// tcp6 table.
func listeningSockets(table []byte, port int) []listenSocket {
	var sockets []listenSocket
	for i, line := range strings.Split(string(table), "\n") {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		f := strings.Fields(line)
		if i == 0 || len(f) < 10 || f[3] != "0A" { // header; 0A: TCP_LISTEN
			continue
		}
		hexAddr, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil || int(p) != port {
			continue
		}
		if addr, ok := procAddr(hexAddr); ok {
			sockets = append(sockets, listenSocket{link: "socket:[" + f[9] + "]", addr: addr})
		}
	}
	return sockets
}

// procAddr decodes an address from /proc/net/tcp{,6}: 8 or 32 hex digits,
// each group of 8 a 32-bit word of the address printed in host byte order
// (127.0.0.1 is 0100007F on a little-endian machine).
func procAddr(h string) (netip.Addr, bool) {
	b, err := hex.DecodeString(h)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.Addr{}, false
	}
	for i := 0; i < len(b); i += 4 {
		binary.NativeEndian.PutUint32(b[i:], binary.BigEndian.Uint32(b[i:]))
	}
	return netip.AddrFromSlice(b)
}
