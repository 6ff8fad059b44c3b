package discord

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/shared/message"
)

func livePreview(rc *message.ReplyContext) message.Preview {
	return message.Preview{Thread: guild, Key: "intent0", ReplyContext: rc}
}

// visible is what the guild channel shows now.
func (e *env) visible() []string {
	var out []string
	for _, d := range e.rec.Visible(message.Discord, guildChannel) {
		out = append(out, d.Text)
	}
	return out
}

// TestPreviewEditsTheDeferredResponse: a command's preview is its deferred
// response, edited through the interaction's token, its text inert and
// pinging no one; the reply's first bubble finalizes it in place, and the
// next bubble is a follow-up. One message besides the follow-up.
func TestPreviewEditsTheDeferredResponse(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	rc, tok := command()
	pv, err := e.c.Preview(t.Context(), livePreview(rc), "looking @everyone *up*")
	if err != nil || pv.MessageID == "" {
		t.Fatalf("Preview: %+v, %v", pv, err)
	}
	e.clock.Set(at(1, 3))
	again, err := e.c.Preview(t.Context(), pv, "looking up flights")
	if err != nil || again.MessageID != pv.MessageID {
		t.Fatalf("second Preview: %+v, %v", again, err)
	}
	if err := e.c.FinalizePreview(t.Context(), again, message.Text("Your flight moved.")); err != nil {
		t.Fatalf("FinalizePreview: %v", err)
	}
	if _, err := e.c.Send(t.Context(), bubble(1, rc, "Gate B12.")); err != nil {
		t.Fatalf("second bubble: %v", err)
	}
	calls := e.all()
	for i, c := range calls[:3] {
		if c.method != "PATCH" || c.path != "/webhooks/"+testApp+"/"+tok+"/messages/@original" || c.auth != "" {
			t.Fatalf("call %d: %+v", i, c)
		}
		if string(c.body["allowed_mentions"]) != `{"parse":[],"replied_user":false}` {
			t.Fatalf("call %d mentions %s", i, c.body["allowed_mentions"])
		}
	}
	if got := str(calls[0].body["content"]); !strings.Contains(got, `\*up\*`) {
		t.Fatalf("preview content %q: markup not made inert", got)
	}
	if v := e.visible(); !slices.Equal(v, []string{"Your flight moved.", "Gate B12."}) {
		t.Fatalf("the channel shows %q", v)
	}
}

// TestNoPreviewWithoutADeferredResponse: a press's reply (its @original is
// the pressed message), a proactive event's and one past its token's life
// show no preview, and call nothing.
func TestNoPreviewWithoutADeferredResponse(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	pressed, _ := press()
	stale, _ := command()
	stale.Until = at(1, 30) // within TokenMargin of the clock's 16:01:00
	for name, rc := range map[string]*message.ReplyContext{"press": pressed, "proactive": nil, "stale": stale} {
		pv, err := e.c.Preview(t.Context(), livePreview(rc), "thinking")
		if err != nil || pv.MessageID != "" {
			t.Fatalf("%s: %+v, %v", name, pv, err)
		}
	}
	if n := len(e.all()); n != 0 {
		t.Fatalf("%d calls", n)
	}
}

// TestPreviewAfterTheTokensLife: a preview shown while the token lived is
// edited, finalized and cleared with the bot token once it has expired.
func TestPreviewAfterTheTokensLife(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	rc, _ := command()
	pv, err := e.c.Preview(t.Context(), livePreview(rc), "thinking")
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Set(at(16, 0))
	if _, err := e.c.Preview(t.Context(), pv, "still thinking"); err != nil {
		t.Fatalf("Preview: %v", err)
	}
	if err := e.c.FinalizePreview(t.Context(), pv, message.Text("done")); err != nil {
		t.Fatalf("FinalizePreview: %v", err)
	}
	calls := e.all()
	for _, c := range calls[1:] {
		if c.method != "PATCH" || c.path != "/channels/"+guildChannel+"/messages/"+pv.MessageID || c.auth != "Bot "+testToken {
			t.Fatalf("call %+v", c)
		}
	}
	if err := e.c.ClearPreview(t.Context(), pv); err != nil {
		t.Fatalf("ClearPreview: %v", err)
	}
	if c := e.all()[len(e.all())-1]; c.method != "DELETE" || c.path != "/channels/"+guildChannel+"/messages/"+pv.MessageID || c.auth != "Bot "+testToken {
		t.Fatalf("delete %+v", c)
	}
	if v := e.visible(); len(v) != 0 {
		t.Fatalf("the channel shows %q", v)
	}
}

// TestClearPreviewThenTheReply: a cleared preview deletes the deferred
// response; clearing it again succeeds; the reply's first bubble (a
// question, which cannot finalize a preview) then answers as a follow-up,
// as @original is gone.
func TestClearPreviewThenTheReply(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	rc, tok := command()
	pv, err := e.c.Preview(t.Context(), livePreview(rc), "thinking")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := e.c.ClearPreview(t.Context(), pv); err != nil {
			t.Fatalf("ClearPreview: %v", err)
		}
	}
	calls := e.all()
	if c := calls[1]; c.method != "DELETE" || c.path != "/webhooks/"+testApp+"/"+tok+"/messages/@original" || c.auth != "" {
		t.Fatalf("delete %+v", c)
	}
	if d := e.rec.Deletions(); len(d) != 1 || d[0].MessageID != pv.MessageID {
		t.Fatalf("deletions %+v", d)
	}
	rcp, err := e.c.Send(t.Context(), bubble(0, rc, "Which seat?"))
	if err != nil || len(rcp.MessageIDs) != 1 || rcp.MessageIDs[0] == pv.MessageID {
		t.Fatalf("first bubble: %+v, %v", rcp, err)
	}
	if last := e.all()[len(e.all())-1]; last.method != "POST" || last.path != "/webhooks/"+testApp+"/"+tok {
		t.Fatalf("first bubble went %+v", last)
	}
	if v := e.visible(); !slices.Equal(v, []string{"Which seat?"}) {
		t.Fatalf("the channel shows %q", v)
	}
}

// TestPreviewEditsAreRateLimited: past Discord's edits of an interaction's
// messages a window, an edit is refused as rate_limit with Discord's
// retry_after, which the pump holds the next update back by.
func TestPreviewEditsAreRateLimited(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	rc, _ := command()
	pv := livePreview(rc)
	var err error
	for range fakediscord.EditsPerWindow {
		if pv, err = e.c.Preview(t.Context(), pv, "x"); err != nil {
			t.Fatal(err)
		}
	}
	_, err = e.c.Preview(t.Context(), pv, "one too many")
	if se := sendErr(t, err, message.FailRateLimit); se.RetryAfter != fakediscord.EditWindow {
		t.Fatalf("retry after %s", se.RetryAfter)
	}
	e.clock.Set(at(1, 0).Add(fakediscord.EditWindow))
	if _, err := e.c.Preview(t.Context(), pv, "later"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	if PreviewInterval*fakediscord.EditsPerWindow < 2*fakediscord.EditWindow-time.Second {
		t.Fatalf("a preview every %s takes more than half of %d edits per %s", PreviewInterval, fakediscord.EditsPerWindow, fakediscord.EditWindow)
	}
}
