package whatsapp

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyTheStandardLibraryAndTheContract: the CDK app builds the
// registry, which imports every adapter, so an adapter may import the
// standard library and this repository's contract packages only: no SDK,
// no outside module, never the webhook core.
func TestImportsOnlyTheStandardLibraryAndTheContract(t *testing.T) {
	t.Parallel()
	const mod = "github.com/parleyhq/parley/"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", mod+"shared/platform/whatsapp").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{
		mod + "shared/platform/whatsapp": true,
		mod + "shared/platform":          true,
		mod + "shared/message":           true,
	}
	for _, dep := range strings.Fields(string(out)) {
		if !allowed[dep] {
			t.Errorf("the adapter depends on %s", dep)
		}
	}
}
