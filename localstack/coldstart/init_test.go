package coldstart_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// initLine is one package's line of GODEBUG=inittrace=1.
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

// initBudget is what one of Parley's packages may allocate at
// initialisation. A regular expression with a bounded repeat ({1,128}), a
// table built from a literal or a JSON Schema compiled at init costs
// hundreds of allocations and milliseconds of every cold start; a few
// sentinel errors and small maps cost a handful.
const (
	initBudgetAllocs = 32
	initBudgetBytes  = 8 << 10
)

// TestParleyPackagesInitAlmostNothing: no package of Parley's does work at
// initialisation that a cold start would pay for. It starts the turn
// function (which links every adapter, the envelope and the store) and the
// Teams webhook (the token libraries) with GODEBUG=inittrace=1, and holds
// each of Parley's packages to initBudget. Allocations, not time: they are
// the same on every run, whatever else the machine does.
func TestParleyPackagesInitAlmostNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, fn := range []string{"turn", "teams"} {
		t.Run(fn, func(t *testing.T) {
			t.Parallel()
			bin := filepath.Join(dir, fn)
			cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-o", bin, "../../functions/"+fn)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("build: %v\n%s", err, out)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			// No runtime API: main stops at its first request for an
			// event, after every package has initialised.
			run := exec.CommandContext(ctx, bin)
			run.Env = append(append([]string{"GODEBUG=inittrace=1", "PATH=" + os.Getenv("PATH")}, env...), "AWS_LAMBDA_RUNTIME_API=127.0.0.1:9")
			out, _ := run.CombinedOutput()
			seen := 0
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				m := initLine.FindStringSubmatch(sc.Text())
				if m == nil {
					continue
				}
				seen++
				if !bytes.HasPrefix([]byte(m[1]), []byte("github.com/parleyhq/parley/")) {
					continue
				}
				b, _ := strconv.Atoi(m[2])
				n, _ := strconv.Atoi(m[3])
				if n > initBudgetAllocs || b > initBudgetBytes {
					t.Errorf("%s allocates %d times, %d bytes at init; at most %d and %d bytes: build tables and patterns when first used, or write them as code", m[1], n, b, initBudgetAllocs, initBudgetBytes)
				}
			}
			if seen < 50 {
				t.Fatalf("only %d init lines; want every package's:\n%s", seen, out)
			}
		})
	}
}
