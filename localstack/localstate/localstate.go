// Package localstate is where make run says where its stack is: the file
// parley-local run writes once its emulators and functions are up, and
// the operator CLI (parley --local) and anything else local reads. It holds
// the emulators' endpoints and dummy credentials, the resources' names, the
// log file and the runner's address; never a user's secret.
package localstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Path is the file, relative to the repository's root (where make run
// runs).
const Path = ".parley/local.json"

// State is a running local stack.
type State struct {
	// Env is KEY=value: the SDK's standard endpoint variables and dummy
	// credentials that reach the emulators (emulator.Stack.Env), and the
	// resources' variables (resources.Env*).
	Env []string `json:"env"`
	// Log is the functions' JSON log file.
	Log string `json:"log"`
	// Listen is the runner's address (its webhooks, the console).
	Listen string `json:"listen"`
}

// Getenv looks key up in s.Env.
func (s State) Getenv(key string) string {
	for _, kv := range s.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// Write writes s to path, whole or not at all.
func Write(path string, s State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Remove removes path: the stack is gone.
func Remove(path string) { _ = os.Remove(path) }

// Read reads path.
func Read(path string) (State, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, fmt.Errorf("%s not found: is make run running (in this directory)?", path)
	}
	if err != nil {
		return State{}, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil || len(s.Env) == 0 {
		return State{}, fmt.Errorf("%s does not say where the local stack is: restart make run", path)
	}
	return s, nil
}
