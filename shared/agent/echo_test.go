package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// envelope is openab.turn.v1 as design §3 defines it, decoded strictly.
type envelope struct {
	Schema   string `json:"schema"`
	Messages []struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	} `json:"messages"`
	Next struct {
		Type string `json:"type"`
	} `json:"next"`
}

func decodeEnvelope(t testing.TB, body []byte) envelope {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var env envelope
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("reply is not an envelope: %v: %s", err, body)
	}
	if env.Schema != "openab.turn.v1" {
		t.Fatalf("schema = %q", env.Schema)
	}
	seen := map[string]bool{}
	for _, m := range env.Messages {
		if strings.TrimSpace(m.ID) == "" || seen[m.ID] || strings.TrimSpace(m.Text) == "" {
			t.Fatalf("bad bubble %+v in %s", m, body)
		}
		seen[m.ID] = true
	}
	return env
}

func texts(env envelope) []string {
	out := make([]string, len(env.Messages))
	for i, m := range env.Messages {
		out[i] = m.Text
	}
	return out
}

func echoClient(t testing.TB) *agent.Client {
	return &agent.Client{URL: agent.BuiltinEcho, Secret: mustSecret(t, testSecret), Now: func() time.Time { return testNow }}
}

func TestBuiltinEcho(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		platform   message.Platform
		wantType   string
		want       []string // bubbles, or the text/plain body
		wantNext   string
	}{
		{"TwoBubbles", "hello", message.Telegram, "application/json", []string{"echo: hello", "5 characters, via telegram"}, "stop"},
		{"CountsCodePoints", "héllo 👋", message.Slack, "application/json", []string{"echo: héllo 👋", "7 characters, via slack"}, "stop"},
		{"OneCharacter", "x", message.LINE, "application/json", []string{"echo: x", "1 character, via line"}, "stop"},
		{"EmptyText", "", message.Telegram, "application/json", []string{"echo: (empty)", "0 characters, via telegram"}, "stop"},
		{"UnknownPlatform", "hi", "", "application/json", []string{"echo: hi", "2 characters, via unknown"}, "stop"},
		{"MultilineStaysOneBubble", "line 1\nline 2", message.Telegram, "application/json", []string{"echo: line 1\nline 2", "13 characters, via telegram"}, "stop"},
		{"PipeSegments", "one | two | three", message.Telegram, "application/json", []string{"one", "two", "three"}, "stop"},
		{"PipeWithoutSpacesIsText", "a|b", message.Telegram, "application/json", []string{"echo: a|b", "3 characters, via telegram"}, "stop"},
		{"BubblesOne", "/bubbles just one", message.Telegram, "application/json", []string{"just one"}, "stop"},
		{"BubblesMany", "/bubbles a|b | c |  | d", message.Telegram, "application/json", []string{"a", "b", "c", "d"}, "stop"},
		{"BubblesNone", "/bubbles", message.Telegram, "application/json", []string{"(empty)"}, "stop"},
		{"OneKeepsPipes", "/one a | b | c", message.Telegram, "application/json", []string{"a | b | c"}, "stop"},
		{"OneAfterNewline", "/one\nfirst line\nsecond", message.Telegram, "application/json", []string{"first line\nsecond"}, "stop"},
		{"OneWithBotName", "/one@parley_bot hi", message.Telegram, "application/json", []string{"hi"}, "stop"},
		{"OneEmpty", "/one   ", message.Telegram, "application/json", []string{"(empty)"}, "stop"},
		{"Silent", "/silent", message.Telegram, "application/json", []string{"this bubble must never be sent"}, "silent"},
		{"SilentIgnoresArg", "  /silent please", message.Telegram, "application/json", []string{"this bubble must never be sent"}, "silent"},
		{"NotACommand", "/silently", message.Telegram, "application/json", []string{"echo: /silently", "9 characters, via telegram"}, "stop"},
		{"Text", "/text plain <b>words</b> | kept", message.Telegram, "text/plain", []string{"plain <b>words</b> | kept"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := turn(tc.text)
			req.Event.Platform = tc.platform
			reply, err := echoClient(t).Call(t.Context(), req)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if reply.Status != 200 || reply.ContentType != tc.wantType {
				t.Fatalf("reply %d %q, want 200 %q", reply.Status, reply.ContentType, tc.wantType)
			}
			if tc.wantType == "text/plain" {
				if string(reply.Body) != tc.want[0] {
					t.Fatalf("body = %q, want %q", reply.Body, tc.want[0])
				}
				return
			}
			env := decodeEnvelope(t, reply.Body)
			if got := texts(env); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) || env.Next.Type != tc.wantNext {
				t.Fatalf("bubbles %q next %q, want %q next %q", got, env.Next.Type, tc.want, tc.wantNext)
			}
		})
	}
}

func TestBuiltinEchoAnswer(t *testing.T) {
	t.Parallel()
	req := turn("ignored")
	req.Answer = &agent.Answer{QuestionID: "q_7", Action: agent.AnswerAccept, Content: map[string]any{"seat": "12A", "meal": true}}
	reply, err := echoClient(t).Call(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	env := decodeEnvelope(t, reply.Body)
	if got := texts(env); len(got) != 1 || got[0] != `answer accept to q_7: {"meal":true,"seat":"12A"}` {
		t.Fatalf("bubbles %q", got)
	}
}

func TestBuiltinEchoIsDeterministic(t *testing.T) {
	t.Parallel()
	c := echoClient(t)
	first, err := c.Call(t.Context(), turn("same | input"))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := c.Call(t.Context(), turn("same | input"))
		if err != nil || !bytes.Equal(again.Body, first.Body) {
			t.Fatalf("reply changed: %s vs %s (%v)", again.Body, first.Body, err)
		}
	}
}

// TestEchoOverHTTP mounts Echo on a real server, as the local runner does,
// and calls it with a client: the full signed round trip over a socket.
func TestEchoOverHTTP(t *testing.T) {
	t.Parallel()
	echo := agent.Echo{Secret: mustSecret(t, testSecret), Now: func() time.Time { return testNow.Add(time.Minute) }}
	srv := httptest.NewServer(echo)
	defer srv.Close()
	c := &agent.Client{URL: srv.URL + "/agent/echo", Secret: mustSecret(t, testSecret), HTTP: srv.Client(), Now: func() time.Time { return testNow }}

	reply, err := c.Call(t.Context(), turn("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(decodeEnvelope(t, reply.Body)); len(got) != 2 || got[0] != "echo: hello" {
		t.Fatalf("bubbles %q", got)
	}

	t.Run("WrongSecretIsPermanent401", func(t *testing.T) {
		bad := *c
		bad.Secret = mustSecret(t, "not-the-secret")
		_, err := bad.Call(t.Context(), turn("hello"))
		var ae *agent.Error
		if !errors.As(err, &ae) || ae.Kind != agent.KindPermanent || ae.Status != http.StatusUnauthorized {
			t.Fatalf("err = %v, want permanent 401", err)
		}
	})
	t.Run("StaleClockIs401", func(t *testing.T) {
		skewed := *c
		skewed.Now = func() time.Time { return testNow.Add(-10 * time.Minute) }
		_, err := skewed.Call(t.Context(), turn("hello"))
		var ae *agent.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
			t.Fatalf("err = %v, want 401", err)
		}
	})
}

func TestEchoRefuses(t *testing.T) {
	t.Parallel()
	secret := mustSecret(t, testSecret)
	echo := agent.Echo{Secret: secret, Now: func() time.Time { return testNow }}
	signedReq := func(body []byte) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/agent/echo", bytes.NewReader(body))
		standardwebhooks.SetHeaders(r.Header, secret, "turn-1", testNow, body)
		return r
	}
	valid, _ := json.Marshal(turn("hi"))
	valid = bytes.Replace(valid, []byte(`"version":""`), []byte(`"version":"parley.turn.v1"`), 1)
	for _, tc := range []struct {
		name string
		req  func() *http.Request
		want int
	}{
		{"Valid", func() *http.Request { return signedReq(valid) }, http.StatusOK},
		{"Get", func() *http.Request { return httptest.NewRequest(http.MethodGet, "/agent/echo", nil) }, http.StatusMethodNotAllowed},
		{"Unsigned", func() *http.Request {
			return httptest.NewRequest(http.MethodPost, "/agent/echo", bytes.NewReader(valid))
		}, http.StatusUnauthorized},
		{"TamperedBody", func() *http.Request {
			r := signedReq(valid)
			r.Body = io.NopCloser(bytes.NewReader(bytes.Replace(valid, []byte(`"hi"`), []byte(`"ho"`), 1)))
			return r
		}, http.StatusUnauthorized},
		{"Stale", func() *http.Request {
			r := signedReq(valid)
			standardwebhooks.SetHeaders(r.Header, secret, "turn-1", testNow.Add(-6*time.Minute), valid)
			return r
		}, http.StatusUnauthorized},
		{"Garbage", func() *http.Request { return signedReq([]byte("not json")) }, http.StatusBadRequest},
		{"WrongVersion", func() *http.Request {
			return signedReq(bytes.Replace(valid, []byte(agent.Version), []byte("parley.turn.v9"), 1))
		}, http.StatusBadRequest},
		{"NoTurnID", func() *http.Request { return signedReq([]byte(`{"version":"parley.turn.v1","event":{}}`)) }, http.StatusBadRequest},
		{"TooLarge", func() *http.Request { return signedReq(bytes.Repeat([]byte(" "), 1<<20+1)) }, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			echo.ServeHTTP(rec, tc.req())
			if rec.Code != tc.want {
				t.Fatalf("status %d (%s), want %d", rec.Code, rec.Body, tc.want)
			}
			if tc.want != http.StatusOK && strings.Contains(rec.Body.String(), testSecret[6:]) {
				t.Fatalf("refusal reveals the secret: %s", rec.Body)
			}
		})
	}
	t.Run("ZeroSecretRefusesEverything", func(t *testing.T) {
		rec := httptest.NewRecorder()
		agent.Echo{}.ServeHTTP(rec, signedReq(valid))
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", rec.Code)
		}
	})
}

func ExampleClient_Call() {
	secret, _ := standardwebhooks.ParseSecret("local-demo-secret")
	c := &agent.Client{URL: agent.BuiltinEcho, Secret: secret}
	reply, err := c.Call(context.Background(), agent.TurnRequest{
		TurnID: "turn-1",
		Event:  message.Event{Platform: message.Telegram, Text: "hello | world"},
	})
	fmt.Println(reply.Status, reply.ContentType, err)
	fmt.Print(string(reply.Body))
	// Output:
	// 200 application/json <nil>
	// {"schema":"openab.turn.v1","messages":[{"id":"b1","text":"hello"},{"id":"b2","text":"world"}],"next":{"type":"stop"}}
}

func BenchmarkCallBuiltinEcho(b *testing.B) {
	c := echoClient(b)
	req := turn("benchmark | two bubbles")
	for b.Loop() {
		if _, err := c.Call(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallHTTP(b *testing.B) {
	srv := httptest.NewServer(agent.Echo{Secret: mustSecret(b, testSecret), Now: func() time.Time { return testNow }})
	defer srv.Close()
	c := &agent.Client{URL: srv.URL, Secret: mustSecret(b, testSecret), HTTP: srv.Client(), Now: func() time.Time { return testNow }}
	req := turn("benchmark")
	for b.Loop() {
		if _, err := c.Call(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}
