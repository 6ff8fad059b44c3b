package ingress_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreDoesNotImportTheWebhookCore: the state machines, the stores and
// the parsers sit below the webhook core, so none of them may import it
// (directly or through another package), and neither may the platform
// adapters, which the CDK app imports through the registry.
func TestCoreDoesNotImportTheWebhookCore(t *testing.T) {
	const mod = "github.com/parleyhq/parley/shared/"
	pkgs := []string{"triage", "turn", "delivery", "intent", "store", "store/dynamostore", "envelope", "sweeper",
		"platform", "platform/telegram", "platform/slack", "platform/registry", "message", "resources", "statuses"}
	for _, p := range pkgs {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", mod+p).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", p, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == mod+"ingress" {
				t.Errorf("%s imports the webhook core (shared/ingress)", p)
			}
			// The CDK app's own module builds the registry: it must stay
			// free of the AWS SDK and every outside module but the token
			// libraries Teams and Google Chat verify and sign with (ADR
			// 0016, 0017), each a decision.
			if p == "platform/registry" && !strings.HasPrefix(dep, "github.com/parleyhq/parley/") && !tokenLibrary(dep) {
				t.Errorf("the registry depends on %s", dep)
			}
		}
	}
}

// tokenModules are the outside modules the registry may depend on: the
// JWT and JWKS libraries that verify Teams' and Google Chat's tokens, the
// OAuth clients that get their send tokens, and what those need; and the
// SSRF guard shared/urlfetch dials through, with which an adapter fetches
// a URL from outside (Teams' file uploads, ADR 0021: one package, no
// dependencies of its own).
var tokenModules = []string{
	"github.com/golang-jwt/jwt/v5", "github.com/MicahParks/jwkset", "golang.org/x/time",
	"golang.org/x/oauth2", "cloud.google.com/go/compute/metadata", "code.dny.dev/ssrf",
}

func tokenLibrary(pkg string) bool {
	for _, m := range tokenModules {
		if pkg == m || strings.HasPrefix(pkg, m+"/") {
			return true
		}
	}
	return false
}
