package line

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/shared/message"
)

var t0 = time.Date(2025, 11, 29, 16, 0, 30, 0, time.UTC)

// clock is the time the fake and the client share; tests move it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// call is one request that reached the fake.
type call struct {
	Path     string
	RetryKey string
	Auth     string
	Body     map[string]json.RawMessage
	Raw      string
}

type rig struct {
	api   *fakeline.API
	rec   *fakeapi.Recorder
	clock *clock
	c     *Client

	mu    sync.Mutex
	calls []call
}

func setup(t *testing.T, opt fakeline.Options) *rig {
	t.Helper()
	r := &rig{clock: &clock{now: t0}}
	r.rec = fakeapi.New(fakeapi.Options{Now: r.clock.Now})
	opt.Token, opt.Recorder = testToken, r.rec
	r.api = fakeline.New(opt)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		c := call{Path: req.URL.Path, RetryKey: req.Header.Get(RetryKeyHeader), Auth: req.Header.Get("Authorization"), Raw: string(b)}
		_ = json.Unmarshal(b, &c.Body)
		r.mu.Lock()
		r.calls = append(r.calls, c)
		r.mu.Unlock()
		req.Body = io.NopCloser(strings.NewReader(string(b)))
		r.api.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.c = &Client{Token: testToken, BotUserID: bot, BaseURL: srv.URL, HTTP: srv.Client(), Now: r.clock.Now}
	return r
}

func (r *rig) paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		out = append(out, c.Path)
	}
	return out
}

func (r *rig) last() call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[len(r.calls)-1]
}

const (
	replyPath   = "/v2/bot/message/reply"
	pushPath    = "/v2/bot/message/push"
	loadingPath = "/v2/bot/chat/loading/start"
)

func classOf(t *testing.T, err error, want message.FailureClass) *message.SendError {
	t.Helper()
	var se *message.SendError
	if !errors.As(err, &se) || se.Class != want {
		t.Fatalf("error %v, want class %s", err, want)
	}
	if strings.Contains(err.Error(), testToken) {
		t.Fatalf("the error shows the token: %v", err)
	}
	return se
}

func out(text, key string, seq int, rc *message.ReplyContext) message.Outgoing {
	return message.Outgoing{Thread: chat(ada), Content: message.Text(text), IdempotencyKey: key, Sequence: seq, ReplyContext: rc}
}

// TestReplyThenPush: the first bubble answers with the event's reply token
// (free of the push quota); the next ones are pushed, each with its unit's
// retry key.
func TestReplyThenPush(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	rc := &message.ReplyContext{Token: r.api.IssueReplyToken(ada), Until: t0.Add(50 * time.Second)}

	first, err := r.c.Send(t.Context(), out("on it", "in1#u0", 0, rc))
	if err != nil {
		t.Fatalf("first bubble: %v", err)
	}
	if c := r.last(); c.Path != replyPath || c.RetryKey != "" || !strings.Contains(c.Raw, rc.Token) {
		t.Fatalf("the first bubble went %s with retry key %q: %s", c.Path, c.RetryKey, c.Raw)
	}
	second, err := r.c.Send(t.Context(), out("done: table for two at 8pm", "in1#u1", 1, rc))
	if err != nil {
		t.Fatalf("second bubble: %v", err)
	}
	if c := r.last(); c.Path != pushPath || c.RetryKey != RetryKey("in1#u1") || string(c.Body["to"]) != `"`+ada+`"` {
		t.Fatalf("the second bubble went %s with retry key %q: %s", c.Path, c.RetryKey, c.Raw)
	}
	got := r.rec.Delivered()
	if len(got) != 2 || got[0].Chat != ada || got[1].Chat != ada || got[0].Text != "on it" {
		t.Fatalf("delivered %+v", got)
	}
	if first.MessageIDs[0] != got[0].MessageID || second.MessageIDs[0] != got[1].MessageID {
		t.Fatalf("receipts %v %v, delivered %s %s", first, second, got[0].MessageID, got[1].MessageID)
	}
	if len(r.paths()) != 2 {
		t.Fatalf("calls %v", r.paths())
	}
}

// TestRefusedReplyTokenFallsBackToPush: LINE refuses a used, expired or
// unknown reply token with 400 "Invalid reply token": nothing was posted, so
// the same Send pushes instead, with the unit's retry key.
func TestRefusedReplyTokenFallsBackToPush(t *testing.T) {
	t.Parallel()
	for name, prepare := range map[string]func(r *rig) string{
		"Used": func(r *rig) string {
			token := r.api.IssueReplyToken(ada)
			if _, err := r.c.Send(t.Context(), out("an earlier answer", "in0#u0", 0, &message.ReplyContext{Token: token, Until: t0.Add(time.Minute)})); err != nil {
				t.Fatal(err)
			}
			return token
		},
		// LINE's own clock ran out sooner than the minute Parley allows.
		"ExpiredEarly": func(r *rig) string {
			token := r.api.IssueReplyToken(ada)
			r.clock.Add(40 * time.Second)
			return token
		},
		"NeverIssued": func(*rig) string { return "0123456789abcdef0123456789abcdef" },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := setup(t, fakeline.Options{ReplyTokenTTL: 30 * time.Second})
			token := prepare(r)
			before := len(r.paths())
			rc := &message.ReplyContext{Token: token, Until: r.clock.Now().Add(30 * time.Second)}
			receipt, err := r.c.Send(t.Context(), out("what's on tomorrow", "in1#u0", 0, rc))
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			paths := r.paths()[before:]
			if len(paths) != 2 || paths[0] != replyPath || paths[1] != pushPath {
				t.Fatalf("calls %v, want a refused reply then a push", paths)
			}
			if k := r.last().RetryKey; k != RetryKey("in1#u0") {
				t.Fatalf("the push's retry key %q", k)
			}
			got := r.rec.Delivered()
			if d := got[len(got)-1]; d.Text != "what's on tomorrow" || receipt.MessageIDs[0] != d.MessageID {
				t.Fatalf("receipt %v, delivered %+v", receipt, d)
			}
		})
	}
}

// TestStaleReplyContextIsNotTried: a reply context with less than the
// margin left, or none, goes straight to push: one call.
func TestStaleReplyContextIsNotTried(t *testing.T) {
	t.Parallel()
	for name, rc := range map[string]*message.ReplyContext{
		"AlmostExpired": {Token: "t", Until: t0.Add(2 * time.Second)},
		"Expired":       {Token: "t", Until: t0.Add(-time.Second)},
		"NoToken":       {Until: t0.Add(time.Minute)},
		"None":          nil,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := setup(t, fakeline.Options{})
			if _, err := r.c.Send(t.Context(), out("hi", "in#u0", 0, rc)); err != nil {
				t.Fatal(err)
			}
			if p := r.paths(); len(p) != 1 || p[0] != pushPath {
				t.Fatalf("calls %v", p)
			}
		})
	}
}

// TestPushRetryKey: every attempt of a unit carries the same retry key, so
// LINE posts it once; a resend after a lost answer is a 409, which says the
// unit was sent (conflict: delivery marks it sent).
func TestPushRetryKey(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	m := out("the plan", "01JINTENT#u2", 2, nil)

	r.rec.Inject(fakeapi.Fault{DropResponseAfterCommit: true})
	_, err := r.c.Send(t.Context(), m)
	classOf(t, err, message.FailUnknown)
	first := r.last().RetryKey

	_, err = r.c.Send(t.Context(), m)
	se := classOf(t, err, message.FailConflict)
	if !strings.Contains(se.Reason, "f0000000-0000-4000-8000-") {
		t.Fatalf("the conflict does not name the accepted request: %q", se.Reason)
	}
	if again := r.last().RetryKey; again != first || first != RetryKey("01JINTENT#u2") {
		t.Fatalf("retry keys %q then %q", first, again)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(first) {
		t.Fatalf("retry key %q is not a version 5 UUID", first)
	}
	if n := len(r.rec.Delivered()); n != 1 {
		t.Fatalf("%d deliveries of one unit", n)
	}
	// Another unit has its own key.
	if _, err := r.c.Send(t.Context(), out("the plan", "01JINTENT#u3", 3, nil)); err != nil {
		t.Fatalf("the next unit: %v", err)
	}
}

// TestPushWithoutIdempotencyKey: nothing to derive a key from, so none is
// sent (a fixed key would make every such push a replay).
func TestPushWithoutIdempotencyKey(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	for range 2 {
		if _, err := r.c.Send(t.Context(), out("hi", "", 0, nil)); err != nil {
			t.Fatal(err)
		}
		if k := r.last().RetryKey; k != "" {
			t.Fatalf("retry key %q", k)
		}
	}
}

// TestMonthlyLimit: a spent push quota is permission (no retry within the
// unit's age fixes it), named as such; replies, which are free, still go.
func TestMonthlyLimit(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{MonthlyQuota: 1})
	if _, err := r.c.Send(t.Context(), out("one", "in#u0", 0, nil)); err != nil {
		t.Fatal(err)
	}
	_, err := r.c.Send(t.Context(), out("two", "in#u1", 1, nil))
	se := classOf(t, err, message.FailPermission)
	if !strings.Contains(se.Reason, "monthly message limit reached") || se.RetryAfter != 0 || strings.Contains(err.Error(), "two") {
		t.Fatalf("reason %q, retry after %s: %v", se.Reason, se.RetryAfter, err)
	}
	rc := &message.ReplyContext{Token: r.api.IssueReplyToken(ada), Until: t0.Add(time.Minute)}
	if _, err := r.c.Send(t.Context(), out("three", "in2#u0", 0, rc)); err != nil {
		t.Fatalf("a reply past the quota: %v", err)
	}
}

// TestClassification: the answers the fake cannot give.
func TestClassification(t *testing.T) {
	t.Parallel()
	answer := func(status int, header map[string]string, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			for k, v := range header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}
	}
	fresh := &message.ReplyContext{Token: "t", Until: t0.Add(time.Minute)}
	cases := []struct {
		name       string
		h          http.HandlerFunc
		m          message.Outgoing
		class      message.FailureClass
		retryAfter time.Duration
		calls      int
	}{
		{"PushConflictWithoutAcceptedID", answer(409, nil, `{"message":"Conflict"}`), out("x", "k", 1, nil), message.FailUnknown, 0, 1},
		{"ReplyConflict", answer(409, map[string]string{AcceptedRequestHeader: "r1"}, `{"message":"Conflict"}`), out("x", "k", 0, fresh), message.FailUnknown, 0, 1},
		{"RetryAfterHonoured", answer(429, map[string]string{"Retry-After": "12"}, `{"message":"The API rate limit has been exceeded. Try again later."}`), out("x", "k", 1, nil), message.FailRateLimit, 12 * time.Second, 1},
		{"ReplyRateLimited", answer(429, nil, `{"message":"Too Many Requests"}`), out("x", "k", 0, fresh), message.FailRateLimit, RateLimitWait, 1},
		{"NoSentMessages", answer(200, nil, `{"sentMessages":[]}`), out("x", "k", 1, nil), message.FailUnknown, 0, 1},
		{"NotJSON", answer(200, nil, `<html>hi</html>`), out("x", "k", 1, nil), message.FailUnknown, 0, 1},
		// A reply refused for its content is not retried as a push: the
		// push would be refused the same way.
		{"ReplyInvalidContent", answer(400, nil, `{"message":"The request body has 1 error(s)","details":[{"message":"Length must be between 0 and 5000","property":"messages[0].text"}]}`), out("x", "k", 0, fresh), message.FailInvalidPayload, 0, 1},
		{"ReplyUnavailable", answer(503, nil, `upstream`), out("x", "k", 0, fresh), message.FailUnknown, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := 0
			var mu sync.Mutex
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				n++
				mu.Unlock()
				tc.h(w, r)
			}))
			t.Cleanup(srv.Close)
			c := &Client{Token: testToken, BotUserID: bot, BaseURL: srv.URL, HTTP: srv.Client(), Now: func() time.Time { return t0 }}
			_, err := c.Send(t.Context(), tc.m)
			se := classOf(t, err, tc.class)
			if se.RetryAfter != tc.retryAfter {
				t.Fatalf("RetryAfter %s, want %s", se.RetryAfter, tc.retryAfter)
			}
			mu.Lock()
			defer mu.Unlock()
			if n != tc.calls {
				t.Fatalf("%d calls, want %d", n, tc.calls)
			}
		})
	}
}

// TestReplyLostAnswerIsUnknown: a reply whose answer was lost may have been
// posted, and no retry key guards its resend: unknown, saying so.
func TestReplyLostAnswerIsUnknown(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	r.rec.Inject(fakeapi.Fault{DropResponseAfterCommit: true})
	rc := &message.ReplyContext{Token: r.api.IssueReplyToken(ada), Until: t0.Add(time.Minute)}
	_, err := r.c.Send(t.Context(), out("hi", "in#u0", 0, rc))
	se := classOf(t, err, message.FailUnknown)
	if !strings.Contains(se.Reason, "no retry key") {
		t.Fatalf("reason %q", se.Reason)
	}
}

// TestSendRequest: the request as LINE gets it: a bearer token, JSON, one
// plain text message (inert: LINE parses nothing in "text"), the quote.
func TestSendRequest(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	m := out("@all <b>hi</b> {name} $ *x*", "in#u1", 1, nil)
	m.ReplyTo = "q3Plxr4AgKd1a0F1oK0Gz9vN7-Ada1"
	if _, err := r.c.Send(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	c := r.last()
	want := `{"to":"` + ada + `","messages":[{"type":"text","text":"@all \u003cb\u003ehi\u003c/b\u003e {name} $ *x*","quoteToken":"q3Plxr4AgKd1a0F1oK0Gz9vN7-Ada1"}]}`
	if c.Raw != want || c.Auth != "Bearer "+testToken {
		t.Fatalf("request %s (auth %q)\nwant    %s", c.Raw, c.Auth, want)
	}
	if d := r.rec.Delivered()[0]; d.ReplyTo != m.ReplyTo || d.Text != m.Content.Text {
		t.Fatalf("delivered %+v", d)
	}
}

// TestForeignAndEmpty: a thread of another bot, a thread without a chat and
// content of no known kind are refused without a call.
func TestForeignAndEmpty(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	other := out("hi", "k", 0, nil)
	other.Thread.Account = grace
	noChat := out("hi", "k", 0, nil)
	noChat.Thread.Chat = ""
	empty := out("", "k", 0, nil)
	for name, m := range map[string]message.Outgoing{"OtherBot": other, "NoChat": noChat, "Empty": empty} {
		_, err := r.c.Send(t.Context(), m)
		classOf(t, err, message.FailInvalidPayload)
		if name != "Empty" {
			classOf(t, r.c.Acknowledge(t.Context(), message.Event{Thread: m.Thread}, "x"), message.FailInvalidPayload)
		}
	}
	if p := r.paths(); len(p) != 0 {
		t.Fatalf("calls %v", p)
	}
	// Unscoped (no LINE_BOT_USER_ID), another account is not refused.
	r.c.BotUserID = ""
	if _, err := r.c.Send(t.Context(), other); err != nil {
		t.Fatalf("an unscoped client refused %v", err)
	}
}

// TestTyping: the loading animation, in one-to-one chats only.
func TestTyping(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	if err := r.c.Typing(t.Context(), chat(ada)); err != nil {
		t.Fatalf("Typing: %v", err)
	}
	if c := r.last(); c.Path != loadingPath || string(c.Body["chatId"]) != `"`+ada+`"` || string(c.Body["loadingSeconds"]) != "10" {
		t.Fatalf("loading call %+v", c)
	}
	if a := r.rec.Actions(); len(a) != 1 || a[0].Chat != ada || a[0].Action != "loading" {
		t.Fatalf("actions %+v", a)
	}
	for _, id := range []string{group, "R200000000000000000000000000000f1"} {
		if err := r.c.Typing(t.Context(), chat(id)); err != nil {
			t.Fatalf("Typing in %s: %v", id, err)
		}
	}
	if p := r.paths(); len(p) != 1 {
		t.Fatalf("calls %v: a group or room shows no animation and is not asked", p)
	}
	bad := &Client{Token: "wrong", BotUserID: bot, BaseURL: r.c.BaseURL, HTTP: r.c.HTTP}
	classOf(t, bad.Typing(t.Context(), chat(ada)), message.FailAuth)
}

// TestAcknowledge: a postback needs no acknowledgement; a notice is a reply
// with the press's token while fresh, a push otherwise, keyed by the press
// so a retried acknowledgement is posted once.
func TestAcknowledge(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	press := message.Event{
		Platform: message.LINE, Account: bot, EventID: "01KB7ZE5S6T7V8W9X0Y1Z2A3B4", Kind: message.KindAnswer,
		Thread: chat(group), Sender: message.Sender{ID: grace}, Press: &message.Press{Data: "q1:0:0"},
		ReplyContext: &message.ReplyContext{Token: r.api.IssueReplyToken(group), Until: t0.Add(time.Minute)},
	}
	if err := r.c.Acknowledge(t.Context(), press, ""); err != nil || len(r.paths()) != 0 {
		t.Fatalf("an empty notice: %v, calls %v", err, r.paths())
	}
	if err := r.c.Acknowledge(t.Context(), press, "Only the person who was asked can answer."); err != nil {
		t.Fatalf("Acknowledge: %v", err)
	}
	if c := r.last(); c.Path != replyPath {
		t.Fatalf("the notice went %s", c.Path)
	}
	late := press
	late.ReplyContext = &message.ReplyContext{Token: "spent", Until: t0.Add(-time.Second)}
	for range 2 {
		if err := r.c.Acknowledge(t.Context(), late, "This question is closed."); err != nil {
			t.Fatalf("Acknowledge, pushed: %v", err)
		}
		if c := r.last(); c.Path != pushPath || c.RetryKey != RetryKey("ack#"+press.Key()) {
			t.Fatalf("the late notice went %s with key %q", c.Path, c.RetryKey)
		}
	}
	got := r.rec.Delivered()
	if len(got) != 2 || got[0].Chat != group || got[1].Text != "This question is closed." {
		t.Fatalf("delivered %+v: the repeated notice must be posted once", got)
	}
}

// TestAsk: a question goes as a text with quick replies, by Ask or Send;
// Ask takes nothing else.
func TestAsk(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	q := message.Outgoing{Thread: chat(ada), IdempotencyKey: "in#u0", Content: message.Content{Prompt: &message.Prompt{
		Text: "Which city?", Options: []message.Choice{{Label: "Lisbon", Data: "q1:0:0"}, {Label: "Porto", Data: "q1:0:1"}},
		Actions: []message.Choice{{Label: "Skip", Data: "q1:x"}},
	}}}
	for i, ask := range []func(message.Outgoing) (message.Receipt, error){
		func(q message.Outgoing) (message.Receipt, error) { return r.c.Ask(t.Context(), q) },
		func(q message.Outgoing) (message.Receipt, error) { return r.c.Send(t.Context(), q) },
	} {
		q.IdempotencyKey = "in#u" + string(rune('0'+i))
		if _, err := ask(q); err != nil {
			t.Fatalf("Ask: %v", err)
		}
		var body LinePushRequest
		if err := json.Unmarshal([]byte(r.last().Raw), &body); err != nil {
			t.Fatal(err)
		}
		msg := body.Messages[0]
		if msg.Text != "Which city?" || msg.QuickReply == nil || len(msg.QuickReply.Items) != 3 ||
			msg.QuickReply.Items[1].Action != (LinePostbackAction{Type: "postback", Label: "Porto", Data: "q1:0:1", DisplayText: "Porto"}) {
			t.Fatalf("sent %+v", msg)
		}
	}
	_, err := r.c.Ask(t.Context(), out("not a question", "k", 0, nil))
	classOf(t, err, message.FailInvalidPayload)
}

func TestRetryKey(t *testing.T) {
	t.Parallel()
	// RFC 9562's algorithm, checked against Python's uuid.uuid5(
	// uuid.NAMESPACE_DNS, "python.org").
	dns := [16]byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	if got := uuid5(dns, "python.org"); got != "886313e1-3b8a-5372-9b90-0c9aee199e5d" {
		t.Fatalf("uuid5 = %s", got)
	}
	a, b := RetryKey("01JINTENT#u0"), RetryKey("01JINTENT#u1")
	if a == b || a != RetryKey("01JINTENT#u0") {
		t.Fatalf("keys %s %s", a, b)
	}
}

// TestReplyOfSeveral: a reply's first bubbles go in one free call, each
// with its own message id; a lost answer is settled by the token itself,
// which LINE takes once: sent again at once, refused as spent, it proves
// the first call posted them (nothing posted twice), and accepted, that
// the first did not (a 5xx before LINE took it).
func TestReplyOfSeveral(t *testing.T) {
	t.Parallel()
	three := func(rc *message.ReplyContext) []message.Outgoing {
		return []message.Outgoing{out("one", "in#u0", 0, rc), out("two", "in#u1", 1, rc), out("three", "in#u2", 2, rc)}
	}
	t.Run("Sent", func(t *testing.T) {
		t.Parallel()
		r := setup(t, fakeline.Options{})
		rc := &message.ReplyContext{Token: r.api.IssueReplyToken(ada), Until: t0.Add(time.Minute)}
		if n := r.c.Replies(out("one", "in#u0", 0, rc)); n != MaxReplyMessages {
			t.Fatalf("Replies = %d, want %d", n, MaxReplyMessages)
		}
		rcs, ok, err := r.c.Reply(t.Context(), three(rc))
		if err != nil || !ok || len(rcs) != 3 || rcs[0].MessageIDs[0] == rcs[2].MessageIDs[0] {
			t.Fatalf("Reply: %v %v %v", rcs, ok, err)
		}
		if p := r.paths(); len(p) != 1 || p[0] != replyPath || string(r.last().Body["messages"])[0] != '[' || r.last().RetryKey != "" {
			t.Fatalf("calls %v: want one reply, without a retry key", p)
		}
		if d := r.rec.Delivered(); len(d) != 1 || d[0].Text != "one\n\ntwo\n\nthree" {
			t.Fatalf("delivered %+v", d)
		}
	})
	t.Run("LostAnswer", func(t *testing.T) {
		t.Parallel()
		r := setup(t, fakeline.Options{})
		r.rec.Inject(fakeapi.Fault{DropResponseAfterCommit: true})
		rc := &message.ReplyContext{Token: r.api.IssueReplyToken(ada), Until: t0.Add(time.Minute)}
		rcs, ok, err := r.c.Reply(t.Context(), three(rc))
		if err != nil || !ok || len(rcs) != 3 || len(r.rec.Delivered()) != 1 || len(r.paths()) != 2 {
			t.Fatalf("Reply after a lost answer: %v %v %v, %d delivered in %v", rcs, ok, err, len(r.rec.Delivered()), r.paths())
		}
	})
	t.Run("FailedBeforeLINETookIt", func(t *testing.T) {
		t.Parallel()
		r := setup(t, fakeline.Options{})
		r.rec.Inject(fakeapi.Fault{Status: http.StatusInternalServerError})
		rc := &message.ReplyContext{Token: r.api.IssueReplyToken(ada), Until: t0.Add(time.Minute)}
		rcs, ok, err := r.c.Reply(t.Context(), three(rc))
		if err != nil || !ok || len(rcs) != 3 || len(rcs[1].MessageIDs) != 1 || len(r.rec.Delivered()) != 1 {
			t.Fatalf("Reply after a 5xx: %v %v %v, %d delivered", rcs, ok, err, len(r.rec.Delivered()))
		}
	})
	t.Run("StaleOrRefused", func(t *testing.T) {
		t.Parallel()
		r := setup(t, fakeline.Options{})
		stale := &message.ReplyContext{Token: r.api.IssueReplyToken(ada), Until: t0.Add(2 * time.Second)}
		unknown := &message.ReplyContext{Token: "never-issued", Until: t0.Add(time.Minute)}
		for _, rc := range []*message.ReplyContext{stale, unknown, nil} {
			if rcs, ok, err := r.c.Reply(t.Context(), three(rc)); ok || err != nil || rcs != nil {
				t.Fatalf("Reply with %+v: %v %v %v; want nothing sent", rc, rcs, ok, err)
			}
		}
		if len(r.rec.Delivered()) != 0 {
			t.Fatal("a refused reply was delivered")
		}
	})
}
