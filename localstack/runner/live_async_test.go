package runner_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/localstack/callcount"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// Async previews (POST /reply/preview): an agent that answered 202 shows
// its reply as written so far while its turn waits; the final POST /reply
// finalizes the preview in place or clears it, as a streamed reply does.

func previewBody(turnID, text, status string) []byte {
	m := map[string]string{"turn_id": turnID}
	if text != "" {
		m["text"] = text
	}
	if status != "" {
		m["status"] = status
	}
	b, _ := json.Marshal(m)
	return b
}

// postPreview posts a preview, signed by the agent, and decodes the answer
// of a 200.
func (h *harness) postPreview(id string, body []byte) (int, agentapi.PreviewAnswer) {
	h.t.Helper()
	code, resp := h.post("/reply/preview", h.agentSigned(id, body), body)
	var ans agentapi.PreviewAnswer
	if code == http.StatusOK {
		if err := json.Unmarshal([]byte(resp), &ans); err != nil {
			h.t.Fatalf("preview answer %q: %v", resp, err)
		}
	}
	return code, ans
}

// shownPreview posts a preview until it is shown, waiting out the
// throttle as the answer asks.
func (h *harness) shownPreview(id string, body []byte) agentapi.PreviewAnswer {
	h.t.Helper()
	for range 5 {
		code, ans := h.postPreview(id, body)
		if code != http.StatusOK {
			h.t.Fatalf("preview %s: %d", id, code)
		}
		if ans.Shown {
			return ans
		}
		if ans.Reason != "throttled" && ans.Reason != "early" {
			h.t.Fatalf("preview %s not shown: %+v", id, ans)
		}
		time.Sleep(time.Duration(ans.RetryAfterMS)*time.Millisecond + 50*time.Millisecond)
	}
	h.t.Fatalf("preview %s never shown", id)
	return agentapi.PreviewAnswer{}
}

// platformCalls counts what the fake platform was asked to show or change.
func (h *harness) platformCalls() int {
	rec := h.fake.Recorder()
	return len(rec.Delivered()) + len(rec.Edits()) + len(rec.Deletions())
}

// Telegram group: the preview is a message quoting the person's, edited
// as the agent posts, throttled to the group's 3 s across posts (each its
// own invocation of the reply function), and the final's first bubble is
// that same message. A preview after the final is refused: no write, no
// platform call.
func TestLiveAsyncTelegramGroup(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	const chat = -1001000000191
	turnID := h.asyncGroupTurn(920101, chat, 5550102, "later: where is my gate")

	// Bad previews are refused and change nothing, shown nowhere.
	writes, calls := h.calls.Total(callcount.Writes), h.platformCalls()
	forged := http.Header{}
	other, _ := standardwebhooks.ParseSecret("another-secret")
	standardwebhooks.SetHeaders(forged, other, "msg_pv_forged", h.clock.Now(), previewBody(turnID, "forged", ""))
	for name, tc := range map[string]struct {
		code int
		hdr  http.Header
		body []byte
	}{
		"unsigned":       {code: http.StatusUnauthorized, hdr: http.Header{}, body: previewBody(turnID, "x", "")},
		"forged":         {code: http.StatusUnauthorized, hdr: forged, body: previewBody(turnID, "forged", "")},
		"malformed":      {code: http.StatusBadRequest, body: []byte(`{"turn_id":`)},
		"no content":     {code: http.StatusBadRequest, body: previewBody(turnID, "", "")},
		"two-line state": {code: http.StatusBadRequest, body: previewBody(turnID, "", "a\nb")},
		"unknown field":  {code: http.StatusBadRequest, body: []byte(`{"turn_id":"` + turnID + `","text":"x","final":true}`)},
		"unknown turn":   {code: http.StatusNotFound, body: previewBody(strings.Repeat("0", 32), "x", "")},
		"oversized":      {code: http.StatusRequestEntityTooLarge, body: previewBody(turnID, strings.Repeat("x", 70<<10), "")},
	} {
		h.refused("/reply/preview", name, tc.code, tc.hdr, tc.body)
	}
	if w, c := h.calls.Total(callcount.Writes), h.platformCalls(); w != writes || c != calls {
		t.Fatalf("refused previews wrote %d times and made %d platform calls", w-writes, c-calls)
	}

	first := h.shownPreview("msg_pv_1", previewBody(turnID, "", "looking it up"))
	if first.Updates != 1 {
		t.Fatalf("first preview: %+v", first)
	}
	// At once again: inside the interval, not shown, told when.
	code, ans := h.postPreview("msg_pv_2", previewBody(turnID, "gate", ""))
	if code != http.StatusOK || ans.Shown || ans.Reason != "throttled" || ans.RetryAfterMS <= 0 || ans.RetryAfterMS > 3000 {
		t.Fatalf("a preview inside the interval: %d %+v, want 200 throttled within 3 s", code, ans)
	}
	second := h.shownPreview("msg_pv_3", previewBody(turnID, "Your gate", "checking the board"))
	if second.Updates != 2 {
		t.Fatalf("second preview: %+v", second)
	}
	rec := h.fake.Recorder()
	all := h.fake.Delivered()
	if len(all) != 1 || all[0].Text != "… looking it up" || all[0].ReplyTo != "920101" {
		t.Fatalf("the preview message: %+v", all)
	}
	pv := all[0].MessageID
	if edits := rec.Edits(); len(edits) != 1 || edits[0].MessageID != pv || edits[0].Text != "Your gate\n\n… checking the board" {
		t.Fatalf("edits %+v: want the preview rewritten once", edits)
	}

	if code, body := h.postReply("msg_final", replyBody(turnID, "Your gate is B12", "boarding at 19:40")); code != http.StatusOK {
		t.Fatalf("final: %d %s", code, body)
	}
	h.waitDelivered(2, 30*time.Second)
	h.quiesce(20 * time.Second)
	if v := texts(rec.Visible(message.Telegram, strconv.Itoa(chat))); !slices.Equal(v, []string{"Your gate is B12", "boarding at 19:40"}) {
		t.Fatalf("the group shows %q", v)
	}
	if n := len(h.fake.Delivered()); n != 2 || len(rec.Deletions()) != 0 {
		t.Fatalf("%d messages, deletions %v: want the preview finalized and one more", n, rec.Deletions())
	}
	in := h.intentFor("evt#telegram#" + tgBotID + "#920101")
	if u := in.Units[0]; u.State != message.UnitSent || len(u.Receipt) != 1 || u.Receipt[0] != pv {
		t.Fatalf("first unit %+v: want sent as the preview's message %s", u, pv)
	}

	// After the final: refused, nothing written, nothing shown.
	writes, calls = h.calls.Total(callcount.Writes), h.platformCalls()
	if code, body := h.post("/reply/preview", h.agentSigned("msg_pv_late", previewBody(turnID, "late", "")), previewBody(turnID, "late", "")); code != http.StatusConflict {
		t.Fatalf("a preview after the final: %d %s, want 409", code, body)
	}
	if w, c := h.calls.Total(callcount.Writes), h.platformCalls(); w != writes || c != calls {
		t.Fatalf("a refused preview wrote %d times and made %d platform calls", w-writes, c-calls)
	}
}

// Slack: the preview is a message in the conversation, updated with
// chat.update, and the final's bubble updates it into itself.
func TestLiveAsyncSlackUpdatesInPlace(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.fail = later
	const ts = "1764800000.000100"
	turnID := intent.IDFor("evt#slack#T0TEAM0001#D0LIVEA001:" + ts)
	if code, body := h.postSlack(slackDM("D0LIVEA001", ts, "later: summarize the thread")); code != 200 {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitAwait(turnID)
	h.shownPreview("msg_spv_1", previewBody(turnID, "Three people", ""))
	h.shownPreview("msg_spv_2", previewBody(turnID, "Three people agreed", "reading replies"))
	if code, body := h.postReply("msg_sfinal", replyBody(turnID, "Three people agreed on Friday")); code != http.StatusOK {
		t.Fatalf("final: %d %s", code, body)
	}
	deadline := time.Now().Add(30 * time.Second)
	rec := h.fake.Recorder()
	for time.Now().Before(deadline) {
		if v := texts(rec.Visible(message.Slack, "D0LIVEA001")); slices.Equal(v, []string{"Three people agreed on Friday"}) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.quiesce(20 * time.Second)
	if v := texts(rec.Visible(message.Slack, "D0LIVEA001")); !slices.Equal(v, []string{"Three people agreed on Friday"}) {
		t.Fatalf("the conversation shows %q", v)
	}
	all := h.fake.Delivered()
	if len(all) != 1 || len(rec.Deletions()) != 0 {
		t.Fatalf("delivered %q, deletions %v: want the one preview, finalized", texts(all), rec.Deletions())
	}
	edits := rec.Edits()
	if len(edits) != 2 {
		t.Fatalf("%d updates, want the preview's and the final's", len(edits))
	}
	for _, e := range edits {
		if e.MessageID != all[0].MessageID {
			t.Fatalf("update of %s, not the preview %s", e.MessageID, all[0].MessageID)
		}
	}
	if h.agent.calls() != 1 {
		t.Fatalf("%d agent calls: the preview's own message event reached the agent", h.agent.calls())
	}
}

// A final that does not begin with text (silent) clears the preview, and
// a turn that times out clears it too: nothing stays.
func TestLiveAsyncPreviewCleared(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name  string
		env   map[string]string
		final []byte
	}{
		{name: "SilentFinal", final: []byte(`{"turn_id":"%s","envelope":{"schema":"openab.turn.v1","messages":[],"next":{"type":"silent"}}}`)},
		{name: "TimedOut", env: map[string]string{"PARLEY_ASYNC_TIMEOUT": "6s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, options{env: tc.env})
			chat := int64(-1001000000192 - i)
			turnID := h.asyncGroupTurn(920201+i, chat, 5550103, "later please")
			h.shownPreview("msg_cpv_1", previewBody(turnID, "thinking", ""))
			if tc.final != nil {
				body := []byte(fmt.Sprintf(string(tc.final), turnID))
				if code, resp := h.postReply("msg_cfinal", body); code != http.StatusOK {
					t.Fatalf("final: %d %s", code, resp)
				}
			}
			rec := h.fake.Recorder()
			deadline := time.Now().Add(40 * time.Second)
			for time.Now().Before(deadline) && len(rec.Deletions()) == 0 {
				time.Sleep(100 * time.Millisecond)
			}
			h.quiesce(20 * time.Second)
			if v := rec.Visible(message.Telegram, strconv.FormatInt(chat, 10)); len(v) != 0 {
				t.Fatalf("the group shows %q, want nothing", texts(v))
			}
			if d := rec.Deletions(); len(d) != 1 {
				t.Fatalf("deletions %v, want the preview's", d)
			}
		})
	}
}

// A crash between the preview and the final: the turn's commit fails (never
// written, or written with its answer lost) after the agent's final post;
// the retried turn finds the preview's record and finalizes it: exactly
// one final, nothing stale, the agent asked once.
func TestLiveAsyncCrashBetweenPreviewAndFinal(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name  string
		after bool
	}{
		{name: "CommitNeverWritten"},
		{name: "CommitWrittenAnswerLost", after: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, options{})
			var calls atomic.Int32
			h.agent.fail = func(req agent.TurnRequest) (int, bool) {
				calls.Add(1)
				return later(req)
			}
			chat := int64(-1001000000196 - i)
			update := 920601 + i
			turnID := intent.IDFor("evt#telegram#" + tgBotID + "#" + strconv.Itoa(update))
			if code, body := h.postTelegram(telegramGroupUpdate(update, chat, 5550107, "later: find it")); code != 200 {
				t.Fatalf("webhook: %d %s", code, body)
			}
			h.waitAwait(turnID)
			h.shownPreview("msg_xpv_1", previewBody(turnID, "let me look", ""))
			h.faults.Add(awsfault.Fault{Op: "DynamoDB.UpdateItem", Match: turnCommit, After: tc.after})
			if code, body := h.postReply("msg_xfinal", replyBody(turnID, "found it")); code != http.StatusOK {
				t.Fatalf("final: %d %s", code, body)
			}
			rec := h.fake.Recorder()
			deadline := time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) {
				if v := rec.Visible(message.Telegram, strconv.FormatInt(chat, 10)); len(v) == 1 && v[0].Text == "found it" {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			h.quiesce(30 * time.Second)
			if v := texts(rec.Visible(message.Telegram, strconv.FormatInt(chat, 10))); !slices.Equal(v, []string{"found it"}) {
				t.Fatalf("the group shows %q", v)
			}
			if n := len(h.fake.Delivered()); n != 1 || len(rec.Deletions()) != 0 {
				t.Fatalf("%d messages, deletions %v: want the one preview, finalized", n, rec.Deletions())
			}
			if calls.Load() != 1 {
				t.Fatalf("%d agent calls, want 1", calls.Load())
			}
		})
	}
}
