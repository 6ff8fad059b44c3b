package discord

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// FuzzReceiverParse feeds any body and X-Signature-Ed25519 through Verify,
// and the body through Parse: neither may panic, only the true signature is
// accepted, refusals wrap the ingress sentinels, and whatever parses is a
// PONG alone, or well-formed events each answered as Discord requires, and
// ignored interactions.
func FuzzReceiverParse(f *testing.F) {
	platformtest.AddSamples(f, eventsDir, "*.json", "00")
	for _, body := range malformed() {
		f.Add(body, "")
	}
	f.Add(interaction(`"type":2,"channel_id":"1","user":{"id":"2","bot":false},"data":{"name":"ask","type":1,"options":[{"name":"text","type":3,"value":"\u0000"}]}`), "zz")
	f.Add(interaction(`"type":3,"channel":{"id":"1","type":3},"member":{"user":{"id":"2"}},"message":{"id":"3"},"data":{"component_type":3,"custom_id":"c","values":["a"]}`), "")
	f.Add([]byte(`{"application_id":"1309000000000000001","id":"18446744073709551615","type":1}`), "")
	f.Add(interaction(`"type":2,"channel_id":"1","user":{"id":"2"},"data":{"name":"ask","type":1,"options":[{"name":"file","type":11,"value":"7"}],"resolved":{"attachments":{"7":{"id":"7","content_type":"audio/ogg","size":-1,"duration_secs":1e308,"width":-5,"url":"https://cdn.discordapp.com/attachments/1/2/a/../../x"}}}}`), "")
	f.Add(interaction(`"type":2,"channel_id":"1","user":{"id":"2"},"data":{"name":"Ask the agent","type":3,"target_id":"5","resolved":{"messages":{"5":{"id":"5","content":"","flags":8192,"attachments":[{},{},{},{},{},{},{},{},{},{},{},{}]}}}}`), "")

	r := testReceiver()
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		req := signed(body, sampleNow, sampleNow)
		if err := r.Verify(req); err != nil {
			t.Fatalf("Verify refused a true signature: %v", err)
		}
		truth := req.Header.Get(SignatureHeader)
		req.Header.Set(SignatureHeader, sig)
		platformtest.CheckVerify(t, r.Verify(req), sig, strings.EqualFold(sig, truth), "")

		p, err := r.Parse(req)
		if err != nil {
			if !errors.Is(err, platform.ErrMalformed) && !errors.Is(err, platform.ErrForbidden) {
				t.Fatalf("Parse error %v wraps neither ErrMalformed nor ErrForbidden", err)
			}
			return
		}
		if p.Reply != nil {
			if string(p.Reply.Body) != `{"type":1}` || len(p.Events)+len(p.Ignored) > 0 || p.Ack != nil {
				t.Fatalf("bad reply %+v", p)
			}
			return
		}
		if len(p.Events)+len(p.Ignored) != 1 {
			t.Fatalf("Parse = %+v: one interaction is one event or one ignored", p)
		}
		for _, ev := range p.Events {
			rc := ev.ReplyContext
			if ev.Account != testApp || ev.Thread.Account != testApp || ev.Thread.Platform != message.Discord || ev.Platform != message.Discord ||
				ev.Thread.Chat == "" || ev.Thread.Thread != "" || ev.Sender.ID == "" || ev.Sender.IsBot || ev.EventID == "" ||
				(ev.ChatType != message.ChatPrivate && ev.ChatType != message.ChatGroup) ||
				rc == nil || !rc.Until.Equal(ev.Time.Add(TokenLife)) {
				t.Fatalf("bad event %+v", ev)
			}
			if _, ok := SnowflakeTime(ev.EventID); !ok {
				t.Fatalf("event id %q is no snowflake", ev.EventID)
			}
			callback, token := splitReplyToken(rc.Token)
			switch ev.Kind {
			case message.KindMessage:
				if (strings.TrimSpace(ev.Text) == "" && len(ev.Attachments) == 0) || len(ev.Attachments) > maxAttachments || ev.Press != nil || callback != DiscordCallbackDeferredChannelMessage || string(p.Ack.Body) != `{"type":5}` {
					t.Fatalf("bad message %+v, ack %s", ev, p.Ack.Body)
				}
			case message.KindAnswer:
				if ev.Press == nil || ev.Press.Data == "" || ev.Press.MessageID == "" || ev.Text != "" ||
					callback != DiscordCallbackDeferredUpdateMessage || string(p.Ack.Body) != `{"type":6}` {
					t.Fatalf("bad answer %+v, ack %s", ev, p.Ack.Body)
				}
			default:
				t.Fatalf("kind %q", ev.Kind)
			}
			if token == "" || p.Within != Within || p.Unavailable == nil {
				t.Fatalf("event without its token, deadline or fallback answer: %+v", p)
			}
		}
		for _, ig := range p.Ignored {
			switch ig.Reason {
			case platform.IgnoredBot, platform.IgnoredNoText, platform.IgnoredUnsupported:
			default:
				t.Fatalf("unknown ignore reason %q", ig.Reason)
			}
			if p.Within != 0 || p.Unavailable != nil {
				t.Fatalf("an ignored interaction waits for durable writes: %+v", p)
			}
		}
	})
}

// FuzzInert: whatever the agent writes, Discord shows it as written (view)
// with nothing of its markdown live, at most twice as long.
func FuzzInert(f *testing.F) {
	for _, s := range []string{
		"", "*b* _i_ ~~s~~ ||x|| `c` [l](https://x.example) <@1> # h\n- l\n1. n\n> q",
		"https://example.com/a_b-c_(d)*x*.", "(https://x.example/a)", "https://a.example<@1>", "\\https://x.example",
		"https://a.example/\u00a0*b*", "https://\u2028x", "x\nhttps://a.example\n-# s", "\xff*\xfe", "😀*",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Inert(s)
		if got := view(out); got != shown(s) {
			t.Fatalf("Inert(%q) = %q shows %q", s, out, got)
		}
		if err := live(out); err != nil {
			t.Fatalf("Inert(%q) = %q: %v", s, out, err)
		}
		if utf8.ValidString(s) && utf8.RuneCountInString(out) > 2*utf8.RuneCountInString(s) {
			t.Fatalf("Inert(%q) = %q more than doubles it", s, out)
		}
	})
}

// TestFuzzSeedsAreTheSamples: the checked-in corpus holds every sample,
// byte for byte, so the fuzzer starts from what Discord sends.
func TestFuzzSeedsAreTheSamples(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(eventsDir, "*.json"))
	for _, file := range files {
		body, _ := os.ReadFile(file)
		name := "sample-" + strings.TrimSuffix(filepath.Base(file), ".json")
		seed, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzReceiverParse", name))
		if err != nil {
			t.Errorf("no seed %s: %v", name, err)
			continue
		}
		if want := corpusFile(body, "00"); string(seed) != want {
			t.Errorf("seed %s is not the sample %s", name, filepath.Base(file))
		}
	}
}

// corpusFile is a seed in the fuzzer's own format (go test fuzz v1).
func corpusFile(body []byte, sig string) string {
	return fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nstring(%q)\n", body, sig)
}
