package slack

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/message"
)

// FuzzReceiverParse feeds any body and X-Slack-Signature through Verify, and
// the body through Parse: neither may panic, only the true signature is
// accepted, refusals wrap the ingress sentinels, and whatever parses is one
// reply, one well-formed event or one ignored update.
func FuzzReceiverParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(eventsDir, "*.json"))
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, "v0=00")
	}
	f.Add(callback(`{"type":"app_mention","user":"U1","text":"<@U0BOT00001|","ts":"1.2","channel":"D1"}`), "v0=")
	f.Add(callback(`{"type":"message","user":"U1","text":"<@U0BOT00001>\u00a0hi","ts":"99999999999999999999.9","channel":"C1"}`), "")
	f.Add([]byte(`{"type":"event_callback","team_id":"T","event":{}}`), "v1=ab")

	r := &Receiver{SigningSecret: testSecret}
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		req := signed(body, sampleNow, sampleNow)
		if err := r.Verify(req); err != nil {
			t.Fatalf("Verify refused a true signature: %v", err)
		}
		truth := req.Header.Get(SignatureHeader)
		req.Header.Set(SignatureHeader, sig)
		err := r.Verify(req)
		switch {
		case strings.EqualFold(sig, truth) && err != nil:
			t.Fatalf("Verify refused the true signature %q: %v", sig, err)
		case !strings.EqualFold(sig, truth) && !errors.Is(err, ingress.ErrUnauthorized):
			t.Fatalf("Verify(%q) = %v, want ErrUnauthorized", sig, err)
		}
		if err != nil && strings.Contains(err.Error(), testSecret) {
			t.Fatalf("error leaks the secret: %v", err)
		}

		p, err := r.Parse(req)
		if err != nil {
			if !errors.Is(err, ingress.ErrMalformed) {
				t.Fatalf("Parse error %v does not wrap ErrMalformed", err)
			}
			return
		}
		n := len(p.Events) + len(p.Ignored)
		if p.Reply != nil {
			n++
			if p.Reply.Status != 200 || len(p.Reply.Body) == 0 {
				t.Fatalf("bad reply %+v", p.Reply)
			}
		}
		if n != 1 {
			t.Fatalf("Parse = %+v, want exactly one reply, event or ignored update", p)
		}
		for _, ev := range p.Events {
			if ev.Account == "" || ev.Kind != message.KindMessage || strings.TrimSpace(ev.Text) == "" ||
				ev.EventID != ev.Thread.Chat+":"+ev.MessageID || ev.Thread.Platform != message.Slack ||
				ev.Thread.Chat == "" || ev.MessageID == "" || ev.Sender.ID == "" ||
				(ev.ChatType != message.ChatPrivate && ev.ChatType != message.ChatGroup) {
				t.Fatalf("bad event %+v", ev)
			}
		}
		for _, ig := range p.Ignored {
			switch ig.Reason {
			case ingress.IgnoredBot, ingress.IgnoredEdited, ingress.IgnoredDeleted, ingress.IgnoredNoText, ingress.IgnoredUnsupported:
			default:
				t.Fatalf("unknown ignore reason %q", ig.Reason)
			}
		}
	})
}
