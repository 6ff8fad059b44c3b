package coldstart_test

import (
	"os/exec"
	"strings"
	"testing"
)

// unlinked are the packages no function may link, for what their package
// initialisation adds to every cold start (docs/capacity.md, ADR 0012): the
// SDK's config loader (it links the SSO, OIDC, sign-in and STS clients), the
// SQS and Secrets Manager clients (package awsjson calls both), and any
// service's schema-based (de)serialisation, whose operation schemas are
// built at init (DynamoDB's alone took 2.8 ms). A module upgrade that brings
// one back fails here rather than in a cold start.
var unlinked = []struct{ prefix, why string }{
	{"github.com/aws/aws-sdk-go-v2/config", "functions build their configuration with shared/awsenv"},
	{"github.com/aws/aws-sdk-go-v2/service/sso", "linked only by the SDK's config loader"},
	{"github.com/aws/aws-sdk-go-v2/service/sts", "linked only by the SDK's config loader"},
	{"github.com/aws/aws-sdk-go-v2/service/sqs", "functions call SQS with shared/awsjson"},
	{"github.com/aws/aws-sdk-go-v2/service/secretsmanager", "functions call Secrets Manager with shared/awsjson"},
}

// schemaSuffix names a service client's generated schemas package.
const schemaSuffix = "/schemas"

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
		if strings.HasPrefix(p, "github.com/aws/aws-sdk-go-v2/service/") && strings.HasSuffix(p, schemaSuffix) {
			t.Errorf("a function links %s: schema-based (de)serialisation builds its schemas at init; keep the service's module at its last release without it (ADR 0012)", p)
		}
		for _, u := range unlinked {
			if p == u.prefix || strings.HasPrefix(p, u.prefix+"/") {
				t.Errorf("a function links %s: %s", p, u.why)
			}
		}
	}
}
