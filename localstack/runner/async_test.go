package runner_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/callcount"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
)

// later makes the agent answer 202 to texts starting with "later".
func later(req agent.TurnRequest) (int, bool) {
	if strings.HasPrefix(req.Event.Text, "later") {
		return http.StatusAccepted, true
	}
	return 0, false
}

// postReply posts body to /reply as the agent signs it, with webhook-id id.
func (h *harness) postReply(id string, body []byte) (int, string) {
	h.t.Helper()
	return h.post("/reply", h.agentSigned(id, body), body)
}

// agentSigned are the headers the agent signs a post with, webhook-id id.
func (h *harness) agentSigned(id string, body []byte) http.Header {
	h.t.Helper()
	secret, err := standardwebhooks.ParseSecret(agentSecret)
	if err != nil {
		h.t.Fatal(err)
	}
	hdr := http.Header{"Content-Type": {"application/json"}}
	standardwebhooks.SetHeaders(hdr, secret, id, h.clock.Now(), body)
	return hdr
}

func replyBody(turnID string, texts ...string) []byte {
	var ms []map[string]string
	for i, t := range texts {
		ms = append(ms, map[string]string{"id": fmt.Sprintf("b%d", i+1), "text": t})
	}
	b, _ := json.Marshal(map[string]any{"turn_id": turnID, "envelope": map[string]any{"schema": "openab.turn.v1", "messages": ms}})
	return b
}

// waitAwait waits until the turn waits for its agent's post: the agent
// answered 202 and the turn recorded it.
func (h *harness) waitAwait(turnID string) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := h.store.GetAwait(h.t.Context(), turnID); err == nil {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("turn %s never waited for its reply", turnID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestAsyncReply(t *testing.T) {
	t.Parallel()
	testAsyncReply(t, false)
}

func testAsyncReply(t *testing.T, lost bool) *harness {
	h := start(t, options{lostAnswers: lost})
	h.agent.fail = later
	turnID := intent.IDFor("evt#telegram#" + tgBotID + "#5001")

	if code, _ := h.postTelegram(telegramUpdate(5001, 42, "later please")); code != http.StatusOK {
		t.Fatalf("webhook: %d", code)
	}
	h.waitAwait(turnID)
	if code, _ := h.postTelegram(telegramUpdate(5002, 42, "hello")); code != http.StatusOK {
		t.Fatalf("webhook: %d", code)
	}
	// The thread's next turn waits behind the one awaiting its reply.
	time.Sleep(3 * time.Second)
	if got := h.agent.texts("telegram:" + tgBotID + ":42"); len(got) != 1 || len(h.fake.Delivered()) != 0 {
		t.Fatalf("while awaiting: agent heard %q, %d delivered; want only the first turn, nothing sent", got, len(h.fake.Delivered()))
	}

	// Bad posts are refused and change nothing.
	writes := h.calls.Total(callcount.Writes)
	secret, _ := standardwebhooks.ParseSecret("another-secret")
	forged := http.Header{}
	standardwebhooks.SetHeaders(forged, secret, "msg_forged", h.clock.Now(), replyBody(turnID, "forged"))
	big := replyBody(turnID, strings.Repeat("x", 300<<10))
	good, _ := standardwebhooks.ParseSecret(agentSecret)
	stale := http.Header{}
	standardwebhooks.SetHeaders(stale, good, "msg_stale", h.clock.Now().Add(-10*time.Minute), replyBody(turnID, "late"))
	for name, tc := range map[string]struct {
		code   int
		status int
		hdr    http.Header
		body   []byte
	}{
		"unsigned":              {code: http.StatusUnauthorized, hdr: http.Header{}, body: replyBody(turnID, "x")},
		"forged":                {code: http.StatusUnauthorized, hdr: forged, body: replyBody(turnID, "forged")},
		"stale":                 {code: http.StatusUnauthorized, hdr: stale, body: replyBody(turnID, "late")},
		"malformed":             {code: http.StatusBadRequest, body: []byte(`{"turn_id":`)},
		"unknown field":         {code: http.StatusBadRequest, body: []byte(`{"turn_id":"` + turnID + `","txt":"hi"}`)},
		"not final, no content": {code: http.StatusBadRequest, body: []byte(`{"turn_id":"` + turnID + `","final":false}`)},
		"unknown turn":          {code: http.StatusNotFound, body: replyBody(strings.Repeat("0", 32), "x")},
		"over limit":            {code: http.StatusUnprocessableEntity, body: replyBody(turnID, "1", "2", "3", "4", "5")},
		"oversized":             {code: http.StatusRequestEntityTooLarge, body: big},
	} {
		h.refused("/reply", name, tc.code, tc.hdr, tc.body)
	}
	if w := h.calls.Total(callcount.Writes); w != writes {
		t.Errorf("refused posts wrote %d times", w-writes)
	}

	// The reply, and the same post retried (signed again, same id): one
	// delivery, before the thread's next turn.
	for range 2 {
		code, body := h.postReply("msg_reply_1", replyBody(turnID, "done, as promised"))
		if code != http.StatusOK || !strings.Contains(body, `"bubbles":1`) {
			t.Fatalf("reply: %d %s", code, body)
		}
	}
	got := texts(h.waitDelivered(3, 30*time.Second))
	want := []string{"done, as promised", "echo: hello", "5 characters, via telegram"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	// Another post for the answered turn is refused.
	if code, body := h.postReply("msg_reply_2", replyBody(turnID, "again")); code != http.StatusConflict {
		t.Fatalf("second reply: %d %s, want 409", code, body)
	}
	h.quiesce(30 * time.Second)
	if n := len(h.fake.Delivered()); n != 3 {
		t.Fatalf("%d delivered, want 3", n)
	}
	if c, err := h.store.GetClaim(t.Context(), store.IntentKey(intent.IDFor("evt#telegram#"+tgBotID+"#5001")), time.Now()); err != nil || c.State != store.ClaimDone {
		t.Fatalf("turn claim %+v, %v; want done", c, err)
	}
	return h
}

func TestAsyncReplyTimesOut(t *testing.T) {
	t.Parallel()
	testAsyncReplyTimesOut(t, false)
}

func testAsyncReplyTimesOut(t *testing.T, lost bool) *harness {
	h := start(t, options{lostAnswers: lost, env: map[string]string{"PARLEY_ASYNC_TIMEOUT": "2s"}})
	h.agent.fail = later
	turnID := intent.IDFor("evt#telegram#" + tgBotID + "#6001")

	h.postTelegram(telegramUpdate(6001, 43, "later please"))
	h.postTelegram(telegramUpdate(6002, 43, "hello"))
	// The thread moves on once the wait ends.
	got := texts(h.waitDelivered(2, 30*time.Second))
	if strings.Join(got, "|") != "echo: hello|5 characters, via telegram" {
		t.Fatalf("delivered %q", got)
	}
	if code, body := h.postReply("msg_late", replyBody(turnID, "too late")); code != http.StatusConflict {
		t.Fatalf("late reply: %d %s, want 409", code, body)
	}
	h.quiesce(30 * time.Second)
	if n := len(h.fake.Delivered()); n != 2 {
		t.Fatalf("%d delivered, want 2: the late reply must not be sent", n)
	}
	c, err := h.store.GetClaim(t.Context(), store.IntentKey(intent.IDFor("evt#telegram#"+tgBotID+"#6001")), time.Now())
	if err != nil || c.State != store.ClaimFailed || c.Reason != "async_timeout" {
		t.Fatalf("turn claim %+v, %v; want failed async_timeout", c, err)
	}
	if len(h.logs.lines("outcome", "async_timeout")) == 0 {
		t.Error("no async_timeout log line")
	}
	return h
}

// refused posts body to path, signed by the agent unless hdr is set, and
// checks the answer is code.
func (h *harness) refused(path, name string, code int, hdr http.Header, body []byte) {
	h.t.Helper()
	if hdr == nil {
		hdr = h.agentSigned("msg_"+strings.ReplaceAll(name, " ", "_"), body)
	}
	if got, resp := h.post(path, hdr, body); got != code {
		h.t.Errorf("%s %s: %d %s, want %d", path, name, got, resp, code)
	}
}

// postSend posts body to /send as the agent signs it, with webhook-id id.
func (h *harness) postSend(id string, body []byte) (int, string) {
	h.t.Helper()
	return h.post("/send", h.agentSigned(id, body), body)
}

func sendBody(thread, key, text string, extra map[string]any) []byte {
	m := map[string]any{"thread_key": thread, "idempotency_key": key, "text": text}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

type sendAck struct {
	Events []struct {
		EventID  string `json:"event_id"`
		Result   string `json:"result"`
		Reason   string `json:"reason"`
		IntentID string `json:"intent_id"`
	} `json:"events"`
}

func TestSend(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{
		"PARLEY_SEND_TARGETS": `["telegram:` + tgBotID + `:*"]`,
		"PARLEY_TRIAGE":       `{"daily_cap":1}`,
	}})
	thread := "telegram:" + tgBotID + ":44"

	// A person's message, then the agent's own, in one thread: in order.
	h.postTelegram(telegramUpdate(7001, 44, "hello"))
	code, body := h.postSend("msg_send_1", sendBody(thread, "reminder-1", "time to stretch", nil))
	var ack sendAck
	_ = json.Unmarshal([]byte(body), &ack)
	if code != http.StatusAccepted || len(ack.Events) != 1 || ack.Events[0].Result != "enqueued" || ack.Events[0].IntentID != intent.IDFor("evt#parley#"+thread+"#reminder-1") {
		t.Fatalf("send: %d %s", code, body)
	}
	// The same send again (a new post, the same idempotency key): one
	// delivery, the same intent.
	code, body = h.postSend("msg_send_2", sendBody(thread, "reminder-1", "time to stretch", nil))
	var again sendAck
	_ = json.Unmarshal([]byte(body), &again)
	if code != http.StatusAccepted || again.Events[0].Result != "duplicate" || again.Events[0].IntentID != ack.Events[0].IntentID {
		t.Fatalf("send again: %d %s", code, body)
	}
	got := texts(h.waitDelivered(3, 30*time.Second))
	if strings.Join(got, "|") != "echo: hello|5 characters, via telegram|time to stretch" {
		t.Fatalf("delivered %q", got)
	}

	// Refused, and nothing written.
	h.quiesce(30 * time.Second)
	writes := h.calls.Total(callcount.Writes)
	for name, tc := range map[string]struct {
		code int
		body []byte
		hdr  http.Header
	}{
		"unsigned":        {http.StatusUnauthorized, sendBody(thread, "k1", "x", nil), http.Header{}},
		"malformed":       {http.StatusBadRequest, []byte(`{"thread_key":`), nil},
		"no key":          {http.StatusBadRequest, []byte(`{"thread_key":"` + thread + `","text":"x"}`), nil},
		"bad relation":    {http.StatusBadRequest, sendBody(thread, "k2", "x", map[string]any{"relation": "spam"}), nil},
		"other bot":       {http.StatusForbidden, sendBody("telegram:7000000002:44", "k3", "x", nil), nil},
		"other platform":  {http.StatusForbidden, sendBody("slack:T0TEAM0001:C0CHAN0001", "k4", "x", nil), nil},
		"bad thread":      {http.StatusBadRequest, sendBody("telegram:"+tgBotID+":not-a-chat", "k5", "x", nil), nil},
		"over the limits": {http.StatusUnprocessableEntity, []byte(`{"thread_key":"` + thread + `","idempotency_key":"k6","envelope":` + string(bubblesEnvelope(5)) + `}`), nil},
	} {
		h.refused("/send", name, tc.code, tc.hdr, tc.body)
	}
	if w := h.calls.Total(callcount.Writes); w != writes {
		t.Errorf("refused sends wrote %d times", w-writes)
	}

	// Through triage when asked: the chat's daily cap of one holds.
	for i, want := range []string{"enqueued", "suppressed"} {
		code, body := h.postSend(fmt.Sprintf("msg_tri_%d", i), sendBody("telegram:"+tgBotID+":45", fmt.Sprintf("digest-%d", i), "digest", map[string]any{"triage": true, "relation": "broadcast"}))
		var a sendAck
		_ = json.Unmarshal([]byte(body), &a)
		if code != http.StatusAccepted || a.Events[0].Result != want {
			t.Fatalf("triaged send %d: %d %s, want %s", i, code, body, want)
		}
	}
	h.quiesce(30 * time.Second)
	if n := len(h.fake.Delivered()); n != 4 {
		t.Fatalf("%d delivered, want 4", n)
	}
}

func bubblesEnvelope(n int) []byte {
	var ms []map[string]string
	for i := range n {
		ms = append(ms, map[string]string{"id": fmt.Sprintf("b%d", i+1), "text": "x"})
	}
	b, _ := json.Marshal(map[string]any{"schema": "openab.turn.v1", "messages": ms})
	return b
}

func seqBody(turnID string, final bool, texts ...string) []byte {
	var ms []map[string]string
	for i, t := range texts {
		ms = append(ms, map[string]string{"id": fmt.Sprintf("s%d", i+1), "text": t})
	}
	b, _ := json.Marshal(map[string]any{"turn_id": turnID, "final": final, "envelope": map[string]any{"schema": "openab.turn.v1", "messages": ms}})
	return b
}

type replyAck struct {
	Bubbles int  `json:"bubbles"`
	Cut     int  `json:"cut"`
	Final   bool `json:"final"`
}

func (h *harness) postSeq(id string, body []byte) replyAck {
	h.t.Helper()
	code, resp := h.postReply(id, body)
	var a replyAck
	if err := json.Unmarshal([]byte(resp), &a); code != http.StatusOK || err != nil {
		h.t.Fatalf("post %s: %d %s", id, code, resp)
	}
	return a
}

// TestAsyncSequential: posts with final false are delivered as they
// arrive, in order, while the thread's next turn waits; the turn's bubble
// cap (4) counts every post and cuts without failing; a final post ends the
// turn; a retried post is delivered once.
func TestAsyncSequential(t *testing.T) {
	t.Parallel()
	testAsyncSequential(t, false)
}

func testAsyncSequential(t *testing.T, lost bool) *harness {
	h := start(t, options{lostAnswers: lost})
	h.agent.fail = later
	turnID := intent.IDFor("evt#telegram#" + tgBotID + "#8001")
	h.postTelegram(telegramUpdate(8001, 46, "later please"))
	h.waitAwait(turnID)
	h.postTelegram(telegramUpdate(8002, 46, "hello"))

	if a := h.postSeq("msg_s1", seqBody(turnID, false, "on it")); a.Bubbles != 1 || a.Cut != 0 || a.Final {
		t.Fatalf("first post: %+v", a)
	}
	if got := texts(h.waitDelivered(1, 20*time.Second)); got[0] != "on it" {
		t.Fatalf("delivered %q", got)
	}
	// The same post again: the same answer, nothing delivered twice.
	if a := h.postSeq("msg_s1", seqBody(turnID, false, "on it")); a.Bubbles != 1 {
		t.Fatalf("the first post again: %+v", a)
	}
	if a := h.postSeq("msg_s2", seqBody(turnID, false, "found two flights", "checking seats")); a.Bubbles != 2 || a.Cut != 0 {
		t.Fatalf("second post: %+v", a)
	}
	if a := h.postSeq("msg_s3", seqBody(turnID, false, "seat 12C is free", "cut by the cap")); a.Bubbles != 1 || a.Cut != 1 {
		t.Fatalf("third post: %+v, want one bubble through the cap and one cut", a)
	}
	if a := h.postSeq("msg_s4", seqBody(turnID, true, "also cut")); a.Bubbles != 0 || a.Cut != 1 || !a.Final {
		t.Fatalf("final post: %+v", a)
	}
	got := texts(h.waitDelivered(6, 30*time.Second))
	want := []string{"on it", "found two flights", "checking seats", "seat 12C is free", "echo: hello", "5 characters, via telegram"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	h.quiesce(30 * time.Second)
	if n := len(h.fake.Delivered()); n != 6 {
		t.Fatalf("%d delivered, want 6", n)
	}
	return h
}

// TestAsyncSequentialAbandoned: once a bubble of the turn failed for good,
// the next post is refused and the turn ends; the person keeps what
// arrived, and the thread moves on.
func TestAsyncSequentialAbandoned(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.fail = later
	turnID := intent.IDFor("evt#telegram#" + tgBotID + "#8101")
	h.postTelegram(telegramUpdate(8101, 47, "later please"))
	h.waitAwait(turnID)
	h.postTelegram(telegramUpdate(8102, 47, "hello"))
	h.postSeq("msg_a1", seqBody(turnID, false, "on it"))
	h.waitDelivered(1, 20*time.Second)
	h.fake.Inject(fakeplatform.Fault{Platform: message.Telegram, Status: http.StatusForbidden, Error: "Forbidden: bot was blocked by the user"})
	h.postSeq("msg_a2", seqBody(turnID, false, "this one fails"))
	post := intent.IDFor(turnID + "#post#msg_a2")
	deadline := time.Now().Add(20 * time.Second)
	for {
		in, err := h.store.GetIntent(t.Context(), post)
		if err == nil && in.Units[0].State == message.UnitFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the failing bubble did not fail: %+v, %v", in, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body := h.postReply("msg_a3", seqBody(turnID, false, "never sent")); code != http.StatusConflict || !strings.Contains(body, "abandoned") {
		t.Fatalf("a post after the failure: %d %s, want 409 abandoned", code, body)
	}
	got := texts(h.waitDelivered(3, 40*time.Second))
	if strings.Join(got, "|") != "on it|echo: hello|5 characters, via telegram" {
		t.Fatalf("delivered %q", got)
	}
	if c, err := h.store.GetClaim(t.Context(), store.IntentKey(intent.IDFor("evt#telegram#"+tgBotID+"#8101")), time.Now()); err != nil || c.Reason != "async_abandoned" {
		t.Fatalf("turn claim %+v, %v", c, err)
	}
}

// TestAsyncReplace: a post may replace a bubble an earlier post of the
// turn sent: an edit where the platform can edit (Telegram), a new message
// where it cannot (LINE).
func TestAsyncReplace(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.fail = later

	turnID := intent.IDFor("evt#telegram#" + tgBotID + "#8201")
	h.postTelegram(telegramUpdate(8201, 48, "later please"))
	h.waitAwait(turnID)
	h.postSeq("msg_r1", seqBody(turnID, false, "thinking…"))
	first := h.waitDelivered(1, 20*time.Second)[0]
	if code, body := h.postReply("msg_r_bad", []byte(`{"turn_id":"`+turnID+`","final":false,"replace":"nope","text":"x"}`)); code != http.StatusUnprocessableEntity {
		t.Fatalf("replacing no bubble: %d %s", code, body)
	}
	body, _ := json.Marshal(map[string]any{"turn_id": turnID, "replace": "s1", "text": "the answer is 42"})
	if code, resp := h.postReply("msg_r2", body); code != http.StatusOK {
		t.Fatalf("final replace: %d %s", code, resp)
	}
	deadline := time.Now().Add(20 * time.Second)
	for h.lastEdit(first).Text != "the answer is 42" {
		if time.Now().After(deadline) {
			t.Fatalf("the bubble was not edited: %+v", h.fake.Recorder().Edits())
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.quiesce(20 * time.Second)
	if n := len(h.fake.Delivered()); n != 1 {
		t.Fatalf("%d delivered on Telegram, want 1 (the answer is an edit)", n)
	}

	// LINE cannot edit: the replacement is a new message.
	lineTurn := intent.IDFor("evt#line#" + lineBot + "#01KR00000000000000000000A1")
	h.postLine(lineText("01KR00000000000000000000A1", lineAda, "later please", h.clock.Now()))
	h.waitAwait(lineTurn)
	h.postSeq("msg_l1", seqBody(lineTurn, false, "thinking…"))
	body, _ = json.Marshal(map[string]any{"turn_id": lineTurn, "replace": "s1", "text": "the answer is 42"})
	if code, resp := h.postReply("msg_l2", body); code != http.StatusOK {
		t.Fatalf("LINE replace: %d %s", code, resp)
	}
	got := texts(h.waitDelivered(3, 20*time.Second))
	if strings.Join(got[1:], "|") != "thinking…|the answer is 42" {
		t.Fatalf("LINE delivered %q", got)
	}
}

// TestReplyPostedBeforeThe202IsHeld_Finding2: an agent that posts its
// reply from a background task can post before Parley has read its 202;
// that post was refused 404 unknown_turn and the turn timed out with
// nothing sent. A post for a turn Parley has sent and not settled is held
// now, and honoured when the 202 lands: here the agent posts a sequential
// bubble and its final reply, then answers the turn request 202.
func TestReplyPostedBeforeThe202IsHeld_Finding2(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	turnID := intent.IDFor("evt#telegram#" + tgBotID + "#8301")
	var mu sync.Mutex
	var answers []string
	h.agent.fail = func(req agent.TurnRequest) (int, bool) {
		if !strings.HasPrefix(req.Event.Text, "early") {
			return 0, false
		}
		for _, post := range []struct {
			id   string
			body []byte
		}{
			{"msg_early_1", seqBody(req.TurnID, false, "on it")},
			{"msg_early_2", replyBody(req.TurnID, "here it is")},
		} {
			code, body := h.postReply(post.id, post.body)
			mu.Lock()
			answers = append(answers, fmt.Sprint(code, " ", strings.TrimSpace(body)))
			mu.Unlock()
		}
		return http.StatusAccepted, true
	}
	if code, _ := h.postTelegram(telegramUpdate(8301, 49, "early bird")); code != http.StatusOK {
		t.Fatalf("webhook: %d", code)
	}
	h.postTelegram(telegramUpdate(8302, 49, "hello"))
	got := texts(h.waitDelivered(4, 30*time.Second))
	mu.Lock()
	defer mu.Unlock()
	want := []string{"on it", "here it is", "echo: hello", "5 characters, via telegram"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("delivered %q, want %q; the agent's posts were answered %q", got, want, answers)
	}
	for _, a := range answers {
		if !strings.HasPrefix(a, "200 ") {
			t.Errorf("an early post was answered %s, want 200", a)
		}
	}
	h.quiesce(30 * time.Second)
	if c, err := h.store.GetClaim(t.Context(), store.IntentKey(turnID), time.Now()); err != nil || c.State != store.ClaimDone {
		t.Fatalf("turn claim %+v, %v; want done", c, err)
	}
}
