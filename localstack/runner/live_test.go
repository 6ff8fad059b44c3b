package runner_test

import (
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
)

// telegramGroupUpdate builds a supergroup text message update from user.
func telegramGroupUpdate(updateID int, chat, user int64, text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"update_id": updateID,
		"message": map[string]any{
			"message_id": updateID % 1_000_000, "date": time.Now().Unix(), "text": text,
			"from": map[string]any{"id": user, "is_bot": false, "first_name": "Ada"},
			"chat": map[string]any{"id": chat, "type": "supergroup", "title": "Crew"},
		},
	})
	return b
}

// Telegram, private chat: the echo agent's /stream shows as drafts while it
// writes, then exactly one sendMessage per final bubble; no message is
// edited or deleted.
func TestLiveTelegramPrivateDrafts(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.echo.StreamPause = 300 * time.Millisecond
	const chat = 5550001
	if code, body := h.postTelegram(telegramUpdate(910001, chat, "/stream your flight moved")); code != 200 {
		t.Fatalf("webhook: %d %s", code, body)
	}
	got := h.waitDelivered(2, 30*time.Second)
	h.quiesce(20 * time.Second)
	if all := h.fake.Delivered(); len(all) != 2 || !slices.Equal(texts(all), []string{"echo: your flight moved", "streamed in 4 deltas"}) {
		t.Fatalf("delivered %q, want the two final bubbles once each", texts(all))
	}
	rec := h.fake.Recorder()
	drafts := rec.Drafts()
	if len(drafts) == 0 {
		t.Fatal("no draft was shown while the agent wrote")
	}
	for i, d := range drafts {
		if d.Chat != "5550001" || d.DraftID != drafts[0].DraftID || d.DraftID == "0" {
			t.Fatalf("draft %d: %+v", i, d)
		}
		if d.At.After(got[0].At) {
			t.Fatalf("draft %d came after the reply", i)
		}
		if i > 0 && d.At.Sub(drafts[i-1].At) < 900*time.Millisecond {
			t.Fatalf("drafts %d and %d %s apart: over the private chat's rate", i-1, i, d.At.Sub(drafts[i-1].At))
		}
	}
	if !strings.HasPrefix(drafts[0].Text, "… thinking") && !strings.HasPrefix(drafts[0].Text, "echo:") {
		t.Fatalf("first draft %q", drafts[0].Text)
	}
	if len(rec.Edits()) != 0 || len(rec.Deletions()) != 0 {
		t.Fatalf("edits %v, deletions %v: a draft needs neither", rec.Edits(), rec.Deletions())
	}
}

// Telegram, group: one preview message, quoting the person, edited while
// the agent writes (at most every 3 seconds) and ending as the first final
// bubble; the rest is sent after it. Nothing stale stays.
func TestLiveTelegramGroupEditsInPlace(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.echo.StreamPause = 900 * time.Millisecond
	const chat = -1001000000091
	if code, body := h.postTelegram(telegramGroupUpdate(910101, chat, 5550002, "/stream gate B12 now")); code != 200 {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitDelivered(2, 30*time.Second)
	h.quiesce(20 * time.Second)
	rec := h.fake.Recorder()
	all := h.fake.Delivered()
	if len(all) != 2 {
		t.Fatalf("delivered %q: want the preview and the second bubble", texts(all))
	}
	preview := all[0]
	if preview.ReplyTo != "910101" {
		t.Fatalf("the preview quotes %q, want the person's message", preview.ReplyTo)
	}
	visible := texts(rec.Visible(message.Telegram, "-1001000000091"))
	if !slices.Equal(visible, []string{"echo: gate B12 now", "streamed in 4 deltas"}) {
		t.Fatalf("the group shows %q", visible)
	}
	edits := rec.Edits()
	if len(edits) < 2 {
		t.Fatalf("%d edits: want the preview edited while written, then into the first bubble", len(edits))
	}
	for i, e := range edits {
		if e.MessageID != preview.MessageID {
			t.Fatalf("edit %d of message %s, not the preview %s", i, e.MessageID, preview.MessageID)
		}
		if i > 0 && e.At.Sub(edits[i-1].At) < time.Second {
			t.Fatalf("edits %d and %d %s apart", i-1, i, e.At.Sub(edits[i-1].At))
		}
	}
	if all[1].At.Before(edits[len(edits)-1].At) {
		t.Fatal("the second bubble came before the first finalized the preview")
	}
	in := h.intentFor("evt#telegram#" + tgBotID + "#910101")
	if in.Units[0].State != message.UnitSent || len(in.Units[0].Receipt) != 1 || in.Units[0].Receipt[0] != preview.MessageID {
		t.Fatalf("first unit %+v: want sent, its receipt the preview's message", in.Units[0])
	}
	if len(rec.Deletions()) != 0 {
		t.Fatalf("deletions %v", rec.Deletions())
	}
}

// A silent final clears a group's preview: nothing stays.
func TestLiveTelegramSilentClearsPreview(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.stream = func(req agent.TurnRequest) ([]string, bool, bool) {
		return []string{
			`{"type":"delta","text":"let me see"}`,
			`{"type":"final","envelope":{"schema":"openab.turn.v1","messages":[{"id":"a","text":"never sent"}],"next":{"type":"silent"}}}`,
		}, false, true
	}
	const chat = -1001000000092
	if code, body := h.postTelegram(telegramGroupUpdate(910201, chat, 5550003, "anything?")); code != 200 {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitDelivered(1, 30*time.Second)
	h.quiesce(20 * time.Second)
	rec := h.fake.Recorder()
	if v := rec.Visible(message.Telegram, "-1001000000092"); len(v) != 0 {
		t.Fatalf("the group still shows %q", texts(v))
	}
	if d := rec.Deletions(); len(d) != 1 {
		t.Fatalf("deletions %v: want the preview's", d)
	}
}

// A turn whose stream broke off after its preview was shown is retried, and
// the retried turn takes the preview over: it is edited again and becomes
// the first bubble. One message, one final, nothing stale.
func TestLiveRetriedTurnTakesThePreviewOver(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	var calls atomic.Int32
	h.agent.stream = func(req agent.TurnRequest) ([]string, bool, bool) {
		if calls.Add(1) == 1 {
			return []string{`{"type":"delta","text":"first try"}`}, true, true
		}
		return []string{
			`{"type":"delta","text":"second "}`,
			`{"type":"delta","text":"try"}`,
			`{"type":"final","text":"second try, final"}`,
		}, false, true
	}
	const chat = -1001000000093
	if code, body := h.postTelegram(telegramGroupUpdate(910301, chat, 5550004, "go")); code != 200 {
		t.Fatalf("webhook: %d %s", code, body)
	}
	deadline := time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) {
		v := h.fake.Recorder().Visible(message.Telegram, "-1001000000093")
		if len(v) == 1 && v[0].Text == "second try, final" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	h.quiesce(20 * time.Second)
	rec := h.fake.Recorder()
	all := h.fake.Delivered()
	if calls.Load() != 2 || len(all) != 1 {
		t.Fatalf("%d agent calls, delivered %q: want 2 calls and the one preview message", calls.Load(), texts(all))
	}
	if v := texts(rec.Visible(message.Telegram, "-1001000000093")); !slices.Equal(v, []string{"second try, final"}) {
		t.Fatalf("the group shows %q", v)
	}
	for _, e := range rec.Edits() {
		if e.MessageID != all[0].MessageID {
			t.Fatalf("edit of %s, not the preview %s", e.MessageID, all[0].MessageID)
		}
	}
	if len(rec.Deletions()) != 0 {
		t.Fatalf("deletions %v", rec.Deletions())
	}
}
