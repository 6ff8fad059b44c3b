package emulator

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a process that starts a stack and
// then gets killed: see TestInterruptedProcessLeavesNoEmulator.
const helperEnv = "PARLEY_EMULATOR_TEST_HELPER"

const pidsLine = "emulator-pids"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		helperMain()
		return
	}
	os.Exit(m.Run())
}

// helperMain starts a stack, prints its pids and waits to be killed. It never
// calls Stop: the emulators must die with it regardless.
func helperMain() {
	// A Go program dies on SIGINT by default, unless it inherited SIGINT
	// ignored (a background job of a non-interactive shell, as in CI): then Go
	// keeps ignoring it. Exit on it explicitly, as the default would.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	go func() {
		<-sigs
		os.Exit(130)
	}()
	s, err := Start(context.Background(), Options{StartTimeout: startTimeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s %d %d\n", pidsLine, s.PIDs()[0], s.PIDs()[1])
	time.Sleep(2 * time.Minute) // the parent kills us long before
	os.Exit(3)
}

// A test process that is killed (SIGKILL) or interrupted (SIGINT) without
// stopping its stack leaves no emulator running.
func TestInterruptedProcessLeavesNoEmulator(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(strings.ToUpper(strings.ReplaceAll(sig.String(), " ", "_")), func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"=1")
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			})

			pidsc := make(chan []int, 1)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == pidsLine {
						a, _ := strconv.Atoi(f[1])
						b, _ := strconv.Atoi(f[2])
						pidsc <- []int{a, b}
					}
				}
				close(pidsc)
			}()
			var pids []int
			select {
			case pids = <-pidsc:
			case <-time.After(startTimeout + 10*time.Second):
			}
			if len(pids) != 2 {
				_ = cmd.Process.Kill()
				_ = cmd.Wait() // before reading stderr, which Wait's copier writes
				t.Fatalf("helper printed no pids; its stderr:\n%s", stderr.String())
			}
			ps := running(t, pids)

			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			if err == nil {
				t.Fatalf("helper exited 0 after %v", sig)
			}
			assertGone(t, ps)
		})
	}
}
