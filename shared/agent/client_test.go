package agent_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	testKey    = []byte("parley-agent-test-key-32-bytes!!")
	testSecret = "whsec_" + base64.StdEncoding.EncodeToString(testKey)
	testNow    = time.Unix(1_700_000_000, 0)
	// userText stands for a person's message: it must never appear in an
	// error.
	userText = "my card number is 4111 1111 1111 1111"
)

func mustSecret(t testing.TB, s string) standardwebhooks.Secret {
	t.Helper()
	sec, err := standardwebhooks.ParseSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

func turn(text string) agent.TurnRequest {
	th := message.Thread{Platform: message.Telegram, Account: "42", Chat: "1001"}
	return agent.TurnRequest{
		TurnID:     "0123456789abcdef0123456789abcdef",
		ThreadKey:  th.Key(),
		SessionKey: th.Key(),
		Event: message.Event{
			Platform: message.Telegram, Account: "42", EventID: "777", Kind: message.KindMessage,
			Thread: th, Sender: message.Sender{ID: "9", Name: "Ada"}, Text: text, MessageID: "55",
			ChatType: message.ChatPrivate, Time: testNow.Add(-time.Second).UTC(),
		},
	}
}

// setup starts an agent server with handler h and a client pointing at it.
func setup(t *testing.T, h http.HandlerFunc) (*agent.Client, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &agent.Client{
		URL: srv.URL + "/turn", Secret: mustSecret(t, testSecret), HTTP: srv.Client(),
		Now: func() time.Time { return testNow },
	}, srv
}

type captured struct {
	method string
	path   string
	header http.Header
	body   []byte
}

func TestCallSendsSignedTurnRequest(t *testing.T) {
	t.Parallel()
	got := make(chan captured, 1)
	envelope := `{"schema":"openab.turn.v1","messages":[{"id":"a","text":"hi"}],"next":{"type":"stop"}}`
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- captured{r.Method, r.URL.Path, r.Header.Clone(), body}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, envelope)
	})
	reply, err := c.Call(t.Context(), turn(userText))
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if reply.Status != 200 || reply.ContentType != "application/json" || string(reply.Body) != envelope || reply.Accepted {
		t.Fatalf("reply = %+v", reply)
	}
	req := <-got

	t.Run("Headers", func(t *testing.T) {
		for name, want := range map[string]string{
			"Content-Type":      "application/json",
			"User-Agent":        "Parley/1",
			"Webhook-Id":        "0123456789abcdef0123456789abcdef",
			"Webhook-Timestamp": strconv.FormatInt(testNow.Unix(), 10),
		} {
			if got := req.header.Get(name); got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
		if req.method != http.MethodPost || req.path != "/turn" {
			t.Errorf("request %s %s, want POST /turn", req.method, req.path)
		}
	})
	t.Run("SignatureVerifiesWithStandardWebhooks", func(t *testing.T) {
		v := standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{mustSecret(t, testSecret)}}
		id, err := v.Verify(req.header, req.body, testNow.Add(4*time.Minute))
		if err != nil || id != "0123456789abcdef0123456789abcdef" {
			t.Fatalf("Verify = %q, %v", id, err)
		}
	})
	t.Run("SignatureMatchesHandComputedHMAC", func(t *testing.T) {
		// What an agent author writes with nothing but a crypto library.
		m := hmac.New(sha256.New, testKey)
		fmt.Fprintf(m, "%s.%s.", req.header.Get("webhook-id"), req.header.Get("webhook-timestamp"))
		m.Write(req.body)
		want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
		if got := req.header.Get("webhook-signature"); got != want {
			t.Fatalf("webhook-signature = %q, want %q", got, want)
		}
	})
	t.Run("BodyFields", func(t *testing.T) {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(req.body, &raw); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"version", "turn_id", "thread_key", "session_key", "event"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("body lacks %q: %s", k, req.body)
			}
		}
		if _, ok := raw["answer"]; ok {
			t.Errorf("body has an answer it was not given: %s", req.body)
		}
		var tr agent.TurnRequest
		if err := json.Unmarshal(req.body, &tr); err != nil {
			t.Fatal(err)
		}
		want := turn(userText)
		want.Version = agent.Version // filled by Call
		if tr.Version != want.Version || tr.TurnID != want.TurnID || tr.ThreadKey != "telegram:42:1001" ||
			tr.SessionKey != want.SessionKey || tr.Event.Text != userText || tr.Event.Platform != message.Telegram ||
			tr.Event.Sender != want.Event.Sender || !tr.Event.Time.Equal(want.Event.Time) || tr.Event.Key() != want.Event.Key() {
			t.Fatalf("decoded %+v\nwant %+v", tr, want)
		}
	})
}

func TestCallSendsAnswer(t *testing.T) {
	t.Parallel()
	got := make(chan []byte, 1)
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- body
		w.WriteHeader(http.StatusNoContent)
	})
	req := turn("")
	req.Answer = &agent.Answer{QuestionID: "q_1", Action: agent.AnswerAccept, Content: map[string]any{"seat": "12A"}}
	if _, err := c.Call(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Answer map[string]any `json:"answer"`
	}
	if err := json.Unmarshal(<-got, &body); err != nil {
		t.Fatal(err)
	}
	if body.Answer["question_id"] != "q_1" || body.Answer["action"] != "accept" || body.Answer["content"].(map[string]any)["seat"] != "12A" {
		t.Fatalf("answer = %v", body.Answer)
	}
}

func TestCallClassifiesReplies(t *testing.T) {
	t.Parallel()
	type want struct {
		reply      *agent.Reply
		kind       agent.ErrorKind
		status     int
		retryAfter time.Duration
		is         error
	}
	respond := func(status int, ctype, body string, extra ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if ctype == "-" {
				w.Header()["Content-Type"] = nil // no sniffing: really no Content-Type
			} else if ctype != "" {
				w.Header().Set("Content-Type", ctype)
			}
			for i := 0; i+1 < len(extra); i += 2 {
				w.Header().Set(extra[i], extra[i+1])
			}
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	env := `{"schema":"openab.turn.v1","messages":[{"id":"a","text":"x"}]}`
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		want want
	}{
		{"Envelope", respond(200, "application/json", env), want{reply: &agent.Reply{Status: 200, ContentType: "application/json", Body: []byte(env)}}},
		{"EnvelopeWithParamsAnyCase", respond(200, "Application/JSON; Charset=UTF-8", env), want{reply: &agent.Reply{Status: 200, ContentType: "application/json", Body: []byte(env)}}},
		{"Text", respond(200, "text/plain; charset=utf-8", "hello"), want{reply: &agent.Reply{Status: 200, ContentType: "text/plain", Body: []byte("hello")}}},
		{"TextOther2xx", respond(201, "TEXT/PLAIN", "hello"), want{reply: &agent.Reply{Status: 201, ContentType: "text/plain", Body: []byte("hello")}}},
		{"EmptyJSONBody", respond(200, "application/json", ""), want{reply: &agent.Reply{Status: 200, ContentType: "application/json", Body: []byte{}}}},
		{"NoContent", respond(204, "", ""), want{reply: &agent.Reply{Status: 204}}},
		{"Accepted", respond(202, "application/json", `{"queued":true}`), want{reply: &agent.Reply{Status: 202, Accepted: true}}},
		{"ServerError", respond(500, "text/plain", "boom: "+userText), want{kind: agent.KindTransient, status: 500, is: agent.ErrStatus}},
		{"BadGateway", respond(502, "text/html", "<h1>bad gateway</h1>"), want{kind: agent.KindTransient, status: 502, is: agent.ErrStatus}},
		{"UnavailableRetryAfterSeconds", respond(503, "", "", "Retry-After", "30"), want{kind: agent.KindTransient, status: 503, retryAfter: 30 * time.Second, is: agent.ErrStatus}},
		{"UnavailableRetryAfterDate", respond(503, "", "", "Retry-After", testNow.Add(2*time.Minute).UTC().Format(http.TimeFormat)),
			want{kind: agent.KindTransient, status: 503, retryAfter: 2 * time.Minute, is: agent.ErrStatus}},
		{"TooManyRequests", respond(429, "", "", "Retry-After", "7"), want{kind: agent.KindTransient, status: 429, retryAfter: 7 * time.Second, is: agent.ErrStatus}},
		{"TooManyRequestsNoRetryAfter", respond(429, "", ""), want{kind: agent.KindTransient, status: 429, is: agent.ErrStatus}},
		{"RetryAfterCapped", respond(429, "", "", "Retry-After", "99999999"), want{kind: agent.KindTransient, status: 429, retryAfter: agent.MaxRetryAfter, is: agent.ErrStatus}},
		{"RequestTimeout", respond(408, "", ""), want{kind: agent.KindTransient, status: 408, is: agent.ErrStatus}},
		{"NotFound", respond(404, "text/plain", "404 page not found"), want{kind: agent.KindPermanent, status: 404, is: agent.ErrStatus}},
		{"BadRequest", respond(400, "application/json", `{"error":"bad"}`), want{kind: agent.KindPermanent, status: 400, is: agent.ErrStatus}},
		{"Unauthorized", respond(401, "", ""), want{kind: agent.KindPermanent, status: 401, is: agent.ErrStatus}},
		{"GoneIgnoresRetryAfter", respond(410, "", "", "Retry-After", "5"), want{kind: agent.KindPermanent, status: 410, is: agent.ErrStatus}},
		{"Redirect", respond(307, "", "", "Location", "/elsewhere"), want{kind: agent.KindPermanent, status: 307, is: agent.ErrRedirect}},
		{"HTML", respond(200, "text/html; charset=utf-8", "<p>hi</p>"), want{kind: agent.KindPermanent, status: 200, is: agent.ErrContentType}},
		{"NoContentType", respond(200, "-", "hello"), want{kind: agent.KindPermanent, status: 200, is: agent.ErrContentType}},
		{"Latin1Charset", respond(200, "text/plain; charset=iso-8859-1", "hello"), want{kind: agent.KindPermanent, status: 200, is: agent.ErrContentType}},
		{"OversizeDeclared", respond(200, "text/plain", strings.Repeat("x", 1025)), want{kind: agent.KindPermanent, status: 200, is: agent.ErrReplyTooLarge}},
		{"OversizeChunked", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			for range 5 {
				io.WriteString(w, strings.Repeat("y", 300))
				w.(http.Flusher).Flush() // no Content-Length: chunked
			}
		}, want{kind: agent.KindPermanent, status: 200, is: agent.ErrReplyTooLarge}},
		{"ExactlyAtLimit", respond(200, "text/plain", strings.Repeat("z", 1024)), want{reply: &agent.Reply{Status: 200, ContentType: "text/plain", Body: []byte(strings.Repeat("z", 1024))}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/turn" {
					t.Errorf("followed a redirect to %s", r.URL.Path)
				}
				hits.Add(1)
				tc.h(w, r)
			})
			c.MaxReplyBytes = 1024
			reply, err := c.Call(t.Context(), turn(userText))
			if n := hits.Load(); n != 1 {
				t.Errorf("agent hit %d times, want exactly 1", n)
			}
			if tc.want.reply != nil {
				if err != nil {
					t.Fatalf("Call: %v", err)
				}
				w := *tc.want.reply
				if reply.Status != w.Status || reply.ContentType != w.ContentType || string(reply.Body) != string(w.Body) || reply.Accepted != w.Accepted {
					t.Fatalf("reply = %+v, want %+v", reply, w)
				}
				return
			}
			var ae *agent.Error
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v (%T), want *agent.Error", err, err)
			}
			if ae.Kind != tc.want.kind || ae.Status != tc.want.status || ae.RetryAfter != tc.want.retryAfter || !errors.Is(err, tc.want.is) {
				t.Fatalf("err = %+v (%v); want kind %s status %d retry after %s, is %v", *ae, err, tc.want.kind, tc.want.status, tc.want.retryAfter, tc.want.is)
			}
			assertClean(t, err)
		})
	}
}

// assertClean checks an error holds neither the secret nor message text.
func assertClean(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	// A fragment of the card number, but one an address cannot hold: a
	// random port such as 41113 holds "4111" (a flake in CI).
	for _, s := range []string{testSecret, strings.TrimPrefix(testSecret, "whsec_"), string(testKey), userText, "4111 1111", "card number", "token=", "s3cr3t"} {
		if strings.Contains(msg, s) {
			t.Fatalf("error %q holds %q", msg, s)
		}
	}
}

func TestCallTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done(): // the client hung up
		case <-release:
		}
	})
	defer close(release)
	c.Timeout = 50 * time.Millisecond
	_, err := c.Call(t.Context(), turn(userText))
	var ae *agent.Error
	if !errors.As(err, &ae) || ae.Kind != agent.KindTransient || ae.Status != 0 {
		t.Fatalf("err = %v, want a transient *agent.Error without status", err)
	}
	if !errors.Is(err, agent.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout and context.DeadlineExceeded", err)
	}
	assertClean(t, err)
}

func TestCallTimeoutWhileReadingBody(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	c.Timeout = 50 * time.Millisecond
	_, err := c.Call(t.Context(), turn(userText))
	var ae *agent.Error
	if !errors.As(err, &ae) || ae.Kind != agent.KindTransient || !errors.Is(err, agent.ErrTimeout) {
		t.Fatalf("err = %v, want transient ErrTimeout", err)
	}
}

func TestCallCallerCancelled(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server notices a hang-up only after the body
		close(started)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-started; cancel() }()
	_, err := c.Call(ctx, turn(userText))
	var ae *agent.Error
	if !errors.As(err, &ae) || ae.Kind != agent.KindTransient {
		t.Fatalf("err = %v, want transient", err)
	}
	if errors.Is(err, agent.ErrTimeout) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled and not ErrTimeout", err)
	}
}

func TestCallConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := &agent.Client{URL: "http://" + addr + "/agent/s3cr3t-path?token=s3cr3t", Secret: mustSecret(t, testSecret)}
	_, err = c.Call(t.Context(), turn(userText))
	var ae *agent.Error
	if !errors.As(err, &ae) || ae.Kind != agent.KindTransient || ae.Status != 0 || errors.Is(err, agent.ErrTimeout) {
		t.Fatalf("err = %v, want transient, no status, no timeout", err)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) {
		t.Fatalf("err = %v, want a *net.OpError in the chain", err)
	}
	assertClean(t, err)
}

func TestCallUntrustedCertificateIsPermanent(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	c := &agent.Client{URL: srv.URL, Secret: mustSecret(t, testSecret), HTTP: &http.Client{Transport: &http.Transport{}}}
	_, err := c.Call(t.Context(), turn(userText))
	var ae *agent.Error
	if !errors.As(err, &ae) || ae.Kind != agent.KindPermanent || hits.Load() != 0 {
		t.Fatalf("err = %v, hits %d; want permanent, no request served", err, hits.Load())
	}
	c.HTTP.CloseIdleConnections()
}

func TestCallRefusesBadConfigWithoutSending(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	c, srv := setup(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	for _, tc := range []struct {
		name string
		edit func(*agent.Client, *agent.TurnRequest)
		is   error
	}{
		{"NoURL", func(c *agent.Client, _ *agent.TurnRequest) { c.URL = "" }, agent.ErrConfig},
		{"FTP", func(c *agent.Client, _ *agent.TurnRequest) { c.URL = "ftp://example.com/s3cr3t" }, agent.ErrConfig},
		{"NoHost", func(c *agent.Client, _ *agent.TurnRequest) { c.URL = "http:///s3cr3t" }, agent.ErrConfig},
		{"Unparsable", func(c *agent.Client, _ *agent.TurnRequest) { c.URL = "http://exa mple.com/?token=s3cr3t" }, agent.ErrConfig},
		{"NoSecret", func(c *agent.Client, _ *agent.TurnRequest) { c.Secret = standardwebhooks.Secret{} }, agent.ErrConfig},
		{"NegativeTimeout", func(c *agent.Client, _ *agent.TurnRequest) { c.Timeout = -1 }, agent.ErrConfig},
		{"NoTurnID", func(_ *agent.Client, r *agent.TurnRequest) { r.TurnID = "" }, agent.ErrInvalidRequest},
		{"UnencodableData", func(_ *agent.Client, r *agent.TurnRequest) { r.Event.Data = map[string]any{"f": func() {}} }, agent.ErrInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := *c
			req := turn(userText)
			tc.edit(&cc, &req)
			_, err := cc.Call(t.Context(), req)
			var ae *agent.Error
			if !errors.As(err, &ae) || ae.Kind != agent.KindPermanent || !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want permanent %v", err, tc.is)
			}
			assertClean(t, err)
		})
	}
	if hits.Load() != 0 {
		t.Fatalf("a misconfigured call reached the agent %d times", hits.Load())
	}
	_ = srv
}

func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	err := (&agent.Client{URL: "gopher://x", Timeout: -1, MaxReplyBytes: -1}).Validate()
	if !errors.Is(err, agent.ErrConfig) {
		t.Fatalf("Validate = %v", err)
	}
	for _, want := range []string{"scheme", "secret", "timeout", "max reply bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %q, missing the %s problem", err, want)
		}
	}
	if err := (&agent.Client{URL: agent.BuiltinEcho, Secret: mustSecret(t, "x")}).Validate(); err != nil {
		t.Errorf("builtin:echo: %v", err)
	}
}

func TestErrorString(t *testing.T) {
	t.Parallel()
	e := &agent.Error{Kind: agent.KindTransient, Status: 503, RetryAfter: 30 * time.Second, Err: agent.ErrStatus}
	if got, want := e.Error(), "agent call failed (transient, HTTP 503, retry after 30s): agent answered with an error status"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}
