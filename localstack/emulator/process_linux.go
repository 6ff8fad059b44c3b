//go:build linux

package emulator

import (
	"errors"
	"fmt"
	"io/fs"
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

// listensOn reports whether process pid holds a listening TCP socket on port:
// the listening sockets for port in the process's network namespace
// (/proc/PID/net/tcp{,6}) matched against its file descriptors.
func listensOn(pid, port int) (bool, error) {
	sockets := map[string]bool{}
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if errors.Is(err, fs.ErrNotExist) {
			continue // no IPv6, or the process is gone
		}
		if err != nil {
			return false, err
		}
		for _, s := range listeningSockets(data, port) {
			sockets[s] = true
		}
	}
	if len(sockets) == 0 {
		return false, nil
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, fd := range fds {
		if link, err := os.Readlink(dir + "/" + fd.Name()); err == nil && sockets[link] {
			return true, nil
		}
	}
	return false, nil
}

// listeningSockets returns, as the fd link targets "socket:[INODE]", the
// sockets listening on port in a /proc/net/tcp or tcp6 table.
func listeningSockets(table []byte, port int) []string {
	var sockets []string
	for i, line := range strings.Split(string(table), "\n") {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		f := strings.Fields(line)
		if i == 0 || len(f) < 10 || f[3] != "0A" { // header; 0A: TCP_LISTEN
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(p) == port {
			sockets = append(sockets, "socket:["+f[9]+"]")
		}
	}
	return sockets
}
