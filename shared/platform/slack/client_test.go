package slack

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

const testToken = "xoxb-0000000001-0000000002-FakeSlackTokenForTests"

// webAPI is an httptest Slack Web API: it records each request and answers
// with the status, headers and body the test sets.
type webAPI struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []recorded
	status   int
	header   http.Header
	answer   string
}

type recorded struct {
	method, path, auth, ctype string
	body                      map[string]any
}

func newWebAPI(t *testing.T) *webAPI {
	t.Helper()
	a := &webAPI{status: 200, answer: `{"ok":true,"channel":"C0CHAN0001","ts":"1764432100.000500","message":{"type":"message","text":"x","user":"U0BOT00001","bot_id":"B0BOT00001","ts":"1764432100.000500"}}`}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		a.mu.Lock()
		a.requests = append(a.requests, recorded{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), body})
		status, header, answer := a.status, a.header, a.answer
		a.mu.Unlock()
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *webAPI) set(status int, header http.Header, answer string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status, a.header, a.answer = status, header, answer
}

func (a *webAPI) client() *Client { return &Client{Token: testToken, BaseURL: a.srv.URL + "/api/"} }

func (a *webAPI) all() []recorded {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]recorded(nil), a.requests...)
}

func sendErr(t *testing.T, err error) *message.SendError {
	t.Helper()
	var se *message.SendError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *message.SendError", err, err)
	}
	if strings.Contains(err.Error(), "FakeSlackToken") {
		t.Fatalf("error leaks the token: %v", err)
	}
	return se
}

func TestSendRequest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		out  message.Outgoing
		want map[string]any
	}{
		{"DM", message.Outgoing{Thread: dm, Content: message.Text("You have 3 meetings"), ReplyTo: "1764432000.000100"},
			map[string]any{"channel": "D0DM000001", "text": "You have 3 meetings", "link_names": false, "mrkdwn": false}},
		// Finding 9.3: agent text is inert: & < > escaped, so no
		// <!channel>, <@U…> or masked link renders live; link_names off.
		{"Thread", message.Outgoing{Thread: channel("1764432060.000200"), Content: message.Text("Draft: *launch* moves <soon>")},
			map[string]any{"channel": "C0CHAN0001", "text": "Draft: *launch* moves &lt;soon&gt;", "thread_ts": "1764432060.000200", "link_names": false, "mrkdwn": false}},
		{"MentionsAndMaskedLinks", message.Outgoing{Thread: dm, Content: message.Text("<!channel> <@U1> <!subteam^S1> <https://x|y> & co")},
			map[string]any{"channel": "D0DM000001", "text": "&lt;!channel&gt; &lt;@U1&gt; &lt;!subteam^S1&gt; &lt;https://x|y&gt; &amp; co", "link_names": false, "mrkdwn": false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := newWebAPI(t)
			rc, err := api.client().Send(context.Background(), tc.out)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if !reflect.DeepEqual(rc.MessageIDs, []string{"1764432100.000500"}) {
				t.Fatalf("receipt = %v", rc.MessageIDs)
			}
			reqs := api.all()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			got := reqs[0]
			if got.method != "POST" || got.path != "/api/chat.postMessage" || got.auth != "Bearer "+testToken ||
				got.ctype != "application/json; charset=utf-8" {
				t.Fatalf("request %+v", got)
			}
			if !reflect.DeepEqual(got.body, tc.want) {
				t.Fatalf("body\n got %v\nwant %v", got.body, tc.want)
			}
		})
	}
}

// TestTrustedMarkupIsSentAsWritten: an operator who opted in to the agent's
// Slack markup (SLACK_TRUST_AGENT_MARKUP) gets it verbatim.
func TestTrustedMarkupIsSentAsWritten(t *testing.T) {
	t.Parallel()
	api := newWebAPI(t)
	c := api.client()
	c.TrustMarkup = true
	if _, err := c.Send(context.Background(), message.Outgoing{Thread: dm, Content: message.Text("*deploy* done <https://ci.example|build 42>")}); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"channel": "D0DM000001", "text": "*deploy* done <https://ci.example|build 42>"}
	if got := api.all()[0].body; !reflect.DeepEqual(got, want) {
		t.Fatalf("body %v, want %v", got, want)
	}
}

func TestSendClassifies(t *testing.T) {
	t.Parallel()
	okFalse := func(code string) string { return `{"ok":false,"error":"` + code + `"}` }
	cases := []struct {
		name       string
		status     int
		header     http.Header
		answer     string
		class      message.FailureClass
		retryAfter time.Duration
		reason     string
	}{
		{"HTTP429", 429, http.Header{"Retry-After": {"30"}}, `{"ok":false,"error":"ratelimited"}`, message.FailRateLimit, 30 * time.Second, "HTTP 429"},
		{"HTTP429WithoutHeader", 429, nil, ``, message.FailRateLimit, 0, "HTTP 429"},
		{"RatelimitedCode", 200, http.Header{"Retry-After": {"3"}}, okFalse("ratelimited"), message.FailRateLimit, 3 * time.Second, "ratelimited"},
		{"MessageLimit", 200, nil, okFalse("message_limit_exceeded"), message.FailRateLimit, 0, "message_limit_exceeded"},
		{"NotAuthed", 200, nil, okFalse("not_authed"), message.FailAuth, 0, "not_authed"},
		{"InvalidAuth", 200, nil, okFalse("invalid_auth"), message.FailAuth, 0, "invalid_auth"},
		{"AccountInactive", 200, nil, okFalse("account_inactive"), message.FailAuth, 0, "account_inactive"},
		{"TokenRevoked", 200, nil, okFalse("token_revoked"), message.FailAuth, 0, "token_revoked"},
		{"TokenExpired", 200, nil, okFalse("token_expired"), message.FailAuth, 0, "token_expired"},
		{"MissingScope", 200, nil, `{"ok":false,"error":"missing_scope","needed":"chat:write","provided":"channels:history"}`, message.FailAuth, 0, "missing_scope"},
		{"NotInChannel", 200, nil, okFalse("not_in_channel"), message.FailPermission, 0, "not_in_channel"},
		{"RestrictedAction", 200, nil, okFalse("restricted_action"), message.FailPermission, 0, "restricted_action"},
		{"IsArchived", 200, nil, okFalse("is_archived"), message.FailPermission, 0, "is_archived"},
		{"ChannelNotFound", 200, nil, okFalse("channel_not_found"), message.FailNotFound, 0, "channel_not_found"},
		{"ThreadNotFound", 200, nil, okFalse("thread_not_found"), message.FailNotFound, 0, "thread_not_found"},
		{"MessageNotFound", 200, nil, okFalse("message_not_found"), message.FailNotFound, 0, "message_not_found"},
		{"MsgTooLong", 200, nil, okFalse("msg_too_long"), message.FailInvalidPayload, 0, "msg_too_long"},
		{"NoText", 200, nil, okFalse("no_text"), message.FailInvalidPayload, 0, "no_text"},
		{"InvalidBlocks", 200, nil, okFalse("invalid_blocks"), message.FailInvalidPayload, 0, "invalid_blocks"},
		{"InvalidArgName", 200, nil, okFalse("invalid_arg_name"), message.FailInvalidPayload, 0, "invalid_arg_name"},
		{"InvalidJSON", 200, nil, okFalse("invalid_json"), message.FailInvalidPayload, 0, "invalid_json"},
		// Finding 8.9: Slack documents internal_error and fatal_error as
		// "it's possible some aspect of the operation succeeded".
		{"InternalError", 200, nil, okFalse("internal_error"), message.FailUnknown, 0, "internal_error"},
		{"FatalError", 200, nil, okFalse("fatal_error"), message.FailUnknown, 0, "fatal_error"},
		{"ServiceUnavailable", 200, nil, okFalse("service_unavailable"), message.FailTransient, 0, "service_unavailable"},
		{"RequestTimeout", 200, nil, okFalse("request_timeout"), message.FailTransient, 0, "request_timeout"},
		{"UnknownCode", 200, nil, okFalse("brand_new_condition"), message.FailTransient, 0, "brand_new_condition"},
		{"OKFalseWithoutCode", 200, nil, `{"ok":false}`, message.FailTransient, 0, "ok:false without error"},
		// An HTTP 5xx comes from Slack's edge, after the request was
		// written: it proves nothing about the post.
		{"HTTP500", 500, nil, `oops`, message.FailUnknown, 0, "HTTP 500"},
		{"HTTP503", 503, nil, ``, message.FailUnknown, 0, "HTTP 503"},
		{"HTTP504", 504, nil, `gateway timeout`, message.FailUnknown, 0, "HTTP 504"},
		{"TeamMigrating", 200, nil, okFalse("team_added_to_org"), message.FailTransient, 0, "team_added_to_org"},
		{"HTTP404WrongBaseURL", 404, nil, `<html>not found</html>`, message.FailAuth, 0, "HTTP 404"},
		{"HTTP400", 400, nil, ``, message.FailInvalidPayload, 0, "HTTP 400"},
		{"OKWithoutTS", 200, nil, `{"ok":true}`, message.FailUnknown, 0, "answer has no ts"},
		{"OKNotJSON", 200, nil, `<html>portal</html>`, message.FailUnknown, 0, "answer is not a Web API response"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := newWebAPI(t)
			api.set(tc.status, tc.header, tc.answer)
			_, err := api.client().Send(context.Background(), message.Outgoing{Thread: channel(""), Content: message.Text("the secret plan")})
			se := sendErr(t, err)
			if se.Class != tc.class || se.RetryAfter != tc.retryAfter || se.Reason != tc.reason || se.Status != tc.status {
				t.Fatalf("got %+v, want class %s retry %s reason %q status %d", se, tc.class, tc.retryAfter, tc.reason, tc.status)
			}
			if strings.Contains(err.Error(), "secret plan") {
				t.Fatalf("error holds the message text: %v", err)
			}
		})
	}
}

func TestSendRefusesWithoutCalling(t *testing.T) {
	t.Parallel()
	api := newWebAPI(t)
	for name, tc := range map[string]struct {
		c     *Client
		out   message.Outgoing
		class message.FailureClass
	}{
		"NoToken":    {&Client{BaseURL: api.srv.URL}, message.Outgoing{Thread: dm, Content: message.Text("x")}, message.FailAuth},
		"NoChannel":  {api.client(), message.Outgoing{Content: message.Text("x")}, message.FailInvalidPayload},
		"BadBaseURL": {&Client{Token: testToken, BaseURL: "slack.com/api"}, message.Outgoing{Thread: dm, Content: message.Text("x")}, message.FailAuth},
	} {
		_, err := tc.c.Send(context.Background(), tc.out)
		if se := sendErr(t, err); se.Class != tc.class {
			t.Errorf("%s: class = %s, want %s", name, se.Class, tc.class)
		}
	}
	if n := len(api.all()); n != 0 {
		t.Fatalf("%d requests reached the Web API", n)
	}
}

// TestNoTypingIndicator: Slack offers bots no typing indicator through the
// Web API (assistant.threads.setStatus needs the AI app feature and its
// scope, which a plain bot install lacks), so the client has none.
func TestNoTypingIndicator(t *testing.T) {
	t.Parallel()
	if _, ok := any(&Client{}).(platform.Typer); ok || Adapter.Capabilities().Typing {
		t.Fatal("the Slack client claims a typing indicator")
	}
}

func TestCapabilities(t *testing.T) {
	t.Parallel()
	got := Adapter.Capabilities()
	if got != (message.Capabilities{TextLimit: 4000, Counting: message.CountRunes, Buttons: true, Edit: true, Reconcile: true, PromptLimit: 3000, Reactions: true}) {
		t.Fatalf("Capabilities = %+v", got)
	}
}
