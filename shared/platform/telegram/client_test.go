package telegram

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
)

// botAPI is an httptest Bot API: it records each request and answers with
// the status and body the test sets.
type botAPI struct {
	srv *httptest.Server

	mu     sync.Mutex
	paths  []string
	bodies []map[string]any
	ctypes []string
	status int
	answer string
}

func newBotAPI(t *testing.T) *botAPI {
	t.Helper()
	a := &botAPI{status: 200, answer: `{"ok":true,"result":{"message_id":555,"date":1764432000,"chat":{"id":42,"type":"private"},"text":"hi"}}`}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		a.mu.Lock()
		a.paths = append(a.paths, r.Method+" "+r.URL.Path)
		a.bodies = append(a.bodies, body)
		a.ctypes = append(a.ctypes, r.Header.Get("Content-Type"))
		status, answer := a.status, a.answer
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *botAPI) set(status int, answer string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status, a.answer = status, answer
}

func (a *botAPI) client() *Client { return &Client{Token: testToken, BaseURL: a.srv.URL + "/"} }

func (a *botAPI) calls() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.paths)
}

func (a *botAPI) last(t *testing.T) (string, map[string]any, string) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.paths) == 0 {
		t.Fatal("no request reached the Bot API")
	}
	n := len(a.paths) - 1
	return a.paths[n], a.bodies[n], a.ctypes[n]
}

// sendErr asserts err is a SendError that never shows the token.
func sendErr(t *testing.T, err error) *message.SendError {
	t.Helper()
	var se *message.SendError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *message.SendError", err, err)
	}
	if secret := strings.SplitN(testToken, ":", 2)[1]; strings.Contains(err.Error(), secret) {
		t.Fatalf("error leaks the token: %v", err)
	}
	return se
}

var topic = message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "-1001000000002", Thread: "77"}

func TestSendRequest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		out  message.Outgoing
		want map[string]any
	}{
		{"PrivateChat",
			message.Outgoing{Thread: message.Thread{Platform: message.Telegram, Chat: "42"}, Content: message.Text("sunny, 21°C"), IdempotencyKey: "i#0"},
			map[string]any{"chat_id": 42.0, "text": "sunny, 21°C"}},
		{"TopicReply",
			message.Outgoing{Thread: topic, Content: message.Text("*not bold* <b>"), ReplyTo: "318"},
			map[string]any{"chat_id": -1001000000002.0, "text": "*not bold* <b>", "message_thread_id": 77.0,
				"reply_parameters": map[string]any{"message_id": 318.0, "allow_sending_without_reply": true}}},
		{"ChannelUsername",
			message.Outgoing{Thread: message.Thread{Platform: message.Telegram, Chat: "@parley_news"}, Content: message.Text("hello")},
			map[string]any{"chat_id": "@parley_news", "text": "hello"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := newBotAPI(t)
			rc, err := api.client().Send(context.Background(), tc.out)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if !reflect.DeepEqual(rc.MessageIDs, []string{"555"}) {
				t.Fatalf("receipt = %v, want [555]", rc.MessageIDs)
			}
			path, body, ctype := api.last(t)
			if path != "POST /bot"+testToken+"/sendMessage" {
				t.Fatalf("path = %q", path)
			}
			if ctype != "application/json" {
				t.Fatalf("Content-Type = %q", ctype)
			}
			// Exactly these fields: in particular no parse_mode, so the
			// agent's text is shown verbatim.
			if !reflect.DeepEqual(body, tc.want) {
				t.Fatalf("body\n got %v\nwant %v", body, tc.want)
			}
		})
	}
}

func TestSendClassifies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		status     int
		answer     string
		class      message.FailureClass
		retryAfter time.Duration
		reason     string
	}{
		{"FloodControl", 429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 35","parameters":{"retry_after":35}}`,
			message.FailRateLimit, 35 * time.Second, "Too Many Requests: retry after 35"},
		{"ChatNotFound", 400, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`,
			message.FailInvalidPayload, 0, "Bad Request: chat not found"},
		{"MigratedToSupergroup", 400, `{"ok":false,"error_code":400,"description":"Bad Request: group chat was upgraded to a supergroup chat","parameters":{"migrate_to_chat_id":-1001234567890}}`,
			message.FailNotFound, 0, "group migrated to a supergroup, migrate_to_chat_id -1001234567890"},
		{"BadToken", 401, `{"ok":false,"error_code":401,"description":"Unauthorized"}`, message.FailAuth, 0, "Unauthorized"},
		{"Blocked", 403, `{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}`,
			message.FailPermission, 0, "Forbidden: bot was blocked by the user"},
		{"MalformedTokenPath", 404, `{"ok":false,"error_code":404,"description":"Not Found"}`, message.FailAuth, 0, "Not Found"},
		{"Conflict", 409, `{"ok":false,"error_code":409,"description":"Conflict: terminated by other getUpdates request"}`,
			message.FailConflict, 0, "Conflict: terminated by other getUpdates request"},
		// Finding 8.9: a 5xx after the request was written may mean the
		// message was posted; Telegram documents none as "not processed".
		{"ServerError", 500, `{"ok":false,"error_code":500,"description":"Internal Server Error"}`, message.FailUnknown, 0, "Internal Server Error"},
		{"BadGatewayHTML", 502, `<html><body>502 Bad Gateway</body></html>`, message.FailUnknown, 0, "HTTP 502"},
		{"GatewayTimeout", 504, `<html><body>504 Gateway Time-out</body></html>`, message.FailUnknown, 0, "HTTP 504"},
		{"OKButNotJSON", 200, `<html>welcome to the hotel wifi</html>`, message.FailUnknown, 0, "answer is not a Bot API response"},
		{"OKWithoutMessageID", 200, `{"ok":true,"result":{}}`, message.FailUnknown, 0, "answer has no message_id"},
		{"OKWithBadResult", 200, `{"ok":true,"result":"sent"}`, message.FailUnknown, 0, "answer does not decode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := newBotAPI(t)
			api.set(tc.status, tc.answer)
			_, err := api.client().Send(context.Background(), message.Outgoing{Thread: topic, Content: message.Text("the secret plan")})
			se := sendErr(t, err)
			if se.Class != tc.class || se.RetryAfter != tc.retryAfter || se.Reason != tc.reason || se.Status != tc.status {
				t.Fatalf("got %+v, want class %s retry %s reason %q status %d", se, tc.class, tc.retryAfter, tc.reason, tc.status)
			}
			if strings.Contains(err.Error(), "secret plan") {
				t.Fatalf("error holds the message text: %v", err)
			}
			if message.ClassOf(err) != tc.class {
				t.Fatalf("ClassOf = %s", message.ClassOf(err))
			}
		})
	}
}

func TestSendRefusesWithoutCalling(t *testing.T) {
	t.Parallel()
	api := newBotAPI(t)
	cases := []struct {
		name  string
		c     *Client
		out   message.Outgoing
		class message.FailureClass
	}{
		{"NoToken", &Client{BaseURL: api.srv.URL}, message.Outgoing{Thread: topic, Content: message.Text("x")}, message.FailAuth},
		{"NoChat", api.client(), message.Outgoing{Content: message.Text("x")}, message.FailInvalidPayload},
		{"TopicNotAnInteger", api.client(), message.Outgoing{Thread: message.Thread{Chat: "42", Thread: "general"}, Content: message.Text("x")}, message.FailInvalidPayload},
		{"ReplyToNotAnInteger", api.client(), message.Outgoing{Thread: topic, ReplyTo: "1700000000.000100", Content: message.Text("x")}, message.FailInvalidPayload},
		{"BadBaseURL", &Client{Token: testToken, BaseURL: "api.telegram.org"}, message.Outgoing{Thread: topic, Content: message.Text("x")}, message.FailAuth},
		{"TokenBreaksURL", &Client{Token: "1:a b\x7f", BaseURL: api.srv.URL}, message.Outgoing{Thread: topic, Content: message.Text("x")}, message.FailAuth},
	}
	for _, tc := range cases {
		_, err := tc.c.Send(context.Background(), tc.out)
		if se := sendErr(t, err); se.Class != tc.class {
			t.Errorf("%s: class = %s, want %s (%v)", tc.name, se.Class, tc.class, err)
		}
		if strings.Contains(err.Error(), "a b") {
			t.Errorf("%s: error leaks the token: %v", tc.name, err)
		}
	}
	if n := api.calls(); n != 0 {
		t.Fatalf("%d requests reached the Bot API", n)
	}
}

func TestTyping(t *testing.T) {
	t.Parallel()
	api := newBotAPI(t)
	api.set(200, `{"ok":true,"result":true}`)
	if err := api.client().Typing(context.Background(), topic); err != nil {
		t.Fatalf("Typing: %v", err)
	}
	path, body, _ := api.last(t)
	if path != "POST /bot"+testToken+"/sendChatAction" {
		t.Fatalf("path = %q", path)
	}
	want := map[string]any{"chat_id": -1001000000002.0, "message_thread_id": 77.0, "action": "typing"}
	if !reflect.DeepEqual(body, want) {
		t.Fatalf("body = %v, want %v", body, want)
	}

	api.set(403, `{"ok":false,"error_code":403,"description":"Forbidden: bot was kicked from the supergroup chat"}`)
	err := api.client().Typing(context.Background(), topic)
	if se := sendErr(t, err); se.Class != message.FailPermission {
		t.Fatalf("class = %s, want permission", se.Class)
	}
}

func TestCapabilities(t *testing.T) {
	t.Parallel()
	got := Adapter.Capabilities()
	want := message.Capabilities{TextLimit: 4096, Counting: message.CountUTF16, Typing: true, Buttons: true, Edit: true, Reactions: true}
	if got != want {
		t.Fatalf("Capabilities = %+v", got)
	}
}

func TestChatIDJSON(t *testing.T) {
	t.Parallel()
	for in, want := range map[TelegramChatID]string{"42": `42`, "-1001000000001": `-1001000000001`, "@news": `"@news"`, "4 2": `"4 2"`} {
		b, err := json.Marshal(in)
		if err != nil || string(b) != want {
			t.Errorf("Marshal(%q) = %s, %v; want %s", in, b, err, want)
		}
		var back TelegramChatID
		if err := json.Unmarshal(b, &back); err != nil || back != in {
			t.Errorf("Unmarshal(%s) = %q, %v", b, back, err)
		}
	}
	var c TelegramChatID
	for _, bad := range []string{`4.5`, `true`, `"x`, `{}`} {
		if err := json.Unmarshal([]byte(bad), &c); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
	}
}
