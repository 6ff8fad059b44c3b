package agent_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// FuzzEchoRequest sends the echo agent any signed body: it answers 200 with a
// valid envelope or text, or 400, and never panics.
func FuzzEchoRequest(f *testing.F) {
	valid, _ := json.Marshal(turn("hello | world"))
	f.Add(bytes.Replace(valid, []byte(`"version":""`), []byte(`"version":"parley.turn.v1"`), 1))
	f.Add([]byte(`{"version":"parley.turn.v1","turn_id":"t","event":{"text":"/silent"}}`))
	f.Add([]byte(`{"version":"parley.turn.v1","turn_id":"t","event":{"time":"yesterday"}}`))
	f.Add([]byte(`{"version":"parley.turn.v1","turn_id":"t","answer":{"content":{"a":[1,{"b":null}]}}}`))
	f.Add([]byte(`null`))
	f.Add([]byte{0xff, 0xfe})
	secret := mustSecret(f, testSecret)
	echo := agent.Echo{Secret: secret, Now: func() time.Time { return testNow }, StreamPause: -1}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		standardwebhooks.SetHeaders(r.Header, secret, "t", testNow, body)
		rec := httptest.NewRecorder()
		echo.ServeHTTP(rec, r)
		checkEchoResponse(t, rec)
	})
}

// FuzzEchoText sends the echo agent any message text: the reply is always a
// valid envelope (unique ids, no blank bubble) or text/plain.
func FuzzEchoText(f *testing.F) {
	for _, s := range []string{"hello", "a | b", "/bubbles | | ", "/one", "/text", "/silent", "/one@bot x", " | ", "/\n", "\xff|\xfe | x", "/stream a  b", "/stream"} {
		f.Add(s)
	}
	secret := mustSecret(f, testSecret)
	echo := agent.Echo{Secret: secret, Now: func() time.Time { return testNow }, StreamPause: -1}
	f.Fuzz(func(t *testing.T, text string) {
		req := turn(text)
		req.Version = agent.Version
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		standardwebhooks.SetHeaders(r.Header, secret, req.TurnID, testNow, body)
		rec := httptest.NewRecorder()
		echo.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d for a valid request: %s", rec.Code, rec.Body)
		}
		checkEchoResponse(t, rec)
	})
}

func checkEchoResponse(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	switch ct := rec.Header().Get("Content-Type"); {
	case rec.Code == http.StatusBadRequest:
	case rec.Code != http.StatusOK:
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	case strings.HasPrefix(ct, "application/json"):
		env := decodeEnvelope(t, rec.Body.Bytes())
		if len(env.Messages) == 0 || (env.Next.Type != "stop" && env.Next.Type != "silent") {
			t.Fatalf("envelope %+v", env)
		}
		for _, m := range env.Messages {
			if !utf8.ValidString(m.Text) {
				t.Fatalf("invalid UTF-8 bubble %q", m.Text)
			}
		}
	case strings.HasPrefix(ct, "text/plain"):
	case ct == agent.StreamType:
		reply, err := agent.ReadStream(rec.Body, agent.DefaultMaxReplyBytes, agent.DefaultMaxStreamBytes, nil)
		if err != nil || reply.ContentType != "application/json" {
			t.Fatalf("stream: %v %q", err, reply.ContentType)
		}
		if env := decodeEnvelope(t, reply.Body); len(env.Messages) != 2 {
			t.Fatalf("streamed envelope %+v", env)
		}
	default:
		t.Fatalf("content type %q", ct)
	}
}

// FuzzReadStream reads any bytes as a streamed reply: a final it returns is
// an object envelope or a text, every preview is a delta or a status with
// its text, and nothing panics.
func FuzzReadStream(f *testing.F) {
	f.Add([]byte("{\"type\":\"status\",\"text\":\"s\"}\n{\"type\":\"delta\",\"text\":\"a\"}\n{\"type\":\"final\",\"envelope\":{\"schema\":\"openab.turn.v1\",\"messages\":[]}}\n"))
	f.Add([]byte(`{"type":"final","text":"x"}`))
	f.Add([]byte("\n\r\n{\"type\":\"delta\",\"text\":\"\\u0000\"}"))
	f.Add([]byte(`{"type":"final","envelope":null}`))
	f.Add([]byte(`{"type":"delta","text":"a"}{"type":"delta","text":"b"}`))
	f.Add([]byte{0xff, '\n', '{'})
	f.Fuzz(func(t *testing.T, stream []byte) {
		reply, err := agent.ReadStream(bytes.NewReader(stream), 512, 4096, func(ev agent.StreamEvent) {
			if (ev.Type != agent.EventDelta && ev.Type != agent.EventStatus) || ev.Text == nil || ev.Envelope != nil {
				t.Fatalf("previewed %+v", ev)
			}
		})
		if err != nil {
			if !errors.Is(err, agent.ErrStream) && !errors.Is(err, agent.ErrReplyTooLarge) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		switch reply.ContentType {
		case "application/json":
			if len(reply.Body) == 0 || reply.Body[0] != '{' || !json.Valid(reply.Body) {
				t.Fatalf("final envelope %q", reply.Body)
			}
		case "text/plain":
		default:
			t.Fatalf("content type %q", reply.ContentType)
		}
	})
}
