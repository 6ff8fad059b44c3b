package runner_test

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/intent"
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
		if i > 0 && i < len(edits)-1 && e.At.Sub(edits[i-1].At) < time.Second {
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

// Slack: one preview message in the conversation, updated while the agent
// writes, ending as the first bubble; the rest after it; nothing stale.
func TestLiveSlackUpdatesInPlace(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.echo.StreamPause = 700 * time.Millisecond
	if code, body := h.postSlack(slackDM("D0LIVE0001", "1764700000.000100", "/stream the gate moved")); code != 200 {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitDelivered(2, 30*time.Second)
	h.quiesce(20 * time.Second)
	rec := h.fake.Recorder()
	all := h.fake.Delivered()
	if len(all) != 2 {
		t.Fatalf("delivered %q: want the preview and the second bubble", texts(all))
	}
	if v := texts(rec.Visible(message.Slack, "D0LIVE0001")); !slices.Equal(v, []string{"echo: the gate moved", "streamed in 4 deltas"}) {
		t.Fatalf("the conversation shows %q", v)
	}
	edits := rec.Edits()
	if len(edits) < 2 {
		t.Fatalf("%d updates: want the preview updated while written, then into the first bubble", len(edits))
	}
	for i, e := range edits {
		if e.MessageID != all[0].MessageID {
			t.Fatalf("update %d of %s, not the preview %s", i, e.MessageID, all[0].MessageID)
		}
		// The final's edit is never held back; the preview's are.
		if i > 0 && i < len(edits)-1 && e.At.Sub(edits[i-1].At) < time.Second {
			t.Fatalf("updates %d and %d %s apart", i-1, i, e.At.Sub(edits[i-1].At))
		}
	}
	if h.agent.calls() != 1 {
		t.Fatalf("%d agent calls: the preview's own message event reached the agent", h.agent.calls())
	}
}

// The first bubble's edit of the preview reaches Telegram but its answer is
// lost (a crash after the final's send, before its receipt): the edit is
// tried again, Telegram answers "not modified", and that counts as sent.
// One final visible, nothing stale, the unit sent.
func TestLiveFinalEditAnswerLost(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.stream = func(req agent.TurnRequest) ([]string, bool, bool) {
		return []string{`{"type":"delta","text":"draft"}`, `{"type":"final","text":"the final"}`}, false, true
	}
	// The preview's own updates come before the final's edit: the fault
	// waits for the first edit after them, the final's.
	h.fake.Inject(fakeapi.Fault{Platform: message.Telegram, Edits: true, DropResponseAfterCommit: true})
	const chat = -1001000000094
	if code, body := h.postTelegram(telegramGroupUpdate(910401, chat, 5550005, "go")); code != 200 {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitDelivered(1, 30*time.Second)
	deadline := time.Now().Add(40 * time.Second)
	var in intent.Intent
	for time.Now().Before(deadline) {
		got, err := h.store.GetIntent(t.Context(), intent.IDFor("evt#telegram#"+tgBotID+"#910401"))
		if err == nil && got.Units[0].State == message.UnitSent {
			in = got
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	h.quiesce(20 * time.Second)
	rec := h.fake.Recorder()
	if v := texts(rec.Visible(message.Telegram, "-1001000000094")); !slices.Equal(v, []string{"the final"}) {
		t.Fatalf("the group shows %q", v)
	}
	if in.Units[0].State != message.UnitSent || len(h.fake.Delivered()) != 1 {
		t.Fatalf("first unit %+v, delivered %q: want sent, one message", in.Units[0], texts(h.fake.Delivered()))
	}
	if len(h.logs.lines("msg", "unit send failed: will retry", "unit_id", in.Units[0].ID)) == 0 {
		t.Fatal("the final's edit was not retried: the fault did not fire")
	}
}

// A 200-delta stream in a group stays within Telegram's limits (the fake
// refuses more than 20 edits a minute in a group with 429): every preview
// update is accepted, at least 3 seconds apart, and the final lands.
func TestLiveTwoHundredDeltasWithinLimits(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_AGENT_TIMEOUT": "25s"}})
	h.agent.streamPause = 25 * time.Millisecond
	h.agent.stream = func(req agent.TurnRequest) ([]string, bool, bool) {
		lines := make([]string, 0, 201)
		for i := range 200 {
			lines = append(lines, `{"type":"delta","text":"w`+strconv.Itoa(i)+` "}`)
		}
		return append(lines, `{"type":"final","text":"done"}`), false, true
	}
	const chat = -1001000000095
	if code, body := h.postTelegram(telegramGroupUpdate(910501, chat, 5550006, "go")); code != 200 {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitDelivered(1, 60*time.Second)
	h.quiesce(30 * time.Second)
	rec := h.fake.Recorder()
	if v := texts(rec.Visible(message.Telegram, "-1001000000095")); !slices.Equal(v, []string{"done"}) {
		t.Fatalf("the group shows %q", v)
	}
	edits := rec.Edits()
	if len(edits) < 2 || len(edits) > 20 {
		t.Fatalf("%d edits for a 200-delta stream of ~10 s", len(edits))
	}
	for i := 1; i < len(edits)-1; i++ {
		if gap := edits[i].At.Sub(edits[i-1].At); gap < 3*time.Second-100*time.Millisecond {
			t.Fatalf("preview updates %d and %d %s apart: over a group's rate", i-1, i, gap)
		}
	}
	if n := len(h.logs.lines("msg", "preview update failed")); n != 0 {
		t.Fatalf("%d preview updates refused", n)
	}
}

// Discord: @original edited during the stream and ending as the first
// bubble. The deferred response is edited through the interaction's token
// while the agent writes (at most every 2 seconds, within the fake's 5
// edits per 5 seconds), then into the first final bubble; the second is a
// follow-up. One response message, nothing deleted, no 429.
func TestLiveDiscordEditsTheOriginal(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_AGENT_TIMEOUT": "20s"}})
	h.agent.echo.StreamPause = 900 * time.Millisecond
	sample, err := os.ReadFile("../../events/discord/command-guild.json")
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	_ = json.Unmarshal(sample, &in)
	in["data"].(map[string]any)["options"].([]any)[0].(map[string]any)["value"] = "/stream the gate moved"
	raw, _ := json.Marshal(in)
	body, err := fakediscord.Interaction(raw, h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if code, answer := h.postDiscord(body); code != http.StatusOK || answer != `{"type":5}` {
		t.Fatalf("/ask: %d %s", code, answer)
	}
	h.waitDelivered(2, 30*time.Second)
	h.quiesce(20 * time.Second)
	rec := h.fake.Recorder()
	all := h.fake.Delivered()
	if len(all) != 2 {
		t.Fatalf("delivered %q: want the response and the follow-up", texts(all))
	}
	const channel = "1309000000000000200"
	if v := texts(rec.Visible(message.Discord, channel)); !slices.Equal(v, []string{"echo: the gate moved", "streamed in 4 deltas"}) {
		t.Fatalf("the channel shows %q", v)
	}
	edits := rec.Edits()
	if len(edits) < 2 {
		t.Fatalf("%d edits: want @original edited while written, then into the first bubble", len(edits))
	}
	for i, e := range edits {
		if e.MessageID != all[0].MessageID {
			t.Fatalf("edit %d of %s, not the response %s", i, e.MessageID, all[0].MessageID)
		}
		if i > 0 && i < len(edits)-1 && e.At.Sub(edits[i-1].At) < 2*time.Second-100*time.Millisecond {
			t.Fatalf("edits %d and %d %s apart", i-1, i, e.At.Sub(edits[i-1].At))
		}
	}
	if all[1].At.Before(edits[len(edits)-1].At) {
		t.Fatal("the follow-up came before the first bubble finalized the response")
	}
	if len(rec.Deletions()) != 0 {
		t.Fatalf("deletions %v", rec.Deletions())
	}
	if n := len(h.logs.lines("msg", "preview update failed")); n != 0 {
		t.Fatalf("%d preview updates refused", n)
	}
	var sent struct {
		ID            string `json:"id"`
		ApplicationID string `json:"application_id"`
	}
	_ = json.Unmarshal(body, &sent)
	first := h.intentFor("evt#discord#" + sent.ApplicationID + "#" + sent.ID).Units[0]
	if first.State != message.UnitSent || len(first.Receipt) != 1 || first.Receipt[0] != all[0].MessageID {
		t.Fatalf("first unit %+v: want sent, its receipt the response's message", first)
	}
}

// Slack, an assistant app (SLACK_ASSISTANT) in its thread: one native
// stream started, appended and stopped, ending as the first bubble's text,
// the second bubble after it in the thread; the thread's status set while
// the agent works (its stream's status line too) and cleared at the end.
func TestLiveSlackAssistantStream(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"SLACK_ASSISTANT": "true", "PARLEY_AGENT_TIMEOUT": "20s"}})
	h.agent.echo.StreamPause = 700 * time.Millisecond
	const channel, thread = "D0LIVE0002", "1764700000.000100"
	body, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": "T0TEAM0001", "api_app_id": "A0APP00001",
		"event_id": "Ev1764700000000200", "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{"team_id": "T0TEAM0001", "user_id": "U0BOT00001", "is_bot": true}},
		"event": map[string]any{
			"type": "message", "channel": channel, "channel_type": "im", "user": "U0ADA00001",
			"text": "/stream the gate moved", "ts": "1764700000.000200", "thread_ts": thread,
		},
	})
	if code, answer := h.postSlack(body); code != 200 {
		t.Fatalf("webhook: %d %s", code, answer)
	}
	h.waitDelivered(2, 30*time.Second)
	h.quiesce(20 * time.Second)
	api, _ := h.fake.For(message.Slack)
	fs := api.(*fakeslack.API)
	streams := fs.Streams()
	if len(streams) != 1 || streams[0].Thread != thread || streams[0].Appends < 1 || !streams[0].Stopped {
		t.Fatalf("streams %+v: want one started in the thread, appended, stopped", streams)
	}
	all := h.fake.Delivered()
	if len(all) != 2 || all[0].MessageID != streams[0].TS || all[1].Thread != thread {
		t.Fatalf("delivered %+v: want the stream, then the second bubble in the thread", all)
	}
	if v := texts(h.fake.Recorder().Visible(message.Slack, channel)); !slices.Equal(v, []string{"echo: the gate moved", "streamed in 4 deltas"}) {
		t.Fatalf("the conversation shows %q", v)
	}
	var statuses []string
	for _, s := range fs.Statuses() {
		if s.Channel != channel || s.Thread != thread {
			t.Fatalf("status %+v outside the thread", s)
		}
		statuses = append(statuses, s.Status)
	}
	if len(statuses) < 2 || statuses[0] == "" || !slices.Contains(statuses, "thinking…") || statuses[len(statuses)-1] != "" {
		t.Fatalf("statuses %q: want set (the stream's status line among them), then cleared", statuses)
	}
	if h.agent.calls() != 1 {
		t.Fatalf("%d agent calls", h.agent.calls())
	}
}

// A crash between the preview and the final: the turn's commit fails after
// a group's preview was shown (before the write, or after it with its
// answer lost). Either way the person ends with the one preview message
// finalized into the reply: the retried turn takes the preview over (the
// agent asked again) or finds its intent committed, and nothing stale or
// doubled stays.
func TestLiveCrashBetweenPreviewAndFinal(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name  string
		after bool
		calls int32
	}{
		{name: "CommitNeverWritten", calls: 2},
		{name: "CommitWrittenAnswerLost", after: true, calls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, options{})
			var calls atomic.Int32
			h.agent.stream = func(req agent.TurnRequest) ([]string, bool, bool) {
				calls.Add(1)
				return []string{`{"type":"delta","text":"let me look"}`, `{"type":"final","text":"found it"}`}, false, true
			}
			h.faults.Add(awsfault.Fault{Op: "DynamoDB.UpdateItem", Match: turnCommit, After: tc.after})
			chat := int64(-1001000000096 - i)
			if code, body := h.postTelegram(telegramGroupUpdate(910601+i, chat, 5550007, "go")); code != 200 {
				t.Fatalf("webhook: %d %s", code, body)
			}
			deadline := time.Now().Add(40 * time.Second)
			for time.Now().Before(deadline) {
				v := h.fake.Recorder().Visible(message.Telegram, strconv.FormatInt(chat, 10))
				if len(v) == 1 && v[0].Text == "found it" {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			h.quiesce(20 * time.Second)
			rec := h.fake.Recorder()
			if v := texts(rec.Visible(message.Telegram, strconv.FormatInt(chat, 10))); !slices.Equal(v, []string{"found it"}) {
				t.Fatalf("the group shows %q", v)
			}
			if n := len(h.fake.Delivered()); n != 1 || len(rec.Deletions()) != 0 {
				t.Fatalf("%d messages, deletions %v: want the one preview, finalized", n, rec.Deletions())
			}
			if calls.Load() != tc.calls {
				t.Fatalf("%d agent calls, want %d", calls.Load(), tc.calls)
			}
		})
	}
}

// Discord, a silent final: the deferred response the stream was edited
// into is deleted through the interaction's token; nothing stays.
func TestLiveDiscordSilentClearsTheOriginal(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.stream = func(req agent.TurnRequest) ([]string, bool, bool) {
		return []string{
			`{"type":"delta","text":"let me see"}`,
			`{"type":"final","envelope":{"schema":"openab.turn.v1","messages":[{"id":"a","text":"never sent"}],"next":{"type":"silent"}}}`,
		}, false, true
	}
	sample, err := os.ReadFile("../../events/discord/command-guild.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := fakediscord.Interaction(sample, h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if code, answer := h.postDiscord(body); code != http.StatusOK || answer != `{"type":5}` {
		t.Fatalf("/ask: %d %s", code, answer)
	}
	h.waitDelivered(1, 30*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && len(h.fake.Recorder().Deletions()) == 0 {
		time.Sleep(200 * time.Millisecond)
	}
	h.quiesce(20 * time.Second)
	rec := h.fake.Recorder()
	if v := rec.Visible(message.Discord, "1309000000000000200"); len(v) != 0 {
		t.Fatalf("the channel still shows %q", texts(v))
	}
	if d := rec.Deletions(); len(d) != 1 || d[0].MessageID != h.fake.Delivered()[0].MessageID {
		t.Fatalf("deletions %+v: want the response's", d)
	}
}

// A reply whose first bubble is a file: the preview cannot become it (it
// would show before the file the plan puts first), so it is deleted, and
// the file and the text follow in plan order.
func TestLivePreviewClearedBeforeAFileFirst(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.stream = func(req agent.TurnRequest) ([]string, bool, bool) {
		return []string{
			`{"type":"delta","text":"drawing the chart"}`,
			`{"type":"final","envelope":{"schema":"openab.turn.v1","messages":[` +
				`{"id":"chart","media":{"kind":"image","url":"https://example.com/chart.png","caption":"the chart"}},` +
				`{"id":"b2","text":"sales are up"}]}}`,
		}, false, true
	}
	const chat = -1001000000098
	if code, body := h.postTelegram(telegramGroupUpdate(910701, chat, 5550008, "chart please")); code != 200 {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitDelivered(3, 30*time.Second)
	h.quiesce(20 * time.Second)
	rec := h.fake.Recorder()
	all := h.fake.Delivered()
	if len(all) != 3 || len(rec.Deletions()) != 1 || rec.Deletions()[0].MessageID != all[0].MessageID {
		t.Fatalf("delivered %q, deletions %+v: want the preview deleted, then the file and the text", texts(all), rec.Deletions())
	}
	if v := texts(rec.Visible(message.Telegram, strconv.FormatInt(chat, 10))); !slices.Equal(v, []string{"the chart", "sales are up"}) {
		t.Fatalf("the group shows %q", v)
	}
}

// A flood-limited preview never holds the final back: Telegram answers the
// preview's first edit with 429 and a minute's retry_after, so the pump
// may show nothing more for a minute; the stream ends a few seconds later
// and the final still lands within one throttle interval of it (the bound
// here is far below the minute, far above the interval), once, as the
// preview's message.
func TestLiveFloodLimitedPreviewDoesNotDelayTheFinal(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_AGENT_TIMEOUT": "25s"}})
	h.agent.streamPause = 250 * time.Millisecond
	var ended atomic.Int64
	h.agent.stream = func(req agent.TurnRequest) ([]string, bool, bool) {
		lines := make([]string, 0, 21)
		for i := range 20 {
			lines = append(lines, `{"type":"delta","text":"w`+strconv.Itoa(i)+` "}`)
		}
		ended.Store(time.Now().Add(20 * 250 * time.Millisecond).UnixNano())
		return append(lines, `{"type":"final","text":"done"}`), false, true
	}
	h.fake.Inject(fakeapi.Fault{Platform: message.Telegram, Edits: true, Status: 429, RetryAfter: time.Minute})
	const chat = -1001000000097
	if code, body := h.postTelegram(telegramGroupUpdate(910701, chat, 5550007, "go")); code != 200 {
		t.Fatalf("webhook: %d %s", code, body)
	}
	got := h.waitDelivered(1, 60*time.Second)
	h.quiesce(30 * time.Second)
	rec := h.fake.Recorder()
	if v := texts(rec.Visible(message.Telegram, "-1001000000097")); !slices.Equal(v, []string{"done"}) {
		t.Fatalf("the group shows %q", v)
	}
	if len(h.logs.lines("msg", "preview update failed")) == 0 {
		t.Fatal("no preview update was refused: the fault did not fire")
	}
	edits := rec.Edits()
	if len(edits) == 0 || edits[len(edits)-1].MessageID != got[0].MessageID {
		t.Fatalf("edits %v: want the preview %s edited into the final", edits, got[0].MessageID)
	}
	// The stream's end is when its last line was written (the agent
	// pauses after each line); the final edit lands within the group's
	// 3-second interval of it, plus the pipeline's own steps.
	if late := edits[len(edits)-1].At.Sub(time.Unix(0, ended.Load())); late > 20*time.Second {
		t.Fatalf("the final landed %s after the stream ended: it waited for the preview's retry_after", late)
	}
}

// A 200-delta stream stays within every platform's limits as its fake
// holds them (Telegram's drafts and group edits, Slack's chat.update and
// stream appends, Discord's edits of @original): no preview update is
// refused, the updates keep the platform's interval, and the final lands
// once. (A Telegram group: TestLiveTwoHundredDeltasWithinLimits.)
func TestLiveTwoHundredDeltasEveryPlatform(t *testing.T) {
	t.Parallel()
	stream := func(req agent.TurnRequest) ([]string, bool, bool) {
		lines := make([]string, 0, 201)
		for i := range 200 {
			lines = append(lines, `{"type":"delta","text":"w`+strconv.Itoa(i)+` "}`)
		}
		return append(lines, `{"type":"final","text":"done"}`), false, true
	}
	slackThread := func(channel, ts, thread string) []byte {
		b, _ := json.Marshal(map[string]any{
			"type": "event_callback", "team_id": "T0TEAM0001", "api_app_id": "A0APP00001",
			"event_id": "Ev" + strings.ReplaceAll(ts, ".", ""), "event_time": time.Now().Unix(),
			"authorizations": []map[string]any{{"team_id": "T0TEAM0001", "user_id": "U0BOT00001", "is_bot": true}},
			"event": map[string]any{
				"type": "message", "channel": channel, "channel_type": "im", "user": "U0ADA00001",
				"text": "go", "ts": ts, "thread_ts": thread,
			},
		})
		return b
	}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		post     func(h *harness) (int, string)
		platform message.Platform
		chat     string
		// interval is the least time between two preview updates there.
		interval time.Duration
		drafts   bool
	}{
		{name: "TelegramPrivate", drafts: true, platform: message.Telegram, chat: "5550008", interval: time.Second,
			post: func(h *harness) (int, string) { return h.postTelegram(telegramUpdate(910801, 5550008, "go")) }},
		{name: "SlackUpdates", platform: message.Slack, chat: "D0LIVE0008", interval: time.Second,
			post: func(h *harness) (int, string) { return h.postSlack(slackDM("D0LIVE0008", "1764700000.000800", "go")) }},
		{name: "SlackAssistantStream", env: map[string]string{"SLACK_ASSISTANT": "true"}, platform: message.Slack, chat: "D0LIVE0009", interval: time.Second,
			post: func(h *harness) (int, string) {
				return h.postSlack(slackThread("D0LIVE0009", "1764700000.000901", "1764700000.000900"))
			}},
		{name: "DiscordOriginal", platform: message.Discord, chat: "1309000000000000200", interval: 2 * time.Second,
			post: func(h *harness) (int, string) {
				sample, err := os.ReadFile("../../events/discord/command-guild.json")
				if err != nil {
					t.Fatal(err)
				}
				body, err := fakediscord.Interaction(sample, h.clock.Now())
				if err != nil {
					t.Fatal(err)
				}
				return h.postDiscord(body)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"PARLEY_AGENT_TIMEOUT": "25s"}
			for k, v := range tc.env {
				env[k] = v
			}
			h := start(t, options{env: env})
			h.agent.streamPause = 25 * time.Millisecond
			h.agent.stream = stream
			if code, body := tc.post(h); code != 200 {
				t.Fatalf("webhook: %d %s", code, body)
			}
			h.waitDelivered(1, 60*time.Second)
			h.quiesce(30 * time.Second)
			rec := h.fake.Recorder()
			if v := texts(rec.Visible(tc.platform, tc.chat)); !slices.Equal(v, []string{"done"}) {
				t.Fatalf("the chat shows %q", v)
			}
			if n := len(h.logs.lines("msg", "preview update failed")); n != 0 {
				t.Fatalf("%d preview updates refused", n)
			}
			var at []time.Time
			if tc.drafts {
				for _, d := range rec.Drafts() {
					at = append(at, d.At)
				}
			} else {
				for _, e := range rec.Edits() {
					at = append(at, e.At)
				}
				// The last edit is the final's, never held back.
				at = at[:max(len(at)-1, 0)]
			}
			if len(at) < 2 || len(at) > 20 {
				t.Fatalf("%d preview updates for a 200-delta stream of ~5 s", len(at))
			}
			for i := 1; i < len(at); i++ {
				if gap := at[i].Sub(at[i-1]); gap < tc.interval-100*time.Millisecond {
					t.Fatalf("preview updates %d and %d %s apart: over the platform's rate", i-1, i, gap)
				}
			}
		})
	}
}
