package platform_test

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

func TestPostJSON(t *testing.T) {
	t.Parallel()
	var got struct {
		path, ctype, auth, body string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.path, got.ctype, got.auth, got.body = r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Authorization"), string(b)
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()

	api := platform.API{Name: "Test API", BaseURL: srv.URL + "/api/", Token: "tok"}
	resp, err := api.PostJSON(context.Background(), "/chat.post", http.Header{"Authorization": {"Bearer tok"}}, map[string]string{"text": "hi"})
	if err != nil || resp.Status != 200 {
		t.Fatalf("PostJSON = %+v, %v", resp, err)
	}
	// The root's trailing slash is dropped; JSON is the default type.
	if got.path != "/api/chat.post" || got.ctype != "application/json" || got.auth != "Bearer tok" || got.body != `{"text":"hi"}` {
		t.Fatalf("request %+v", got)
	}
	_, err = api.PostJSON(context.Background(), "/x", http.Header{"Content-Type": {"application/json; charset=utf-8"}}, 1)
	if err != nil || got.ctype != "application/json; charset=utf-8" {
		t.Fatalf("a caller's Content-Type is kept: %q, %v", got.ctype, err)
	}
	var v struct{ OK bool }
	if err := api.Decode(resp, &v); err != nil || !v.OK {
		t.Fatalf("Decode = %+v, %v", v, err)
	}
}

// TestPostJSONRefusesWithoutCalling: what the configuration or the
// arguments get wrong is refused before a request leaves, and never shows
// a token that travels in the path.
func TestPostJSONRefusesWithoutCalling(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer srv.Close()
	const secret = "SECRET-token"
	cases := []struct {
		name  string
		api   platform.API
		path  string
		args  any
		class message.FailureClass
	}{
		{"NoToken", platform.API{Name: "Test API", BaseURL: srv.URL}, "/m", 1, message.FailAuth},
		{"RelativeBase", platform.API{Name: "Test API", BaseURL: "api.example.com", Token: secret}, "/m", 1, message.FailAuth},
		{"DefaultBaseUnset", platform.API{Name: "Test API", Token: secret}, "/m", 1, message.FailAuth},
		{"TokenBreaksTheURL", platform.API{Name: "Test API", BaseURL: srv.URL, Token: secret}, "/bot" + secret + "\x7f/m", 1, message.FailAuth},
		{"ArgsDoNotEncode", platform.API{Name: "Test API", BaseURL: srv.URL, Token: secret}, "/m", math.Inf(1), message.FailInvalidPayload},
	}
	for _, tc := range cases {
		_, err := tc.api.PostJSON(context.Background(), tc.path, nil, tc.args)
		if se := classOf(t, err); se.Class != tc.class {
			t.Errorf("%s: class %s, want %s (%v)", tc.name, se.Class, tc.class, err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d requests left", n)
	}
}

func TestDecodeAnswerThatIsNoAPIResponse(t *testing.T) {
	t.Parallel()
	api := platform.API{Name: "Bot API"}
	var v map[string]any
	err := api.Decode(&platform.Response{Status: 200, Body: []byte("<html>hotel wifi</html>")}, &v)
	se := classOf(t, err)
	if se.Class != message.FailUnknown || se.Status != 200 || se.Reason != "answer is not a Bot API response" {
		t.Fatalf("got %+v", se)
	}
}

func TestStatusFailure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		header http.Header
		class  message.FailureClass
		retry  time.Duration
	}{
		{429, http.Header{"Retry-After": {"12"}}, message.FailRateLimit, 12 * time.Second},
		{429, nil, message.FailRateLimit, 0},
		{400, nil, message.FailInvalidPayload, 0},
		{401, nil, message.FailAuth, 0},
		{403, nil, message.FailPermission, 0},
		// A chat API answers 404 to a wrong method URL, never to a
		// missing chat.
		{404, nil, message.FailAuth, 0},
		{409, nil, message.FailConflict, 0},
		{500, nil, message.FailUnknown, 0},
		{502, nil, message.FailUnknown, 0},
		{503, http.Header{"Retry-After": {"5"}}, message.FailUnknown, 0},
		{302, nil, message.FailUnknown, 0},
	}
	for _, tc := range cases {
		se := platform.StatusFailure(tc.status, tc.header)
		if se.Class != tc.class || se.RetryAfter != tc.retry || se.Status != tc.status || se.Reason != "HTTP "+strconv.Itoa(tc.status) {
			t.Errorf("StatusFailure(%d) = %+v, want %s retry %s", tc.status, se, tc.class, tc.retry)
		}
	}
}

func TestCheckThread(t *testing.T) {
	t.Parallel()
	own := message.Thread{Platform: message.Slack, Account: "T0TEAM0001", Chat: "C1"}
	for name, tc := range map[string]struct {
		account string
		thread  message.Thread
		ok      bool
	}{
		"Own":                {"T0TEAM0001", own, true},
		"OwnInAnotherCase":   {"t0team0001", own, true},
		"Unscoped":           {"", own, true},
		"OtherAccount":       {"T0TEAM0002", own, false},
		"NoChat":             {"T0TEAM0001", message.Thread{Account: "T0TEAM0001"}, false},
		"NoChatEvenUnscoped": {"", message.Thread{}, false},
	} {
		err := platform.CheckThread(tc.account, tc.thread)
		if tc.ok {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if se := classOf(t, err); se.Class != message.FailInvalidPayload {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestTextOf(t *testing.T) {
	t.Parallel()
	if s, err := platform.TextOf(message.Text("hi")); s != "hi" || err != nil {
		t.Fatalf("TextOf(text) = %q, %v", s, err)
	}
	for name, c := range map[string]message.Content{
		"Empty":  {},
		"Prompt": {Prompt: &message.Prompt{Text: "Which?"}},
	} {
		if _, err := platform.TextOf(c); classOf(t, err).Class != message.FailInvalidPayload {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestTextFor(t *testing.T) {
	t.Parallel()
	own := message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"}
	if s, err := platform.TextFor("7000000001", message.Outgoing{Thread: own, Content: message.Text("hi")}); s != "hi" || err != nil {
		t.Fatalf("TextFor = %q, %v", s, err)
	}
	other := own
	other.Account = "7000000002"
	for name, m := range map[string]message.Outgoing{
		"OtherAccount": {Thread: other, Content: message.Text("hi")},
		"NotText":      {Thread: own},
	} {
		if _, err := platform.TextFor("7000000001", m); classOf(t, err).Class != message.FailInvalidPayload {
			t.Errorf("%s: %v", name, err)
		}
	}
}
