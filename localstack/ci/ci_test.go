package ci

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCIRunsLint_Finding14 (issue 23, finding 14): CI ran `make test`
// alone, so a file gofmt would change, a vet or staticcheck finding, or an
// untidy go.mod passed CI. .ci/run is run here with a make that only
// records the targets it is asked for; the real make then dry-runs those
// targets, which must include every check of `make lint` in both modules.
func TestCIRunsLint_Finding14(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	realMake, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on PATH")
	}
	bin := t.TempDir()
	record := filepath.Join(bin, "targets")
	fake := "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '" + record + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "make"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, ".ci", "run"))
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf(".ci/run: %v\n%s", err, out)
	}
	recorded, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf(".ci/run called no make: %v", err)
	}
	targets := strings.Fields(string(recorded))

	dry := exec.Command(realMake, append([]string{"-n", "-C", root}, targets...)...)
	out, err := dry.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %s: %v\n%s", strings.Join(targets, " "), err, out)
	}
	for _, check := range []string{
		"gofmt -l", "go vet ./...", "go tool staticcheck ./...", "cd infra && go vet ./... && go tool staticcheck ./...",
		"go mod tidy -diff", "cd infra && go mod tidy -diff", "go test -race",
	} {
		if !strings.Contains(string(out), check) {
			t.Errorf("CI (make %s) does not run %q:\n%s", strings.Join(targets, " "), check, out)
		}
	}
}
