package coldstart_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// unlinked are the packages no function may link: test helpers, whose
// package initialisation is part of every cold start and whose code has no
// place in a deployed function.
var unlinked = []struct{ prefix, why string }{
	{"net/http/httptest", "shared/functionurl answers from a response writer of its own; httptest links flag and a test certificate"},
	{"testing", "test helpers belong in _test files and localstack/"},
}

// linked are the packages every function calls AWS with (ADR 0013): the
// SDK's configuration loader and its service clients, never a client of
// Parley's own.
var linked = []string{
	"github.com/aws/aws-sdk-go-v2/config",
	"github.com/aws/aws-sdk-go-v2/service/dynamodb",
	"github.com/aws/aws-sdk-go-v2/service/sqs",
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager",
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue",
}

func TestFunctionsLinkTheSDKAndNoTestHelpers(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "lambda.norpc", "-deps", "../../functions/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list gave %d packages; want every function's dependencies:\n%s", len(deps), out)
	}
	for _, p := range deps {
		for _, u := range unlinked {
			if p == u.prefix || strings.HasPrefix(p, u.prefix+"/") {
				t.Errorf("a function links %s: %s", p, u.why)
			}
		}
	}
	for _, p := range linked {
		if !slices.Contains(deps, p) {
			t.Errorf("no function links %s: functions call AWS through the SDK's clients", p)
		}
	}
}

// TestOnlyTheBucketsFunctionsLinkS3: every function imports the media
// package, but app.Load builds no bucket client, so the linker leaves the
// S3 client out of the functions that never use the bucket (ingress, the
// sweeper), about 0.65 MiB of each bootstrap. Read from each binary's
// symbol table; the turn's proves the check sees S3 where it is linked.
func TestOnlyTheBucketsFunctionsLinkS3(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three functions")
	}
	t.Parallel()
	dir := t.TempDir()
	for fn, want := range map[string]bool{"telegram": false, "sweeper": false, "turn": true} {
		bin := filepath.Join(dir, fn)
		build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bin, "../../functions/"+fn)
		build.Env = append(build.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", fn, err, out)
		}
		syms, err := exec.Command("go", "tool", "nm", bin).Output()
		if err != nil {
			t.Fatalf("go tool nm %s: %v", fn, err)
		}
		if got := strings.Contains(string(syms), "aws-sdk-go-v2/service/s3.New"); got != want {
			t.Errorf("%s links the S3 client: %v, want %v", fn, got, want)
		}
	}
}
