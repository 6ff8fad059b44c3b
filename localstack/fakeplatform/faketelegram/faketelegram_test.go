package faketelegram_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/telegram"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "7000000001:AAFakeTokenForParleyTests_0123456789"

func setup(t *testing.T) (*fakeapi.Recorder, *httptest.Server) {
	t.Helper()
	rec := fakeapi.New(fakeapi.Options{Now: func() time.Time { return time.Unix(1795953600, 0) }})
	srv := httptest.NewServer(faketelegram.New(faketelegram.Options{Token: token, Recorder: rec}))
	t.Cleanup(srv.Close)
	return rec, srv
}

type answer struct {
	OK          bool            `json:"ok"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Result      json.RawMessage `json:"result"`
	Parameters  struct {
		RetryAfter int64 `json:"retry_after"`
	} `json:"parameters"`
}

func call(t *testing.T, srv *httptest.Server, path, body string) (int, answer) {
	t.Helper()
	resp, err := srv.Client().Post(srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s answered %d %q: not the Bot API's format", path, resp.StatusCode, b)
	}
	return resp.StatusCode, a
}

// TestValidation: the Bot API's own refusals, in its format: the status
// and error_code agree, ok is false, the description is Telegram's text.
func TestValidation(t *testing.T) {
	t.Parallel()
	send := "/bot" + token + "/sendMessage"
	cases := []struct {
		name, path, body string
		status           int
		description      string
	}{
		{"WrongToken", "/bot7000000001:wrong/sendMessage", `{"chat_id":42,"text":"x"}`, 401, "Unauthorized"},
		{"NoTokenSegment", "/bot/sendMessage", `{}`, 404, "Not Found"},
		{"NotTheBotAPI", "/elsewhere", `{}`, 404, "Not Found"},
		{"UnknownMethod", "/bot" + token + "/deleteWebhook", `{}`, 404, "Not Found"},
		{"NotJSON", send, `{"chat_id":`, 400, "Bad Request: can't parse JSON object"},
		{"NoChat", send, `{"text":"x"}`, 400, "Bad Request: chat_id is empty"},
		{"ChatZero", send, `{"chat_id":0,"text":"x"}`, 400, "Bad Request: chat not found"},
		{"ChatNotAnID", send, `{"chat_id":"lobby","text":"x"}`, 400, "Bad Request: chat not found"},
		{"BlankText", send, `{"chat_id":42,"text":" \n "}`, 400, "Bad Request: message text is empty"},
		{"TooLong", send, `{"chat_id":42,"text":"` + strings.Repeat("😀", 2048) + `a"}`, 400, "Bad Request: message is too long"},
		{"UnknownParseMode", send, `{"chat_id":42,"text":"x","parse_mode":"BBCode"}`, 400, "Bad Request: unsupported parse_mode"},
		{"UnknownAction", "/bot" + token + "/sendChatAction", `{"chat_id":42,"action":"dancing"}`, 400, "Bad Request: wrong type of action"},
		{"ActionWithoutChat", "/bot" + token + "/sendChatAction", `{"action":"typing"}`, 400, "Bad Request: chat_id is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, srv := setup(t)
			st, a := call(t, srv, tc.path, tc.body)
			if st != tc.status || a.OK || a.ErrorCode != tc.status || a.Description != tc.description {
				t.Fatalf("got %d %+v, want %d %q", st, a, tc.status, tc.description)
			}
			if len(rec.Delivered())+len(rec.Actions()) != 0 {
				t.Fatal("a refused call was recorded")
			}
		})
	}
}

func TestAccepts(t *testing.T) {
	t.Parallel()
	rec, srv := setup(t)
	send := "/bot" + token + "/sendMessage"
	for _, body := range []string{
		// 2048 emoji are exactly 4096 UTF-16 units.
		`{"chat_id":42,"text":"` + strings.Repeat("😀", 2048) + `"}`,
		`{"chat_id":"@parley_news","text":"hello"}`,
		`{"chat_id":-1001000000002,"message_thread_id":77,"text":"<b>x</b>","parse_mode":"HTML","reply_parameters":{"message_id":318}}`,
	} {
		if st, a := call(t, srv, send, body); st != 200 || !a.OK {
			t.Fatalf("%s: %d %+v", body, st, a)
		}
	}
	got := rec.Delivered()
	last := got[2]
	if len(got) != 3 || last.Chat != "-1001000000002" || last.Thread != "77" || last.ReplyTo != "318" || last.MessageID != "1" ||
		fakeapi.Str(last.Args, "parse_mode") != "HTML" {
		t.Fatalf("Delivered = %+v", got)
	}
	// The Bot API also takes form-encoded arguments.
	resp, err := srv.Client().PostForm(srv.URL+send, map[string][]string{"chat_id": {"42"}, "text": {"form"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := rec.Delivered(); resp.StatusCode != 200 || len(got) != 4 || got[3].Text != "form" || got[3].MessageID != "2" {
		t.Fatalf("form send: %d %+v", resp.StatusCode, got)
	}
	st, a := call(t, srv, "/bot"+token+"/getMe", `{}`)
	if st != 200 || !strings.Contains(string(a.Result), `"id":7000000001`) {
		t.Fatalf("getMe: %d %s", st, a.Result)
	}
	if st, _ := call(t, srv, "/bot"+token+"/sendChatAction", `{"chat_id":42,"message_thread_id":77,"action":"typing"}`); st != 200 {
		t.Fatalf("sendChatAction: %d", st)
	}
	if acts := rec.Actions(); len(acts) != 1 || acts[0].Chat != "42" || acts[0].Thread != "77" || acts[0].Action != "typing" {
		t.Fatalf("Actions = %+v", acts)
	}
	// Calls counts sendMessage attempts only: getMe and chat actions are
	// not sends.
	if rec.Calls() != 4 {
		t.Fatalf("Calls = %d", rec.Calls())
	}
}

// TestFaults: an injected fault in the Bot API's format.
func TestFaults(t *testing.T) {
	t.Parallel()
	send := "/bot" + token + "/sendMessage"
	for _, tc := range []struct {
		name        string
		fault       fakeapi.Fault
		status      int
		description string
		retryAfter  int64
	}{
		{"FloodControl", fakeapi.Fault{Status: 429, RetryAfter: 2500 * time.Millisecond}, 429, "Too Many Requests: retry after 3", 3},
		{"StatusText", fakeapi.Fault{Status: 403}, 403, "Forbidden: bot was blocked by the user", 0},
		{"OwnDescription", fakeapi.Fault{Status: 403, Error: "Forbidden: bot was kicked from the group chat"}, 403, "Forbidden: bot was kicked from the group chat", 0},
		{"ErrorAloneIsABadRequest", fakeapi.Fault{Error: "Bad Request: message to be replied not found"}, 400, "Bad Request: message to be replied not found", 0},
		{"UncommonStatus", fakeapi.Fault{Status: 504}, 504, "Gateway Timeout", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, srv := setup(t)
			rec.Inject(tc.fault)
			st, a := call(t, srv, send, `{"chat_id":42,"text":"x"}`)
			if st != tc.status || a.ErrorCode != tc.status || a.Description != tc.description || a.Parameters.RetryAfter != tc.retryAfter {
				t.Fatalf("got %d %+v", st, a)
			}
			if len(rec.Delivered()) != 0 {
				t.Fatal("a failed send was recorded")
			}
		})
	}
}

// TestTheAdapterAgainstTheFake: the real client reads the fake's answers
// as the Bot API's.
func TestTheAdapterAgainstTheFake(t *testing.T) {
	t.Parallel()
	rec, srv := setup(t)
	c := &telegram.Client{Token: token, BaseURL: srv.URL, HTTP: srv.Client()}
	thread := message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"}
	rc, err := c.Send(t.Context(), message.Outgoing{Thread: thread, Content: message.Text("hi")})
	if err != nil || len(rc.MessageIDs) != 1 || rc.MessageIDs[0] != rec.Delivered()[0].MessageID {
		t.Fatalf("Send = %+v, %v", rc, err)
	}
	rec.Inject(fakeapi.Fault{Status: 429, RetryAfter: 2 * time.Second})
	_, err = c.Send(t.Context(), message.Outgoing{Thread: thread, Content: message.Text("hi")})
	var se *message.SendError
	if !errors.As(err, &se) || se.Class != message.FailRateLimit || se.RetryAfter != 2*time.Second {
		t.Fatalf("flood control: %v", err)
	}
	wrong := &telegram.Client{Token: "7000000001:wrong", BaseURL: srv.URL, HTTP: srv.Client()}
	_, err = wrong.Send(t.Context(), message.Outgoing{Thread: thread, Content: message.Text("x")})
	if !errors.As(err, &se) || se.Class != message.FailAuth || se.Status != 401 || se.Reason != "Unauthorized" {
		t.Fatalf("wrong token: %v", err)
	}
}

// TestHeaders signs a real sample the way Telegram does, as the adapter's
// receiver checks it.
func TestHeaders(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(filepath.Join("..", "..", "..", "events", "telegram", "message.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := telegram.NewReceiver("parley-telegram-test-secret", token)
	if err != nil {
		t.Fatal(err)
	}
	req := &platform.Request{Method: http.MethodPost, Header: faketelegram.Headers("parley-telegram-test-secret"), Body: body}
	if err := r.Verify(req); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	req.Header = faketelegram.Headers("other")
	if err := r.Verify(req); !errors.Is(err, platform.ErrUnauthorized) {
		t.Fatalf("Verify with another secret: %v", err)
	}
}
