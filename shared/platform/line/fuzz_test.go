package line

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// FuzzReceiverParse feeds any body and X-Line-Signature through Verify, and
// the body through Parse: neither may panic, only the true signature is
// accepted, refusals wrap the ingress sentinels, and whatever parses is the
// "Verify" reply alone, or one well-formed event or one ignored update per
// event of the batch.
func FuzzReceiverParse(f *testing.F) {
	platformtest.AddSamples(f, eventsDir, "*.json", "AAAA")
	f.Add(event(`{"type":"message","source":{"type":"room","roomId":"R1","userId":"U2"},"message":{"type":"text","id":"1","quoteToken":"q","text":"@😀b x","mention":{"mentionees":[{"index":0,"length":3,"isSelf":true},{"index":-4,"length":99,"isSelf":true}]}},`+base+`}`), "")
	f.Add(event(`{"type":"postback","source":{"type":"group","groupId":"C1"},"postback":{"data":"q:1"},"timestamp":-1,"webhookEventId":"E1","mode":"standby"}`), "====")
	f.Add(event(`{"type":"message","source":{"type":"user","userId":"U1"},"message":{"type":"text","text":"\u0000\ud800"},"timestamp":9223372036854775807,"webhookEventId":"E2"}`), "x")
	f.Add([]byte(`{"destination":"U1","events":[{},7,null,"",[]]}`), "")
	f.Add(event(`{"type":"message","source":{"type":"user","userId":"U1"},"message":{"type":"audio","id":"1","duration":-9223372036854775808,"contentProvider":{"type":"external"}},`+base+`}`), "")
	f.Add(event(`{"type":"message","source":{"type":"user","userId":"U1"},"message":{"type":"file","id":"../x","fileName":"a\u0000.pdf","fileSize":-1},`+base+`}`), "")

	r := &Receiver{ChannelSecret: testSecret}
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		req := signed(body)
		if err := r.Verify(req); err != nil {
			t.Fatalf("Verify refused a true signature: %v", err)
		}
		truth := Sign(testSecret, body)
		req.Header.Set(SignatureHeader, sig)
		got, decodeErr := base64.StdEncoding.DecodeString(strings.TrimSpace(sig))
		platformtest.CheckVerify(t, r.Verify(req), sig, decodeErr == nil && bytes.Equal(got, truth) && sig != "", testSecret)
		req.Header = fakeline.Headers(testSecret, body)
		req.Oldest = req.Now.Add(-window)

		p, err := r.Parse(req)
		if err != nil {
			if st := platform.StatusOf(err); st != 400 && st != 403 && st != 422 {
				t.Fatalf("Parse error %v is not a 4xx sentinel", err)
			}
			return
		}
		var cb struct {
			Destination string            `json:"destination"`
			Events      []json.RawMessage `json:"events"`
		}
		if json.Unmarshal(bytes.TrimSpace(body), &cb) != nil {
			t.Fatalf("Parse took a body that does not decode: %+v", p)
		}
		if p.Reply != nil {
			if p.Reply.Status != 200 || len(cb.Events) != 0 || len(p.Events)+len(p.Ignored) > 0 {
				t.Fatalf("bad reply %+v", p)
			}
			return
		}
		if len(p.Events)+len(p.Ignored) != len(cb.Events) || len(cb.Events) > MaxEvents {
			t.Fatalf("%d events in the body, %d parsed and %d ignored", len(cb.Events), len(p.Events), len(p.Ignored))
		}
		for _, ev := range p.Events {
			if ev.Platform != message.LINE || ev.Account != cb.Destination || ev.Thread.Account != ev.Account ||
				ev.Thread.Platform != message.LINE || !chatID(ev.Thread.Chat) || ev.Thread.Thread != "" ||
				!chatID(ev.EventID) || !chatID(ev.Sender.ID) ||
				(ev.ChatType != message.ChatPrivate && ev.ChatType != message.ChatGroup) ||
				// A one-to-one chat is the user's own.
				(ev.ChatType == message.ChatPrivate && ev.Thread.Chat != ev.Sender.ID) {
				t.Fatalf("bad event %+v", ev)
			}
			if rc := ev.ReplyContext; rc != nil && (rc.Token == "" || !rc.Until.Equal(ev.Time.Add(ReplyTokenValidity))) {
				t.Fatalf("bad reply context %+v of %+v", rc, ev)
			}
			switch ev.Kind {
			case message.KindMessage:
				// Text, or one file; both only for a message sticker.
				sticker := len(ev.Attachments) == 1 && ev.Attachments[0].Kind == message.AttachSticker
				if (strings.TrimSpace(ev.Text) == "" && len(ev.Attachments) == 0) || (ev.Text != "" && len(ev.Attachments) > 0 && !sticker) || ev.Press != nil {
					t.Fatalf("bad message %+v", ev)
				}
				for _, a := range ev.Attachments {
					id := a.PlatformID
					if sticker {
						pkg, st, ok := strings.Cut(id, "/")
						if !ok || !chatID(pkg) || !chatID(st) || a.Reason != message.ReasonNotServed || len(a.Name) > 10*(maxKeyword+2) || !utf8.ValidString(a.Name) {
							t.Fatalf("bad sticker %+v", a)
						}
						continue
					}
					if !chatID(id) || a.Size < 0 || a.Duration < 0 || a.Index != 0 || a.Kind == "" {
						t.Fatalf("bad attachment %+v", a)
					}
				}
			case message.KindDelete:
				if !chatID(ev.MessageID) || ev.Text != "" || ev.Press != nil {
					t.Fatalf("bad deletion %+v", ev)
				}
			case message.KindAnswer:
				if ev.Press == nil || ev.Press.Data == "" || ev.Press.MessageID != "" || ev.Text != "" {
					t.Fatalf("bad answer %+v, press %+v", ev, ev.Press)
				}
			default:
				t.Fatalf("kind %q", ev.Kind)
			}
			if !ev.Time.IsZero() && ev.Time.Location() != time.UTC {
				t.Fatalf("time %v is not UTC", ev.Time)
			}
			if !ev.Time.IsZero() && ev.Time.Before(req.Oldest) {
				t.Fatalf("an event of %v, past the dedupe window, is taken", ev.Time)
			}
		}
		for _, ig := range p.Ignored {
			switch ig.Reason {
			case platform.IgnoredNoText, platform.IgnoredDeleted, platform.IgnoredUnsupported, IgnoredStandby, IgnoredNoSender, platform.IgnoredStale:
			default:
				t.Fatalf("unknown ignore reason %q", ig.Reason)
			}
			if !chatID(ig.ID) {
				t.Fatalf("ignored without its event id: %+v", ig)
			}
		}
	})
}
