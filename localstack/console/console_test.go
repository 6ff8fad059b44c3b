package console_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/console"
	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/localstack/localtest"
	"github.com/parleyhq/parley/shared/operator"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// newConsole is the console over a local stack, mounted on its mux as
// make run mounts it.
func newConsole(t testing.TB, s *localtest.Stack) *console.Console {
	t.Helper()
	target, err := operator.TargetFromEnv(s.Getenv, s.Log)
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(console.Options{Operator: operator.New(target, s.Env.DynamoDB, s.Env.SQS), Recorder: s.Fake.Recorder(), Signer: s.Signer, Base: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	s.Mux.Handle(console.Prefix, c)
	return c
}

// TestConsoleAnswersLoopbackOnlyAndRefusesForeignRequests: the console
// answers a client beyond loopback, or a request naming another host (a
// page elsewhere that rebinds its name to 127.0.0.1), with 403; a
// decision needs its JSON body and its own header, which another origin's
// page cannot send without a preflight; every answer carries the CSP that
// allows the page its own script only.
func TestConsoleAnswersLoopbackOnlyAndRefusesForeignRequests(t *testing.T) {
	t.Parallel()
	s := localtest.Start(t, localtest.Options{})
	c := newConsole(t, s)
	do := func(method, target, remote, host string, hdr map[string]string, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.RemoteAddr, r.Host = remote, host
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		c.ServeHTTP(w, r)
		return w
	}
	json := map[string]string{"Content-Type": "application/json", "X-Parley-Console": "1"}
	say := `{"platform":"telegram","chat_type":"private","text":"hi"}`
	for _, tc := range []struct {
		name, method, target, remote, host string
		hdr                                map[string]string
		body                               string
		want                               int
	}{
		{"page", "GET", "/console/", "127.0.0.1:5000", "127.0.0.1:8787", nil, "", 200},
		{"script", "GET", "/console/console.js", "[::1]:5000", "localhost:8787", nil, "", 200},
		{"remote client", "GET", "/console/", "203.0.113.7:5000", "127.0.0.1:8787", nil, "", 403},
		{"rebound name", "GET", "/console/api/state", "127.0.0.1:5000", "parley.attacker.example:8787", nil, "", 403},
		{"no header", "POST", "/console/api/say", "127.0.0.1:5000", "127.0.0.1:8787", map[string]string{"Content-Type": "application/json"}, say, 403},
		{"form body", "POST", "/console/api/say", "127.0.0.1:5000", "127.0.0.1:8787", map[string]string{"Content-Type": "text/plain", "X-Parley-Console": "1"}, say, 403},
		{"other origin", "POST", "/console/api/say", "127.0.0.1:5000", "127.0.0.1:8787",
			map[string]string{"Content-Type": "application/json", "X-Parley-Console": "1", "Origin": "http://evil.example"}, say, 403},
		{"unknown field", "POST", "/console/api/say", "127.0.0.1:5000", "127.0.0.1:8787", json, `{"platform":"telegram","x":1}`, 400},
		{"no such chat", "POST", "/console/api/say", "127.0.0.1:5000", "127.0.0.1:8787", json, `{"platform":"whatsapp","chat_type":"group","text":"hi"}`, 400},
		{"ambiguous unit", "POST", "/console/api/resend", "127.0.0.1:5000", "127.0.0.1:8787", json, `{"unit":"b1#1"}`, 400},
		{"bad key", "GET", "/console/api/message?key=900001", "127.0.0.1:5000", "127.0.0.1:8787", nil, "", 400},
	} {
		w := do(tc.method, tc.target, tc.remote, tc.host, tc.hdr, tc.body)
		if w.Code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, w.Code, w.Body, tc.want)
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q", tc.name, csp)
		}
	}
	if w := do("GET", "/console/console.js", "127.0.0.1:1", "127.0.0.1:8787", nil, ""); !strings.Contains(w.Header().Get("Content-Type"), "javascript") ||
		strings.Contains(w.Body.String(), "innerHTML") || strings.Contains(w.Body.String(), "insertAdjacentHTML") {
		t.Errorf("console.js: %s; want JavaScript that never parses data as markup", w.Header().Get("Content-Type"))
	}
}

// TestStateIsJSONWhateverThePersonWrote: a message with markup in it comes
// back from the state as a JSON string, its markup escaped (no <, > or &
// as such), for the page to put in as text.
func TestStateIsJSONWhateverThePersonWrote(t *testing.T) {
	t.Parallel()
	s := localtest.Start(t, localtest.Options{})
	newConsole(t, s)
	post := func(path, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Parley-Console", "1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("/console/api/say", `{"platform":"telegram","chat_type":"private","text":"<img src=x onerror=alert(1)>"}`)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("say: %s", resp.Status)
	}
	st, err := http.Get(s.URL + "/console/api/state")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(st.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "<img") || !strings.Contains(string(raw), `\u003cimg src=x onerror=alert(1)\u003e`) {
		t.Fatalf("state: %s; want the text escaped in JSON", raw)
	}
}
