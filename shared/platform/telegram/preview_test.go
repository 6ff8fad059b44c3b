package telegram

import (
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// A private chat's preview is a draft, under one draft id per turn key, and
// inert; there is nothing to clear. Drafts faster than once a second are
// refused 429 by the fake, as the interval the adapter asks for prevents.
func TestPreviewPrivateIsADraft(t *testing.T) {
	t.Parallel()
	c, rec := askClient(t)
	p := message.Preview{Thread: message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"}, Key: "turn-1"}
	got, err := c.Preview(t.Context(), p, "<b>hi</b> @all")
	if err != nil || got != p {
		t.Fatalf("Preview = %+v, %v", got, err)
	}
	_, err = c.Preview(t.Context(), p, "<b>hi</b> @all, more")
	var se *message.SendError
	if !errors.As(err, &se) || se.Class != message.FailRateLimit || se.RetryAfter <= 0 {
		t.Fatalf("a second draft within a second: %v, want rate_limit", err)
	}
	d := rec.Drafts()
	if len(d) != 1 || d[0].Text != "<b>hi</b> @all" || d[0].DraftID == "" || d[0].DraftID == "0" {
		t.Fatalf("drafts %+v", d)
	}
	if _, ok := d[0].Args["parse_mode"]; ok {
		t.Fatal("a draft went with parse_mode")
	}
	if _, err := c.Preview(t.Context(), message.Preview{Thread: message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "43"}, Key: "turn-2"}, "x"); err != nil {
		t.Fatal(err)
	}
	if d := rec.Drafts(); len(d) != 2 || d[1].DraftID == d[0].DraftID {
		t.Fatalf("two turns share a draft id: %+v", d)
	}
	if err := c.ClearPreview(t.Context(), p); err != nil || len(rec.Deletions()) != 0 {
		t.Fatalf("clearing a draft: %v, deletions %v", err, rec.Deletions())
	}
	if c.PreviewInterval(p.Thread) < time.Second {
		t.Fatal("a private chat's interval is under a second")
	}
}

// A group's preview is a message quoting the person, edited after; an edit
// to the text it has is no error (a retried edit); clearing deletes it,
// twice is fine; an edit of a deleted message is not_found.
func TestPreviewGroupIsAMessage(t *testing.T) {
	t.Parallel()
	c, rec := askClient(t)
	th := message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "-1001234"}
	p, err := c.Preview(t.Context(), message.Preview{Thread: th, Key: "turn-1", ReplyTo: "77"}, "wri")
	if err != nil || p.MessageID == "" {
		t.Fatalf("Preview = %+v, %v", p, err)
	}
	if q, err := c.Preview(t.Context(), p, "writing"); err != nil || q != p {
		t.Fatalf("update = %+v, %v", q, err)
	}
	if err := c.Edit(t.Context(), th, p.MessageID, message.Text("writing")); err != nil {
		t.Fatalf("an edit to the same text: %v", err)
	}
	if d := rec.Delivered(); len(d) != 1 || d[0].ReplyTo != "77" {
		t.Fatalf("delivered %+v", d)
	}
	if e := rec.Edits(); len(e) != 1 || e[0].Text != "writing" {
		t.Fatalf("edits %+v", e)
	}
	for range 2 {
		if err := c.ClearPreview(t.Context(), p); err != nil {
			t.Fatalf("clear: %v", err)
		}
	}
	if d := rec.Deletions(); len(d) != 1 || d[0].MessageID != p.MessageID {
		t.Fatalf("deletions %+v", d)
	}
	err = c.Edit(t.Context(), th, p.MessageID, message.Text("final"))
	var se *message.SendError
	if !errors.As(err, &se) || se.Class != message.FailNotFound {
		t.Fatalf("edit of a deleted message: %v, want not_found", err)
	}
	if c.PreviewInterval(th) < 3*time.Second {
		t.Fatal("a group's interval allows more than 20 a minute")
	}
}
