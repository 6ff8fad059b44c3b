package telegram

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/message"
)

// FuzzReceiverParse feeds any body and secret header through Verify and Parse:
// neither may panic, refusals wrap the ingress sentinels, and whatever parses
// is one well-formed event or one ignored update.
func FuzzReceiverParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(eventsDir, "*.json"))
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, testSecret)
	}
	f.Add([]byte(`{"update_id":1}`), "")
	f.Add([]byte(`{"update_id":-9223372036854775808,"message":{"message_id":1,"chat":{"id":1},"date":-1,"caption":"x"}}`), "x")
	f.Add([]byte(`{"update_id":1,"message":null,"edited_message":null}`), testSecret)

	r, err := NewReceiver(testSecret, testToken)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, secret string) {
		req := request(body, secret)
		err := r.Verify(req)
		switch {
		case secret == testSecret && err != nil:
			t.Fatalf("Verify refused the right secret: %v", err)
		case secret != testSecret && !errors.Is(err, ingress.ErrUnauthorized):
			t.Fatalf("Verify(%q) = %v, want ErrUnauthorized", secret, err)
		}

		p, err := r.Parse(req)
		if err != nil {
			if !errors.Is(err, ingress.ErrMalformed) {
				t.Fatalf("Parse error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if len(p.Events)+len(p.Ignored) != 1 || p.Reply != nil {
			t.Fatalf("Parse = %+v, want one event or one ignored update", p)
		}
		for _, ev := range p.Events {
			if ev.EventID == "" || ev.Account != testBotID || ev.Kind != message.KindMessage || ev.Text == "" ||
				ev.Thread.Platform != message.Telegram || ev.Thread.Chat == "" ||
				(ev.ChatType != message.ChatPrivate && ev.ChatType != message.ChatGroup) {
				t.Fatalf("bad event %+v", ev)
			}
			if !strings.HasPrefix(ev.Thread.Key(), "telegram:"+testBotID+":") {
				t.Fatalf("bad thread key %q", ev.Thread.Key())
			}
		}
		for _, ig := range p.Ignored {
			switch ig.Reason {
			case ingress.IgnoredBot, ingress.IgnoredEdited, ingress.IgnoredNoText, ingress.IgnoredUnsupported:
			default:
				t.Fatalf("unknown ignore reason %q", ig.Reason)
			}
		}
	})
}
