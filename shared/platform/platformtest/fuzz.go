package platformtest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/platform"
)

// What every receiver's FuzzReceiverParse asks alike, whatever its
// platform's signature and events look like.

// AddSamples seeds f with every file of dir matching pattern, each followed
// by args (a signature to try, say): the platform's own samples are where
// fuzzing a receiver starts.
func AddSamples(f *testing.F, dir, pattern string, args ...any) {
	f.Helper()
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no samples %s in %s (%v)", pattern, dir, err)
	}
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append([]any{body}, args...)...)
	}
}

// CheckVerify is what Verify must have answered a fuzzed signature sig:
// nothing when it is the true one, ErrUnauthorized otherwise, and never an
// error naming secret (when not empty).
func CheckVerify(t testing.TB, err error, sig string, isTrue bool, secret string) {
	t.Helper()
	switch {
	case isTrue && err != nil:
		t.Fatalf("Verify refused the true signature %q: %v", sig, err)
	case !isTrue && !errors.Is(err, platform.ErrUnauthorized):
		t.Fatalf("Verify(%q) = %v, want ErrUnauthorized", sig, err)
	}
	if err != nil && secret != "" && strings.Contains(err.Error(), secret) {
		t.Fatalf("error leaks the secret: %v", err)
	}
}

// CheckIgnored fails t for an ignored update whose reason is none of
// reasons.
func CheckIgnored(t testing.TB, ignored []platform.Ignored, reasons ...string) {
	t.Helper()
	for _, ig := range ignored {
		if !slices.Contains(reasons, ig.Reason) {
			t.Fatalf("unknown ignore reason %q", ig.Reason)
		}
	}
}
