package emulator

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// process is one running emulator: the leader of its own process group.
type process struct {
	name   string
	port   int
	cmd    *exec.Cmd
	pid    int
	tail   *tailBuffer
	exited chan struct{} // closed once the process is reaped

	// mu orders signals against reaping: while the leader is unreaped (a
	// zombie at worst) its pid cannot be reused, so signalling its group
	// cannot hit an unrelated process.
	mu      sync.Mutex
	reaped  bool
	waitErr error
}

// signal sends sig to the process's group unless it has been reaped.
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped {
		_ = syscall.Kill(-p.pid, sig) // ESRCH: already gone
	}
}

// reap waits for the leader to exit, kills whatever is left of its group, then
// collects its status.
func (p *process) reap() {
	if waitExited(p.pid) { // the zombie holds the pid: the group id is still ours
		p.signal(syscall.SIGKILL)
	}
	p.mu.Lock()
	p.waitErr = p.cmd.Wait()
	p.reaped = true
	p.mu.Unlock()
	close(p.exited)
}

// hasExited reports whether the process has been reaped.
func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// spawner starts processes from one OS thread that stays alive until every
// process it started is gone. A child's parent-death signal fires when the
// thread that forked it exits (https://go.dev/issue/27505), and the Go runtime
// only ends threads whose goroutine exits while locked to them, so a locked
// goroutine that outlives the children makes the signal mean "the process
// died".
type spawner struct {
	mu     sync.Mutex
	closed bool
	reqs   chan func()
	done   chan struct{}
}

func newSpawner() *spawner {
	sp := &spawner{reqs: make(chan func()), done: make(chan struct{})}
	go func() {
		runtime.LockOSThread()
		// Never unlocked: when the loop ends, the children are gone and the
		// thread may exit with the goroutine.
		for f := range sp.reqs {
			f()
		}
		close(sp.done)
	}()
	return sp
}

var errSpawnerClosed = errors.New("emulator: stack stopped")

// start runs cmd.Start on the spawner's thread.
func (sp *spawner) start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	sp.mu.Lock()
	if sp.closed {
		sp.mu.Unlock()
		return errSpawnerClosed
	}
	sp.reqs <- func() { errc <- cmd.Start() }
	sp.mu.Unlock()
	return <-errc
}

// close ends the spawner's goroutine, and with it its thread. Call it only
// once the processes it started are gone: their parent-death signal fires.
func (sp *spawner) close() {
	sp.mu.Lock()
	if !sp.closed {
		sp.closed = true
		close(sp.reqs)
	}
	sp.mu.Unlock()
	<-sp.done
}

// spawn starts cmd in its own process group from the spawner's thread.
func (sp *spawner) spawn(name string, port int, cmd *exec.Cmd, out *lineWriter) (*process, error) {
	p := &process{name: name, port: port, cmd: cmd, tail: &tailBuffer{max: tailSize}, exited: make(chan struct{})}
	cmd.Stdout = p.tail
	if out != nil {
		cmd.Stdout = teeWriter{p.tail, out}
	}
	cmd.Stderr = cmd.Stdout // one pipe, one copying goroutine, interleaved in order
	cmd.SysProcAttr = sysProcAttr()
	// Bounds Wait should a stray grandchild keep the output pipe open.
	cmd.WaitDelay = 2 * time.Second
	if err := sp.start(cmd); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			err = fmt.Errorf("%w: %w", ErrNotInstalled, err)
		}
		return nil, err
	}
	p.pid = cmd.Process.Pid
	if testHookSpawned != nil {
		testHookSpawned(name, p.pid)
	}
	go p.reap()
	return p, nil
}

// testHookSpawned, set only by tests, sees every emulator process started.
var testHookSpawned func(name string, pid int)

// teeWriter writes to the tail and to the shared log; neither fails.
type teeWriter struct {
	tail *tailBuffer
	log  *lineWriter
}

func (t teeWriter) Write(b []byte) (int, error) {
	_, _ = t.tail.Write(b)
	return t.log.Write(b)
}

// freePort asks the kernel for a port that is free right now. Another process
// may take it before the emulator binds it: Start checks who answers.
func freePort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
