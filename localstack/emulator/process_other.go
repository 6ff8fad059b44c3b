//go:build unix && !linux

package emulator

import (
	"errors"
	"net/netip"
	"syscall"
)

// sysProcAttr puts the child in its own process group. Outside Linux there is
// no parent-death signal: a process killed without calling Stop leaves its
// emulators running.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// waitExited returns at once, without having seen an exit: Wait reaps right
// away, and Stop's group signals rely on the leader not being reaped yet.
func waitExited(int) bool { return false }

// listensOn cannot look up socket owners here and trusts the answer.
func listensOn(int, int) (bool, error) { return true, nil }

// listenAddrs cannot look up socket owners here.
func listenAddrs(int, int) ([]netip.Addr, error) { return nil, errors.ErrUnsupported }
