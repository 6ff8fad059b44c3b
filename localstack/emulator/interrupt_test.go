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
// then gets killed (see TestInterruptedProcessLeavesNoEmulator). Its value
// says when the helper reports its emulators' pids: "running" once Start has
// returned, "starting" as soon as each process is spawned.
const helperEnv = "PARLEY_EMULATOR_TEST_HELPER"

// pidLine starts the helper's stdout lines "emulator-pid NAME PID".
const pidLine = "emulator-pid"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		helperMain(mode)
		return
	}
	os.Exit(m.Run())
}

// helperMain starts a stack, reports its pids and waits to be killed. It never
// calls Stop: the emulators must die with it regardless.
func helperMain(mode string) {
	// A Go program dies on SIGINT by default, unless it inherited SIGINT
	// ignored (a background job of a non-interactive shell, as in CI): then Go
	// keeps ignoring it. Exit on it explicitly, as the default would.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	go func() {
		<-sigs
		os.Exit(130)
	}()
	if mode == "starting" {
		testHookSpawned = func(name string, pid int) { fmt.Printf("%s %s %d\n", pidLine, name, pid) }
	}
	s, err := Start(context.Background(), Options{StartTimeout: startTimeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if mode == "running" {
		for i, name := range []string{"dynamodb", "sqs"} {
			fmt.Printf("%s %s %d\n", pidLine, name, s.PIDs()[i])
		}
	}
	time.Sleep(2 * time.Minute) // the parent kills us long before
	os.Exit(3)
}

// A test process that is killed (SIGKILL) or interrupted (SIGINT) without
// stopping its stack, whether the emulators are up or still starting, leaves
// no emulator running.
func TestInterruptedProcessLeavesNoEmulator(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		mode string
		sig  syscall.Signal
	}{
		{"KilledWhileRunning", "running", syscall.SIGKILL},
		// While starting: a JVM costs seconds of CPU, and Ctrl-C during a
		// stack's start-up is the likelier case anyway.
		{"InterruptedWhileStarting", "starting", syscall.SIGINT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+tc.mode)
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

			// Reads until both emulators' pids are known.
			pidsc := make(chan map[string]int, 1)
			go func() {
				pids := map[string]int{}
				sc := bufio.NewScanner(stdout)
				for len(pids) < 2 && sc.Scan() {
					if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == pidLine {
						if pid, err := strconv.Atoi(f[2]); err == nil {
							pids[f[1]] = pid
						}
					}
				}
				pidsc <- pids
			}()
			var pids map[string]int
			select {
			case pids = <-pidsc:
			case <-time.After(startTimeout + 10*time.Second):
			}
			if pids["dynamodb"] == 0 || pids["sqs"] == 0 {
				_ = cmd.Process.Kill()
				_ = cmd.Wait() // before reading stderr, which Wait's copier writes
				t.Fatalf("helper reported pids %v; its stderr:\n%s", pids, stderr.String())
			}
			ps := running(t, []int{pids["dynamodb"], pids["sqs"]})

			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err == nil {
				t.Fatalf("helper exited 0 after %v", tc.sig)
			}
			assertGone(t, ps)
		})
	}
}
