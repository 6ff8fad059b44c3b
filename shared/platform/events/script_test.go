package events_test

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/triage"
)

// TestPostScript runs events/events/post.sh on every sample against the real
// pipeline: the script signs as a Standard Webhooks sender and as GitHub do,
// so what it posts is accepted, and posted twice, deduplicated.
func TestPostScript(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("post.sh needs %s: %v", tool, err)
		}
	}
	h := newHarness(t, triage.Config{})
	h.clock.Set(time.Now()) // the script signs with the real time
	srv := httptest.NewServer(h.events)
	defer srv.Close()
	files, _ := filepath.Glob("../../../events/events/*.json")
	for _, f := range files {
		name := filepath.Base(f)
		want := "enqueued"
		if name == "github-ping.json" {
			want = "ignored/ping"
		}
		for _, again := range []bool{false, true} {
			cmd := exec.Command("bash", "../../../events/events/post.sh", f, srv.URL+"/events")
			cmd.Env = append(os.Environ(), "EVENTS_SECRET="+eventsSecret, "GITHUB_WEBHOOK_SECRET="+githubSecret)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("post.sh %s: %v", name, err)
			}
			r := decode(200, out)
			w := want
			if again && want == "enqueued" {
				w = "duplicate/duplicate"
			}
			if r.outcome() != w {
				t.Errorf("post.sh %s (again: %v): %s, want %s", name, again, out, w)
			}
		}
	}
}
