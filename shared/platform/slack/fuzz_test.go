package slack

import (
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// FuzzReceiverParse feeds any body and X-Slack-Signature through Verify, and
// the body through Parse: neither may panic, only the true signature is
// accepted, refusals wrap the ingress sentinels, and whatever parses is a
// reply alone, or well-formed events (a message with text; presses, one per
// action of an interactivity form) and ignored updates.
func FuzzReceiverParse(f *testing.F) {
	platformtest.AddSamples(f, eventsDir, "*", "v0=00")
	f.Add(callback(`{"type":"app_mention","user":"U1","text":"<@U0BOT00001|","ts":"1.2","channel":"D1"}`), "v0=")
	f.Add(callback(`{"type":"message","user":"U1","text":"<@U0BOT00001>\u00a0hi","ts":"99999999999999999999.9","channel":"C1"}`), "")
	f.Add([]byte(`{"type":"event_callback","team_id":"T","event":{}}`), "v1=ab")
	f.Add(callback(`{"type":"message","subtype":"file_share","user":"U1","text":"","ts":"1.2","channel":"C1","files":[{"id":"F1","mode":"hosted","subtype":"slack_audio","duration_ms":-9},{"mode":"hosted"},{"id":"F2","mode":"tombstone"}]}`), "")
	f.Add(interaction(`{"type":"block_actions","user":{"id":"U1","team_id":"T1"},"container":{"type":"message","message_ts":"1.1","channel_id":"D1","thread_ts":"1.1"},"actions":[{"value":"a","action_ts":"1.2"},{"action_ts":"1.3"},{"selected_option":{"value":"b"},"action_ts":"x"}]}`), "v0=")
	f.Add(interaction(`{"type":"block_actions","container":{"type":"view","view_id":"V1"}}`), "")
	f.Add([]byte(`payload=%7B%7D&payload=`), "v0=00")

	r := &Receiver{SigningSecret: testSecret}
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		req := signed(body, sampleNow, sampleNow)
		if err := r.Verify(req); err != nil {
			t.Fatalf("Verify refused a true signature: %v", err)
		}
		truth := req.Header.Get(SignatureHeader)
		req.Header.Set(SignatureHeader, sig)
		platformtest.CheckVerify(t, r.Verify(req), sig, strings.EqualFold(sig, truth), testSecret)

		p, err := r.Parse(req)
		if err != nil {
			if !errors.Is(err, platform.ErrMalformed) {
				t.Fatalf("Parse error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if p.Reply != nil {
			if p.Reply.Status != 200 || len(p.Reply.Body) == 0 || len(p.Events)+len(p.Ignored) > 0 {
				t.Fatalf("bad reply %+v", p)
			}
			return
		}
		if len(p.Events)+len(p.Ignored) == 0 {
			t.Fatalf("Parse = %+v: nothing parsed, nothing ignored", p)
		}
		answers := 0
		for _, ev := range p.Events {
			if ev.Account == "" || ev.Thread.Account != ev.Account || ev.Thread.Platform != message.Slack ||
				ev.Thread.Chat == "" || ev.Sender.ID == "" ||
				(ev.ChatType != message.ChatPrivate && ev.ChatType != message.ChatGroup) {
				t.Fatalf("bad event %+v", ev)
			}
			switch ev.Kind {
			case message.KindMessage:
				if (strings.TrimSpace(ev.Text) == "" && len(ev.Attachments) == 0) || ev.EventID != ev.Thread.Chat+":"+ev.MessageID || ev.MessageID == "" || ev.Press != nil {
					t.Fatalf("bad message %+v", ev)
				}
			case message.KindEdit, message.KindDelete:
				if ev.MessageID == "" || ev.Press != nil || ev.Reaction != nil {
					t.Fatalf("bad edit or deletion %+v", ev)
				}
			case message.KindReaction:
				if r := ev.Reaction; r == nil || r.MessageID == "" || r.Emoji == "" || ev.Text != "" {
					t.Fatalf("bad reaction %+v", ev)
				}
			case message.KindAnswer:
				answers++
				pr := ev.Press
				if pr == nil || pr.Data == "" || pr.MessageID == "" || ev.Text != "" ||
					!strings.HasPrefix(ev.EventID, ev.Thread.Chat+":"+pr.MessageID+":") || ev.Thread.Thread == pr.MessageID {
					t.Fatalf("bad answer %+v, press %+v", ev, pr)
				}
			default:
				t.Fatalf("kind %q", ev.Kind)
			}
		}
		if (answers > 0) != (p.Within > 0) {
			t.Fatalf("%d presses, Within %s: Slack waits 3 s for the answer to a press", answers, p.Within)
		}
		platformtest.CheckIgnored(t, p.Ignored, platform.IgnoredBot, platform.IgnoredEdited, platform.IgnoredDeleted, platform.IgnoredNoText, platform.IgnoredUnsupported)
	})
}
