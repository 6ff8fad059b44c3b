package coldstart_test

import (
	"os/exec"
	"strings"
	"testing"
)

// unlinked are the packages no function may link, for what their package
// initialisation and first use add to every cold start (docs/capacity.md,
// ADR 0012): every service client of the SDK (DynamoDB, SQS and Secrets
// Manager are called over the JSON protocol by packages ddb and awsjson; the
// clients' endpoint tables, operation schemas and middleware were most of a
// cold start beyond a hello world's), the SDK's feature modules
// (attributevalue links the DynamoDB Streams client), and its config loader
// (it links the SSO, OIDC, sign-in and STS clients). The SDK's core modules
// (signing, credentials) are what functions use of it. Nor test helpers:
// net/http/httptest links flag and a test certificate. A module upgrade or
// an import that brings one of these back fails here rather than in a cold
// start.
var unlinked = []struct{ prefix, why string }{
	{"github.com/aws/aws-sdk-go-v2/service", "functions call AWS services with shared/ddb and shared/awsjson"},
	{"github.com/aws/aws-sdk-go-v2/feature", "shared/ddb encodes items itself"},
	{"github.com/aws/aws-sdk-go-v2/config", "functions build their configuration with shared/awsenv"},
	{"net/http/httptest", "shared/functionurl answers from a response of its own"},
	{"testing", "test helpers belong in _test files and localstack/"},
}

func TestFunctionsLinkNoColdStartWeight(t *testing.T) {
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
}
