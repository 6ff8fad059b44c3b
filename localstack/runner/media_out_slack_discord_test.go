package runner_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/discord"
)

var (
	chartPNG = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{7}, 3000)...)
	// overDiscord is one byte over what Discord takes from a bot.
	overDiscord = append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("x"), discord.MaxUpload)...)
)

// filesHarness starts a harness whose delivery may fetch the agent's URLs
// on a TLS server of the test (opted in as a local stack would be), which
// serves chartPNG at /chart.png and overDiscord at /big.pdf; it returns
// the server's root.
func filesHarness(t *testing.T) (*harness, string) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/chart.png":
			_, _ = w.Write(chartPNG)
		case "/big.pdf":
			_, _ = w.Write(overDiscord)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	h := start(t, options{env: map[string]string{"PARLEY_MAX_BUBBLES": "8"}, fetch: fetchFrom(t, srv, 12<<20)})
	return h, srv.URL
}

// fileMix has the agent answer every turn with text, an image by its URL
// (captioned), text, a file and a voice note uploaded through POST /media,
// and a closing text.
func fileMix(h *harness, root string) (doc, voice string) {
	doc = h.upload("up-"+strings.ReplaceAll(h.t.Name(), "/", "-")+"-doc", "application/pdf", pdfFile)
	voice = h.upload("up-"+strings.ReplaceAll(h.t.Name(), "/", "-")+"-voice", "audio/ogg", oggVoice)
	h.agent.answer = func(agent.TurnRequest) (string, bool) {
		return `{"schema":"openab.turn.v1","messages":[` +
			`{"id":"a","text":"here you go"},` +
			`{"id":"chart","media":{"kind":"image","url":"` + root + `/chart.png","caption":"the <!channel> *chart* @everyone"}},` +
			`{"id":"b","text":"and the report"},` +
			`{"id":"doc","media":{"kind":"file","upload_id":"` + doc + `","name":"report.pdf"}},` +
			`{"id":"note","media":{"kind":"voice","upload_id":"` + voice + `"}},` +
			`{"id":"z","text":"that's all"}]}`, true
	}
	return doc, voice
}

// checkFiles checks that the deliveries at image, doc and note carry the
// exact bytes of the chart, the report and the voice note, by name.
func checkFiles(t *testing.T, got []fakeplatform.Delivery, image, doc, note int) {
	t.Helper()
	for _, c := range []struct {
		i          int
		body       []byte
		name, kind string
	}{{image, chartPNG, "chart.png", "image"}, {doc, pdfFile, "report.pdf", "file"}, {note, oggVoice, "voice.ogg", "voice"}} {
		d := got[c.i]
		if arg(d, fakeapi.ArgSHA256) != sha(c.body) || arg(d, fakeapi.ArgFileName) != c.name {
			t.Errorf("the %s went as %q (sha %s), want the exact bytes named %s", c.kind, arg(d, fakeapi.ArgFileName), arg(d, fakeapi.ArgSHA256), c.name)
		}
	}
}

// slackChannel is a person's message mentioning the bot in a channel,
// which Parley answers in a thread on it.
func slackChannel(ts, text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": "T0TEAM0001", "api_app_id": "A0APP00001",
		"event_id": "Ev" + strings.ReplaceAll(ts, ".", ""), "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{"team_id": "T0TEAM0001", "user_id": "U0BOT00001", "is_bot": true}},
		"event": map[string]any{
			"type": "message", "channel": "C0CHAN0001", "channel_type": "channel", "user": "U0ADA00001",
			"text": "<@U0BOT00001> " + text, "ts": ts,
		},
	})
	return b
}

// TestMediaBubblesReachSlackNatively: an image by the agent's URL, a file
// and a voice note uploaded through POST /media, between text bubbles,
// are uploaded to Slack and shared into the conversation's thread, in
// order, once, with their exact bytes; the caption is the file message's
// text, inert. A redelivered event sends nothing twice.
func TestMediaBubblesReachSlackNatively(t *testing.T) {
	t.Parallel()
	h, root := filesHarness(t)
	fileMix(h, root)
	const ts = "1764433100.000100"
	post := func() {
		if code, body := h.postSlack(slackChannel(ts, "files please")); code != http.StatusOK {
			t.Fatalf("event: %d %s", code, body)
		}
	}
	post()
	got := h.settled([]string{"here you go", "the &lt;!channel&gt; *chart* @everyone", "and the report", "", "", "that's all"},
		post, "evt#slack#T0TEAM0001#C0CHAN0001:"+ts, []int{1, 2, 1, 2, 2, 1})
	checkFiles(t, got, 1, 3, 4)
	for i, d := range got {
		if d.Chat != "C0CHAN0001" || d.Thread != ts {
			t.Errorf("delivery %d went to %s/%s, want the person's thread", i, d.Chat, d.Thread)
		}
	}
	in := h.intentFor("evt#slack#T0TEAM0001#C0CHAN0001:" + ts)
	if u := in.Units[1]; u.Receipt[1] != arg(got[1], fakeslack.ArgFileID) {
		t.Errorf("the image's receipt %v, want its message ts and file id", u.Receipt)
	}
}

// discordCommand posts the guild /ask sample as an interaction made now,
// and returns its event key and how to post it again.
func (h *harness) discordCommand() (string, func()) {
	h.t.Helper()
	sample, err := os.ReadFile("../../events/discord/command-guild.json")
	if err != nil {
		h.t.Fatal(err)
	}
	body, err := fakediscord.Interaction(sample, h.clock.Now())
	if err != nil {
		h.t.Fatal(err)
	}
	var in struct {
		ID  string `json:"id"`
		App string `json:"application_id"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		h.t.Fatal(err)
	}
	post := func() {
		if code, answer := h.postDiscord(body); code != http.StatusOK || answer != `{"type":5}` {
			h.t.Fatalf("/ask: %d %s", code, answer)
		}
	}
	post()
	return "evt#discord#" + in.App + "#" + in.ID, post
}

// TestMediaBubblesReachDiscordNatively: the same reply to a command: its
// first bubble replaces the deferred response, and the files are
// follow-ups with their bytes attached (multipart), in order, once; the
// caption is inert content. A redelivered interaction sends nothing
// twice.
func TestMediaBubblesReachDiscordNatively(t *testing.T) {
	t.Parallel()
	h, root := filesHarness(t)
	fileMix(h, root)
	key, post := h.discordCommand()
	got := h.settled([]string{"here you go", discord.Inert("the <!channel> *chart* @everyone"), "and the report", "", "", "that's all"},
		post, key, []int{1, 1, 1, 1, 1, 1})
	checkFiles(t, got, 1, 3, 4)
	var mentions struct {
		Parse []string `json:"parse"`
	}
	if err := json.Unmarshal(got[1].Args["allowed_mentions"], &mentions); err != nil || mentions.Parse == nil || len(mentions.Parse) != 0 {
		t.Errorf("the image's allowed_mentions %s, want parse []", got[1].Args["allowed_mentions"])
	}
}

// TestMediaCrashBetweenSendAndReceiptOnSlackAndDiscord: the file reached
// the platform and its answer was lost. Neither platform can prove it was
// not sent (a Slack file message carries no metadata to look it up by, a
// follow-up has no nonce): the unit is held in unknown_after_send for an
// operator, never sent twice, and the next bubble still goes.
func TestMediaCrashBetweenSendAndReceiptOnSlackAndDiscord(t *testing.T) {
	t.Parallel()
	for _, p := range []message.Platform{message.Slack, message.Discord} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			h, root := filesHarness(t)
			h.agent.answer = func(agent.TurnRequest) (string, bool) {
				return `{"schema":"openab.turn.v1","messages":[{"id":"pic","media":{"kind":"image","url":"` + root + `/chart.png"}},{"id":"after","text":"and that's it"}]}`, true
			}
			h.fake.Inject(fakeplatform.Fault{Platform: p, DropResponseAfterCommit: true, Times: 1})
			var key string
			if p == message.Slack {
				const ts = "1764433200.000100"
				if code, body := h.postSlack(slackChannel(ts, "a picture")); code != http.StatusOK {
					t.Fatalf("event: %d %s", code, body)
				}
				key = "evt#slack#T0TEAM0001#C0CHAN0001:" + ts
			} else {
				key, _ = h.discordCommand()
			}
			h.waitDelivered(2, 60*time.Second)
			h.quiesce(30 * time.Second)
			got := h.fake.Delivered()
			if len(got) != 2 || arg(got[0], fakeapi.ArgSHA256) != sha(chartPNG) || got[1].Text != "and that's it" {
				t.Fatalf("deliveries %q, want the picture once, then the text", texts(got))
			}
			in := h.intentFor(key)
			if u := in.Units[0]; u.State != message.UnitUnknown {
				t.Fatalf("media unit = %s (%s), want unknown_after_send (held)", u.State, u.FailureReason)
			}
			if in.Units[1].State != message.UnitSent {
				t.Fatalf("next unit = %s, want sent", in.Units[1].State)
			}
			if p == message.Slack && len(h.logs.lines("outcome", "not_reconcilable")) == 0 {
				t.Errorf("no log line says the file could not be looked up")
			}
		})
	}
}

// TestMediaOverDiscordsLimitFails: a file of the agent's URL over what
// Discord takes from a bot is the unit's failure, saying why, and the
// thread goes on.
func TestMediaOverDiscordsLimitFails(t *testing.T) {
	t.Parallel()
	h, root := filesHarness(t)
	h.agent.answer = func(agent.TurnRequest) (string, bool) {
		return `{"schema":"openab.turn.v1","messages":[{"id":"big","media":{"kind":"file","url":"` + root + `/big.pdf"}},{"id":"after","text":"sorry"}]}`, true
	}
	key, _ := h.discordCommand()
	h.waitDelivered(1, 60*time.Second)
	h.quiesce(30 * time.Second)
	in := h.intentFor(key)
	if u := in.Units[0]; u.State != message.UnitFailed || u.FailureClass != message.FailInvalidPayload || !strings.Contains(u.FailureReason, "too_large") {
		t.Fatalf("unit = %s %s %q, want failed invalid_payload too_large", u.State, u.FailureClass, u.FailureReason)
	}
	if got := h.fake.Delivered(); len(got) != 1 || got[0].Text != "sorry" {
		t.Fatalf("deliveries %q, want the text alone", texts(got))
	}
}
