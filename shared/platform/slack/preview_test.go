package slack

import (
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// A Slack preview is one message in the thread, its text inert, updated
// in place; clearing deletes it, twice is fine; the interval keeps within
// chat.update's Tier 3.
func TestPreviewIsAMessageUpdatedInPlace(t *testing.T) {
	t.Parallel()
	c, rec := askClient(t)
	th := message.Thread{Platform: message.Slack, Account: team, Chat: "C0PREVIEW1", Thread: "1764432000.000100"}
	p, err := c.Preview(t.Context(), message.Preview{Thread: th, Key: "turn-1"}, "<!channel> writing")
	if err != nil || p.MessageID == "" {
		t.Fatalf("Preview = %+v, %v", p, err)
	}
	if q, err := c.Preview(t.Context(), p, "<!channel> writing more"); err != nil || q != p {
		t.Fatalf("update = %+v, %v", q, err)
	}
	d := rec.Delivered()
	if len(d) != 1 || d[0].Thread != th.Thread || strings.Contains(d[0].Text, "<!channel>") {
		t.Fatalf("delivered %+v: want one inert message in the thread", d)
	}
	if e := rec.Edits(); len(e) != 1 || e[0].MessageID != p.MessageID || strings.Contains(e[0].Text, "<!channel>") {
		t.Fatalf("edits %+v", e)
	}
	for range 2 {
		if err := c.ClearPreview(t.Context(), p); err != nil {
			t.Fatalf("clear: %v", err)
		}
	}
	if del := rec.Deletions(); len(del) != 1 || del[0].MessageID != p.MessageID {
		t.Fatalf("deletions %+v", del)
	}
	if c.PreviewInterval(th) < 1200*time.Millisecond {
		t.Fatal("the interval allows more than 50 updates a minute")
	}
}
