package fakeline_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/line"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	token = "parley-line-test-channel-access-token"
	ada   = "Uada00000000000000000000000000042"
	group = "C9e0000000000000000000000000c0de1"
	key   = "6b3e1a92-4c7d-4f0e-9a51-2d86c30f7b44"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type rig struct {
	api   *fakeline.API
	rec   *fakeapi.Recorder
	clock *clock
	srv   *httptest.Server
}

func setup(t *testing.T, opt fakeline.Options) *rig {
	t.Helper()
	r := &rig{clock: &clock{now: time.Unix(1764432000, 0)}}
	r.rec = fakeapi.New(fakeapi.Options{Now: r.clock.Now})
	opt.Token, opt.Recorder = token, r.rec
	r.api = fakeline.New(opt)
	r.srv = httptest.NewServer(r.api)
	t.Cleanup(r.srv.Close)
	return r
}

type answer struct {
	Status       int
	Header       http.Header
	Message      string `json:"message"`
	Details      []struct{ Message, Property string }
	SentMessages []struct{ ID, QuoteToken string }
}

func (r *rig) call(t *testing.T, method, path string, header map[string]string, body string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, r.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := r.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s answered %d %q: not LINE's format", path, resp.StatusCode, b)
	}
	a.Status, a.Header = resp.StatusCode, resp.Header
	if a.Header.Get(fakeline.RequestIDHeader) == "" {
		t.Fatalf("%s answered without %s", path, fakeline.RequestIDHeader)
	}
	return a
}

func push(to, messages string) string { return `{"to":"` + to + `","messages":` + messages + `}` }

func text(s string) string {
	b, _ := json.Marshal(s)
	return `{"type":"text","text":` + string(b) + `}`
}

func quick(items ...string) string {
	return `[{"type":"text","text":"?","quickReply":{"items":[` + strings.Join(items, ",") + `]}}]`
}

func postback(label, data string) string {
	l, _ := json.Marshal(label)
	d, _ := json.Marshal(data)
	return `{"type":"action","action":{"type":"postback","label":` + string(l) + `,"data":` + string(d) + `,"displayText":` + string(l) + `}}`
}

// TestValidation: the Messaging API's own refusals, in its format.
func TestValidation(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	const p = "/v2/bot/message/push"
	thirteen := make([]string, 14)
	for i := range thirteen {
		thirteen[i] = postback("b", "d")
	}
	family := strings.Repeat("👨‍👩‍👧", 20) // 20 grapheme clusters of 5 code points each
	cases := []struct {
		name, method, path string
		header             map[string]string
		body               string
		status             int
		message, property  string
	}{
		{"NoAuthorization", "POST", p, map[string]string{"Authorization": ""}, push(ada, "["+text("x")+"]"), 401, "Authorization header required. Must follow the scheme, 'Authorization: Bearer <ACCESS TOKEN>'", ""},
		{"WrongToken", "POST", p, map[string]string{"Authorization": "Bearer nope"}, push(ada, "["+text("x")+"]"), 401, "Authentication failed. Confirm that the access token in the authorization header is valid.", ""},
		{"NotJSON", "POST", p, nil, `{"to":`, 400, "The request body could not be parsed as JSON", ""},
		{"NotAnID", "POST", p, nil, push("lobby", "["+text("x")+"]"), 400, "The request body has 1 error(s)", "to"},
		{"UpperCaseID", "POST", p, nil, push(strings.ToUpper(ada), "["+text("x")+"]"), 400, "The request body has 1 error(s)", "to"},
		{"NoMessages", "POST", p, nil, push(ada, "[]"), 400, "The request body has 1 error(s)", "messages"},
		{"SixMessages", "POST", p, nil, push(ada, "["+strings.Repeat(text("x")+",", 5)+text("x")+"]"), 400, "The request body has 1 error(s)", "messages"},
		{"EmptyText", "POST", p, nil, push(ada, "["+text("")+"]"), 400, "The request body has 1 error(s)", "messages[0].text"},
		{"TooLong", "POST", p, nil, push(ada, "["+text(strings.Repeat("😀", 2500)+"a")+"]"), 400, "The request body has 1 error(s)", "messages[0].text"},
		{"NotText", "POST", p, nil, push(ada, `[{"type":"sticker","packageId":"1","stickerId":"1"}]`), 400, "The request body has 1 error(s)", "messages[0].type"},
		{"FourteenQuickReplies", "POST", p, nil, push(ada, quick(thirteen...)), 400, "The request body has 1 error(s)", "messages[0].quickReply.items"},
		{"LabelOf21", "POST", p, nil, push(ada, quick(postback(strings.Repeat("a", 21), "d"))), 400, "The request body has 1 error(s)", "messages[0].quickReply.items[0].action.label"},
		{"EmptyLabel", "POST", p, nil, push(ada, quick(postback("", "d"))), 400, "The request body has 1 error(s)", "messages[0].quickReply.items[0].action.label"},
		{"DataOf301", "POST", p, nil, push(ada, quick(postback("a", strings.Repeat("d", 301)))), 400, "The request body has 1 error(s)", "messages[0].quickReply.items[0].action.data"},
		{"RetryKeyNotAUUID", "POST", p, map[string]string{fakeline.RetryKeyHeader: "unit-1"}, push(ada, "["+text("x")+"]"), 400, "The retry key is invalid. Specify a UUID in hexadecimal notation.", ""},
		{"RetryKeyOnAReply", "POST", "/v2/bot/message/reply", map[string]string{fakeline.RetryKeyHeader: key}, `{"replyToken":"t","messages":[` + text("x") + `]}`, 400, "The X-Line-Retry-Key header can't be specified for this API", ""},
		{"ReplyWithoutToken", "POST", "/v2/bot/message/reply", nil, `{"messages":[` + text("x") + `]}`, 400, "The request body has 1 error(s)", "replyToken"},
		{"UnknownReplyToken", "POST", "/v2/bot/message/reply", nil, `{"replyToken":"t","messages":[` + text("x") + `]}`, 400, fakeline.InvalidReplyTokenMessage, ""},
		{"LoadingInAGroup", "POST", "/v2/bot/chat/loading/start", nil, `{"chatId":"` + group + `"}`, 400, "The request body has 1 error(s)", "chatId"},
		{"LoadingSeconds7", "POST", "/v2/bot/chat/loading/start", nil, `{"chatId":"` + ada + `","loadingSeconds":7}`, 400, "The request body has 1 error(s)", "loadingSeconds"},
		{"NotTheAPI", "POST", "/v2/bot/elsewhere", nil, `{}`, 404, "Not found", ""},
		{"Get", "GET", p, nil, ``, 405, "Method Not Allowed", ""},
		{"FormBody", "POST", p, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, `to=x`, 415, "The content type, 'application/x-www-form-urlencoded', is not supported by the API.", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := r.call(t, tc.method, tc.path, tc.header, tc.body)
			if a.Status != tc.status || a.Message != tc.message {
				t.Fatalf("answered %d %q, want %d %q", a.Status, a.Message, tc.status, tc.message)
			}
			if tc.property != "" && (len(a.Details) != 1 || a.Details[0].Property != tc.property) {
				t.Fatalf("details %+v, want property %s", a.Details, tc.property)
			}
		})
	}
	if n := len(r.rec.Delivered()); n != 0 {
		t.Fatalf("%d refused calls were recorded", n)
	}

	// What LINE takes: 5000 UTF-16 units, 13 buttons, labels of 20
	// grapheme clusters however many code points they hold, 300 of data.
	for name, body := range map[string]string{
		"AtTheLimit":    push(ada, "["+text(strings.Repeat("😀", 2500))+"]"),
		"FiveMessages":  push(ada, "["+strings.Repeat(text("x")+",", 4)+text("x")+"]"),
		"Thirteen":      push(ada, quick(thirteen[:13]...)),
		"GraphemeLabel": push(ada, quick(postback(family, strings.Repeat("d", 300)))),
		"Group":         push(group, "["+text("x")+"]"),
	} {
		if a := r.call(t, "POST", p, nil, body); a.Status != 200 || len(a.SentMessages) == 0 {
			t.Errorf("%s: answered %d %q %+v", name, a.Status, a.Message, a.Details)
		}
	}
}

// TestReplyTokens: a token is honoured once, within its time, in its chat.
func TestReplyTokens(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{ReplyTokenTTL: 30 * time.Second})
	body := func(tok string) string { return `{"replyToken":"` + tok + `","messages":[` + text("hi") + `]}` }
	tok := r.api.IssueReplyToken(ada)
	if a := r.call(t, "POST", "/v2/bot/message/reply", nil, body(tok)); a.Status != 200 || len(a.SentMessages) != 1 {
		t.Fatalf("first use: %d %q", a.Status, a.Message)
	}
	if a := r.call(t, "POST", "/v2/bot/message/reply", nil, body(tok)); a.Status != 400 || a.Message != fakeline.InvalidReplyTokenMessage {
		t.Fatalf("second use: %d %q", a.Status, a.Message)
	}
	late := r.api.IssueReplyToken(group)
	r.clock.Add(31 * time.Second)
	if a := r.call(t, "POST", "/v2/bot/message/reply", nil, body(late)); a.Status != 400 || a.Message != fakeline.InvalidReplyTokenMessage {
		t.Fatalf("expired: %d %q", a.Status, a.Message)
	}
	r.api.RegisterReplyToken("b60d432864f44d079f6d8efe86cf404b", group)
	if a := r.call(t, "POST", "/v2/bot/message/reply", nil, body("b60d432864f44d079f6d8efe86cf404b")); a.Status != 200 {
		t.Fatalf("registered: %d %q", a.Status, a.Message)
	}
	got := r.rec.Delivered()
	if len(got) != 2 || got[0].Chat != ada || got[1].Chat != group {
		t.Fatalf("delivered %+v", got)
	}
}

// TestRetryKey: the first accepted push wins; a replay is 409, naming the
// accepted request and its messages, and posts nothing; after 24 hours the
// key is new again.
func TestRetryKey(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	h := map[string]string{fakeline.RetryKeyHeader: key}
	first := r.call(t, "POST", "/v2/bot/message/push", h, push(ada, "["+text("once")+"]"))
	if first.Status != 200 {
		t.Fatalf("first: %d %q", first.Status, first.Message)
	}
	replay := r.call(t, "POST", "/v2/bot/message/push", h, push(ada, "["+text("once")+"]"))
	if replay.Status != 409 || replay.Header.Get(fakeline.AcceptedRequestHeader) != first.Header.Get(fakeline.RequestIDHeader) ||
		len(replay.SentMessages) != 1 || replay.SentMessages[0].ID != first.SentMessages[0].ID {
		t.Fatalf("replay: %d %q accepted %q (first %q), sent %+v", replay.Status, replay.Message,
			replay.Header.Get(fakeline.AcceptedRequestHeader), first.Header.Get(fakeline.RequestIDHeader), replay.SentMessages)
	}
	if n := len(r.rec.Delivered()); n != 1 {
		t.Fatalf("%d deliveries", n)
	}
	r.clock.Add(24*time.Hour + time.Second)
	if a := r.call(t, "POST", "/v2/bot/message/push", h, push(ada, "["+text("once")+"]")); a.Status != 200 {
		t.Fatalf("a day later: %d %q", a.Status, a.Message)
	}
}

// TestConcurrentReplays: two pushes with one key at once are accepted once.
func TestConcurrentReplays(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Go(func() {
			// No t.Fatal off the test's goroutine: a failed call is status 0.
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, r.srv.URL+"/v2/bot/message/push", strings.NewReader(push(ada, "["+text("x")+"]")))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set(fakeline.RetryKeyHeader, key)
			if resp, err := r.srv.Client().Do(req); err == nil {
				statuses[i] = resp.StatusCode
				_ = resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if n := len(r.rec.Delivered()); n != 1 || slices.Contains(statuses, 0) {
		t.Fatalf("%d deliveries (statuses %v)", n, statuses)
	}
}

// TestMonthlyQuota: pushes past the quota are 429 with LINE's message;
// replies are free.
func TestMonthlyQuota(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{MonthlyQuota: 2})
	for i := range 3 {
		a := r.call(t, "POST", "/v2/bot/message/push", nil, push(ada, "["+text("x")+"]"))
		if want := map[bool]int{true: 200, false: 429}[i < 2]; a.Status != want {
			t.Fatalf("push %d: %d %q", i, a.Status, a.Message)
		}
		if i == 2 && a.Message != fakeline.MonthlyLimitMessage {
			t.Fatalf("message %q", a.Message)
		}
	}
	tok := r.api.IssueReplyToken(ada)
	if a := r.call(t, "POST", "/v2/bot/message/reply", nil, `{"replyToken":"`+tok+`","messages":[`+text("free")+`]}`); a.Status != 200 {
		t.Fatalf("reply past the quota: %d %q", a.Status, a.Message)
	}
}

// TestFaults: an injected fault answers in LINE's format; a 409 names an
// accepted request as LINE's do; a wait asked for is a Retry-After.
func TestFaults(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	r.rec.Inject(fakeapi.Fault{Status: 409})
	if a := r.call(t, "POST", "/v2/bot/message/push", nil, push(ada, "["+text("x")+"]")); a.Status != 409 || a.Header.Get(fakeline.AcceptedRequestHeader) == "" {
		t.Fatalf("409: %d %v", a.Status, a.Header)
	}
	r.rec.Inject(fakeapi.Fault{Status: 429, RetryAfter: 3 * time.Second})
	if a := r.call(t, "POST", "/v2/bot/message/push", nil, push(ada, "["+text("x")+"]")); a.Status != 429 || a.Header.Get("Retry-After") != "3" || a.Message == "" {
		t.Fatalf("429: %d %q %v", a.Status, a.Message, a.Header)
	}
	r.rec.Inject(fakeapi.Fault{Error: fakeline.MonthlyLimitMessage, Status: 429})
	if a := r.call(t, "POST", "/v2/bot/message/push", nil, push(ada, "["+text("x")+"]")); a.Message != fakeline.MonthlyLimitMessage {
		t.Fatalf("monthly: %d %q", a.Status, a.Message)
	}
	if n := len(r.rec.Delivered()); n != 0 {
		t.Fatalf("%d deliveries despite the faults", n)
	}
}

// TestLoading: the animation in a one-to-one chat is an action, not a
// message.
func TestLoading(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	if a := r.call(t, "POST", "/v2/bot/chat/loading/start", nil, `{"chatId":"`+ada+`","loadingSeconds":30}`); a.Status != 202 {
		t.Fatalf("loading: %d %q", a.Status, a.Message)
	}
	if acts := r.rec.Actions(); len(acts) != 1 || acts[0].Chat != ada || acts[0].Action != "loading" || len(r.rec.Delivered()) != 0 {
		t.Fatalf("actions %+v", acts)
	}
}

// TestSignIsWhatTheAdapterVerifies: Headers sign a webhook so that the
// adapter accepts it, and the signature covers the body.
func TestSignIsWhatTheAdapterVerifies(t *testing.T) {
	t.Parallel()
	const secret = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
	body := []byte(`{"destination":"Ub0770000000000000000000000000001","events":[]}`)
	r := &line.Receiver{ChannelSecret: secret}
	if err := r.Verify(&platform.Request{Header: fakeline.Headers(secret, body), Body: body}); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := r.Verify(&platform.Request{Header: fakeline.Headers(secret, body), Body: append(body, ' ')}); err == nil {
		t.Fatal("a changed body verified")
	}
}

// TestQuickRepliesAreControls: a message's quick reply buttons are recorded
// as its controls, in order, each with the data a tap sends back, so that
// make run prints them and can press them.
func TestQuickRepliesAreControls(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	body := push(ada, quick(postback("Lisbon", "q1:0:0"), postback("Porto", "q1:0:1"),
		`{"type":"action","action":{"type":"message","label":"Skip","text":"skip"}}`))
	if a := r.call(t, "POST", "/v2/bot/message/push", nil, body); a.Status != 200 {
		t.Fatalf("push: %d %q %+v", a.Status, a.Message, a.Details)
	}
	want := []fakeapi.Control{{Label: "Lisbon", Data: "q1:0:0"}, {Label: "Porto", Data: "q1:0:1"}, {Label: "Skip", Data: "skip"}}
	if got := r.rec.Delivered(); len(got) != 1 || !slices.Equal(got[0].Controls, want) {
		t.Fatalf("delivered %+v, want controls %+v", got, want)
	}
	if a := r.call(t, "POST", "/v2/bot/message/push", nil, push(ada, "["+text("plain")+"]")); a.Status != 200 {
		t.Fatal(a.Message)
	}
	if got := r.rec.Delivered(); got[1].Controls != nil {
		t.Fatalf("a plain text has controls %+v", got[1].Controls)
	}
}

// TestPostback: the press body the local runner posts parses, for the bot,
// to the answer of the user who tapped, in the chat named.
func TestPostback(t *testing.T) {
	t.Parallel()
	const (
		secret = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
		bot    = "Ub0770000000000000000000000000001"
		grace  = "U9ace0000000000000000000000000043"
	)
	at := time.UnixMilli(1764432180000).UTC()
	r := &line.Receiver{ChannelSecret: secret, BotUserID: bot}
	for chat, chatType := range map[string]string{ada: "private", group: "group", "R200000000000000000000000000000f1": "group"} {
		user := ada
		if chat != ada {
			user = grace
		}
		body := fakeline.Postback(bot, chat, user, "01KB7ZE5S6T7V8W9X0Y1Z2A3B5", "f00d1", at, "q1:0:1")
		req := &platform.Request{Header: fakeline.Headers(secret, body), Body: body, Now: at}
		if err := r.Verify(req); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		p, err := r.Parse(req)
		if err != nil || len(p.Events) != 1 {
			t.Fatalf("Parse = %+v, %v", p, err)
		}
		ev := p.Events[0]
		if ev.Thread.Chat != chat || ev.ChatType != chatType || ev.Sender.ID != user || ev.Press == nil || ev.Press.Data != "q1:0:1" ||
			ev.EventID != "01KB7ZE5S6T7V8W9X0Y1Z2A3B5" || ev.ReplyContext == nil || ev.ReplyContext.Token != "f00d1" || !ev.Time.Equal(at) {
			t.Fatalf("%s: event %+v", chat, ev)
		}
	}
}
