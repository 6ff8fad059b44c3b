package telegram

import (
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// FuzzReceiverParse feeds any body and secret header through Verify and Parse:
// neither may panic, refusals wrap the ingress sentinels, and whatever parses
// is one well-formed event (a message with text, or a press with its data)
// or one ignored update.
func FuzzReceiverParse(f *testing.F) {
	platformtest.AddSamples(f, eventsDir, "*.json", testSecret)
	f.Add([]byte(`{"update_id":1}`), "")
	f.Add([]byte(`{"update_id":-9223372036854775808,"message":{"message_id":1,"chat":{"id":1},"date":-1,"caption":"x"}}`), "x")
	f.Add([]byte(`{"update_id":1,"message":null,"edited_message":null}`), testSecret)
	f.Add([]byte(`{"update_id":1,"callback_query":{"id":"7","from":{"id":1},"message":{"message_id":2,"chat":{"id":-3},"date":0},"data":"x"}}`), testSecret)
	f.Add([]byte(`{"update_id":1,"callback_query":{"id":"","from":{"id":1},"inline_message_id":"AAA","data":"x"}}`), testSecret)
	f.Add([]byte(`{"update_id":1,"callback_query":{"id":"7","from":{"id":0},"message":null}}`), testSecret)

	r, err := NewReceiver(testSecret, testToken)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, secret string) {
		req := request(body, secret)
		req.Oldest = req.Now.Add(-window)
		platformtest.CheckVerify(t, r.Verify(req), secret, secret == testSecret, testSecret)

		p, err := r.Parse(req)
		if err != nil {
			if !errors.Is(err, platform.ErrMalformed) {
				t.Fatalf("Parse error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if (len(p.Events) > 0 && len(p.Ignored) > 0) || len(p.Events)+len(p.Ignored) == 0 || len(p.Ignored) > 1 || p.Reply != nil {
			t.Fatalf("Parse = %+v, want the update's events or one ignored update", p)
		}
		if len(p.Events) > 1 && p.Events[0].Kind != message.KindReaction {
			t.Fatalf("Parse = %+v: only a reaction update makes several events", p)
		}
		for _, ev := range p.Events {
			if ev.EventID == "" || ev.Account != testBotID || ev.Thread.Platform != message.Telegram || ev.Thread.Chat == "" ||
				(ev.ChatType != message.ChatPrivate && ev.ChatType != message.ChatGroup) {
				t.Fatalf("bad event %+v", ev)
			}
			switch ev.Kind {
			case message.KindMessage:
				if (ev.Text == "" && len(ev.Attachments) == 0) || ev.Press != nil {
					t.Fatalf("bad message %+v", ev)
				}
				if len(ev.Attachments) > 1 || (len(ev.Attachments) == 1 && ev.Attachments[0].PlatformID == "") {
					t.Fatalf("attachments %+v: a Telegram message holds one file, which has an id", ev.Attachments)
				}
				if ev.Time.Unix() > 0 && ev.Time.Before(req.Oldest) {
					t.Fatalf("a message of %v, past the dedupe window, is taken", ev.Time)
				}
			case message.KindEdit:
				if ev.MessageID == "" || ev.Press != nil || ev.Reaction != nil {
					t.Fatalf("bad edit %+v", ev)
				}
			case message.KindReaction:
				if r := ev.Reaction; r == nil || r.MessageID == "" || r.Emoji == "" || ev.Text != "" {
					t.Fatalf("bad reaction %+v", ev)
				}
			case message.KindAnswer:
				if pr := ev.Press; pr == nil || pr.Data == "" || pr.MessageID == "" || "cb:"+pr.AckID != ev.EventID || ev.Text != "" {
					t.Fatalf("bad answer %+v, press %+v", ev, pr)
				}
			default:
				t.Fatalf("kind %q", ev.Kind)
			}
			if !strings.HasPrefix(ev.Thread.Key(), "telegram:"+testBotID+":") {
				t.Fatalf("bad thread key %q", ev.Thread.Key())
			}
		}
		platformtest.CheckIgnored(t, p.Ignored, platform.IgnoredBot, platform.IgnoredEdited, platform.IgnoredNoText, platform.IgnoredUnsupported, platform.IgnoredStale)
	})
}
