package coldstart_test

import (
	"os/exec"
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
