package emulator

import (
	"errors"
	"fmt"
)

// ErrNotInstalled means an emulator or its runtime (java, node) is missing.
// `make setup` (localstack/setup.sh) installs them.
var ErrNotInstalled = errors.New("emulator not installed (run `make setup`, i.e. localstack/setup.sh)")

// StartError says which emulator did not come up, and carries its last output.
type StartError struct {
	// Emulator is "dynamodb" or "sqs".
	Emulator string
	Err      error
	// Log is the tail of the emulator's stdout and stderr.
	Log string
}

func (e *StartError) Error() string {
	return withLog(fmt.Sprintf("start %s emulator: %v", e.Emulator, e.Err), e.Log)
}

func (e *StartError) Unwrap() error { return e.Err }

// ExitError reports an emulator that exited while its Stack was running
// (not because of Stop).
type ExitError struct {
	// Emulator is "dynamodb" or "sqs".
	Emulator string
	PID      int
	// Err is the process's exit status (an *exec.ExitError) or nil for exit 0.
	Err error
	// Log is the tail of the emulator's stdout and stderr.
	Log string
}

func (e *ExitError) Error() string {
	status := "exit status 0"
	if e.Err != nil {
		status = e.Err.Error()
	}
	return withLog(fmt.Sprintf("%s emulator (pid %d) exited: %s", e.Emulator, e.PID, status), e.Log)
}

func (e *ExitError) Unwrap() error { return e.Err }

func withLog(msg, log string) string {
	if log == "" {
		return msg
	}
	return msg + "\n--- last output ---\n" + log
}
