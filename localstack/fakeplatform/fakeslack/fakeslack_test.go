package fakeslack_test

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
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/slack"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "xoxb-0000000001-0000000002-FakeSlackTokenForTests"

func setup(t *testing.T) (*fakeapi.Recorder, *httptest.Server) {
	t.Helper()
	rec := fakeapi.New(fakeapi.Options{Now: func() time.Time { return time.Unix(1795953600, 0) }})
	srv := httptest.NewServer(fakeslack.New(fakeslack.Options{Token: token, Recorder: rec}))
	t.Cleanup(srv.Close)
	return rec, srv
}

type answer struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	TS    string `json:"ts"`
}

func call(t *testing.T, srv *httptest.Server, path, auth, body string) (*http.Response, answer) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a answer
	_ = json.Unmarshal(b, &a)
	return resp, a
}

// TestValidation: Slack answers chat.postMessage's refusals with HTTP 200
// and its error code.
func TestValidation(t *testing.T) {
	t.Parallel()
	bearer := "Bearer " + token
	cases := []struct {
		name, auth, body, code string
	}{
		{"NoToken", "", `{"channel":"C1","text":"x"}`, "not_authed"},
		{"NotBearer", "Basic " + token, `{"channel":"C1","text":"x"}`, "not_authed"},
		{"WrongToken", "Bearer xoxb-wrong", `{"channel":"C1","text":"x"}`, "invalid_auth"},
		{"NotJSON", bearer, `{"channel":`, "invalid_json"},
		{"NoChannel", bearer, `{"text":"x"}`, "channel_not_found"},
		{"UnknownChannel", bearer, `{"channel":"general","text":"x"}`, "channel_not_found"},
		{"NoText", bearer, `{"channel":"C1","text":""}`, "no_text"},
		{"TooLong", bearer, `{"channel":"C1","text":"` + strings.Repeat("é", fakeslack.TextLimit+1) + `"}`, "msg_too_long"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, srv := setup(t)
			resp, a := call(t, srv, "/api/chat.postMessage", tc.auth, tc.body)
			if resp.StatusCode != 200 || a.OK || a.Error != tc.code {
				t.Fatalf("got %d %+v, want %s", resp.StatusCode, a, tc.code)
			}
			if len(rec.Delivered()) != 0 || rec.Calls() != 1 {
				t.Fatalf("recorded %d, calls %d", len(rec.Delivered()), rec.Calls())
			}
		})
	}
}

func TestAccepts(t *testing.T) {
	t.Parallel()
	rec, srv := setup(t)
	for _, path := range []string{"/chat.postMessage", "/api/chat.postMessage"} {
		resp, a := call(t, srv, path, "Bearer "+token, `{"channel":"C0CHAN0001","text":"`+strings.Repeat("é", fakeslack.TextLimit)+`","thread_ts":"1764432060.000200","link_names":false}`)
		if resp.StatusCode != 200 || !a.OK || a.TS == "" {
			t.Fatalf("%s: %d %+v", path, resp.StatusCode, a)
		}
	}
	got := rec.Delivered()
	if len(got) != 2 || got[0].Thread != "1764432060.000200" || got[0].MessageID != "1795953600.000000" || got[1].MessageID != "1795953600.000001" ||
		string(got[0].Args["link_names"]) != "false" {
		t.Fatalf("Delivered = %+v", got)
	}
	resp, _ := call(t, srv, "/chat.scheduleMessage", "Bearer "+token, `{}`)
	if resp.StatusCode != 404 {
		t.Fatalf("another method: %d", resp.StatusCode)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		fault      fakeapi.Fault
		status     int
		code       string
		retryAfter string
	}{
		{"RateLimited", fakeapi.Fault{Status: 429, RetryAfter: 30 * time.Second}, 429, "ratelimited", "30"},
		{"EdgeError", fakeapi.Fault{Status: 502}, 502, "", ""},
		{"ErrorCode", fakeapi.Fault{Error: "channel_not_found"}, 200, "channel_not_found", ""},
		{"ErrorCodeWithRetryAfter", fakeapi.Fault{Error: "ratelimited", RetryAfter: 1500 * time.Millisecond}, 200, "ratelimited", "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, srv := setup(t)
			rec.Inject(tc.fault)
			resp, a := call(t, srv, "/chat.postMessage", "Bearer "+token, `{"channel":"C1","text":"x"}`)
			if resp.StatusCode != tc.status || a.Error != tc.code || resp.Header.Get("Retry-After") != tc.retryAfter {
				t.Fatalf("got %d %+v Retry-After %q", resp.StatusCode, a, resp.Header.Get("Retry-After"))
			}
			if len(rec.Delivered()) != 0 {
				t.Fatal("a failed send was recorded")
			}
		})
	}
}

// TestTheAdapterAgainstTheFake: the real client reads the fake's answers
// as the Web API's.
func TestTheAdapterAgainstTheFake(t *testing.T) {
	t.Parallel()
	rec, srv := setup(t)
	c := &slack.Client{Token: token, BaseURL: srv.URL, HTTP: srv.Client()}
	thread := message.Thread{Platform: message.Slack, Account: "T0TEAM0001", Chat: "D0DM000001"}
	rc, err := c.Send(t.Context(), message.Outgoing{Thread: thread, Content: message.Text("hi <there>")})
	if err != nil || len(rc.MessageIDs) != 1 || rc.MessageIDs[0] != rec.Delivered()[0].MessageID || rec.Delivered()[0].Text != "hi &lt;there&gt;" {
		t.Fatalf("Send = %+v, %v; recorded %+v", rc, err, rec.Delivered())
	}
	wrong := &slack.Client{Token: "xoxb-wrong", BaseURL: srv.URL, HTTP: srv.Client()}
	_, err = wrong.Send(t.Context(), message.Outgoing{Thread: thread, Content: message.Text("x")})
	var se *message.SendError
	if !errors.As(err, &se) || se.Class != message.FailAuth || se.Reason != "invalid_auth" {
		t.Fatalf("wrong token: %v", err)
	}
}

// TestSign signs real samples, an Events API body and an interactivity
// form, as the adapter's receiver checks them, with the Content-Type Slack
// sends for each.
func TestSign(t *testing.T) {
	t.Parallel()
	now := time.Unix(1764432240, 0)
	r := &slack.Receiver{SigningSecret: "8f742231b10e8888abcd99yyyzzz85a5"}
	for name, ctype := range map[string]string{
		"message-im.json":   "application/json",
		"block-actions.txt": "application/x-www-form-urlencoded",
	} {
		body, err := os.ReadFile(filepath.Join("..", "..", "..", "events", "slack", name))
		if err != nil {
			t.Fatal(err)
		}
		h := fakeslack.Sign(r.SigningSecret, now, body)
		if h.Get("Content-Type") != ctype {
			t.Errorf("%s: Content-Type %q, want %q", name, h.Get("Content-Type"), ctype)
		}
		req := &platform.Request{Method: http.MethodPost, Header: h, Body: body, Now: now}
		if err := r.Verify(req); err != nil {
			t.Fatalf("%s: Verify: %v", name, err)
		}
		req.Header = fakeslack.Sign("other", now, body)
		if err := r.Verify(req); !errors.Is(err, platform.ErrUnauthorized) {
			t.Fatalf("%s: Verify with another secret: %v", name, err)
		}
	}
}

// chat.update is held to UpdatesPerMinute a workspace (the recorder's
// clock stands still here): the next is refused with 429 ratelimited and a
// Retry-After, and changes nothing.
func TestUpdatesLimited(t *testing.T) {
	t.Parallel()
	rec, srv := setup(t)
	_, posted := call(t, srv, "/api/chat.postMessage", "Bearer "+token, `{"channel":"C0CHAN0001","text":"first"}`)
	if !posted.OK {
		t.Fatalf("post: %+v", posted)
	}
	update := func(text string) (*http.Response, answer) {
		return call(t, srv, "/api/chat.update", "Bearer "+token, `{"channel":"C0CHAN0001","ts":"`+posted.TS+`","text":"`+text+`"}`)
	}
	for i := range fakeslack.UpdatesPerMinute {
		if resp, a := update("v" + strings.Repeat("x", i)); resp.StatusCode != 200 || !a.OK {
			t.Fatalf("update %d: %d %+v", i, resp.StatusCode, a)
		}
	}
	resp, a := update("one too many")
	if resp.StatusCode != http.StatusTooManyRequests || a.Error != "ratelimited" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("update past the limit: %d %+v", resp.StatusCode, a)
	}
	if got := rec.Edits(); len(got) != fakeslack.UpdatesPerMinute {
		t.Fatalf("%d edits recorded, want %d", len(got), fakeslack.UpdatesPerMinute)
	}
}
