package functionurl_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/parleyhq/parley/shared/functionurl"
)

// seen is what a handler received.
type seen struct {
	called  bool
	method  string
	host    string
	path    string
	query   string
	uri     string
	remote  string
	header  http.Header
	cookies []*http.Cookie
	body    []byte
	ctxVal  any
}

type ctxKey struct{}

// recorder is an http.Handler that records its request and answers with
// respond.
func recorder(s *seen, respond func(w http.ResponseWriter)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*s = seen{
			called: true, method: r.Method, host: r.Host, path: r.URL.Path, query: r.URL.RawQuery, uri: r.RequestURI,
			remote: r.RemoteAddr, header: r.Header.Clone(), cookies: r.Cookies(), body: b, ctxVal: r.Context().Value(ctxKey{}),
		}
		if respond != nil {
			respond(w)
		}
	})
}

// binary is not valid UTF-8.
var binary = []byte{0xff, 0x00, 0xfe, 'a', 0xc3, 0x28, '\n'}

func TestHandlerRequest(t *testing.T) {
	t.Parallel()

	t.Run("TextBodyArrivesAsIs", func(t *testing.T) {
		t.Parallel()
		var s seen
		body := `{"update_id":1,"text":"héllo\r\n"}`
		_, err := functionurl.Handler(recorder(&s, nil))(t.Context(), events.LambdaFunctionURLRequest{
			RawPath: "/telegram", Body: body,
			RequestContext: events.LambdaFunctionURLRequestContext{HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST"}},
		})
		if err != nil || string(s.body) != body || s.method != "POST" {
			t.Fatalf("err %v, method %q, body %q; want POST and the body as sent", err, s.method, s.body)
		}
	})

	t.Run("Base64BodyIsDecoded", func(t *testing.T) {
		t.Parallel()
		var s seen
		_, err := functionurl.Handler(recorder(&s, nil))(t.Context(), events.LambdaFunctionURLRequest{
			Body: base64.StdEncoding.EncodeToString(binary), IsBase64Encoded: true,
		})
		if err != nil || !bytes.Equal(s.body, binary) {
			t.Fatalf("err %v, body %x; want %x", err, s.body, binary)
		}
	})

	t.Run("BadBase64IsRefusedBeforeTheHandler", func(t *testing.T) {
		t.Parallel()
		var s seen
		resp, err := functionurl.Handler(recorder(&s, nil))(t.Context(), events.LambdaFunctionURLRequest{Body: "not base64!", IsBase64Encoded: true})
		if err != nil {
			t.Fatal(err)
		}
		if s.called || resp.StatusCode != http.StatusBadRequest || !strings.Contains(resp.Body, "base64") {
			t.Fatalf("handler called %v, response %+v; want 400 without calling the handler", s.called, resp)
		}
		if strings.Contains(resp.Body, "not base64!") {
			t.Fatalf("the 400 echoes the body: %q", resp.Body)
		}
	})

	t.Run("HeadersCookiesQueryAndContext", func(t *testing.T) {
		t.Parallel()
		var s seen
		ctx := context.WithValue(t.Context(), ctxKey{}, "invocation")
		_, err := functionurl.Handler(recorder(&s, nil))(ctx, events.LambdaFunctionURLRequest{
			RawPath:        "/slack/events",
			RawQueryString: "target=telegram%3A1%3A2&x=a+b&x=c",
			Headers: map[string]string{
				"host":                      "abc.lambda-url.us-east-1.on.aws",
				"x-slack-signature":         "v0=deadbeef",
				"x-slack-request-timestamp": "1764432000",
				"accept":                    "text/plain,application/json", // a repeated header, joined
			},
			Cookies: []string{"session=1", "theme=dark"},
			RequestContext: events.LambdaFunctionURLRequestContext{HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{
				Method: "POST", SourceIP: "203.0.113.9",
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		checks := []struct{ name, got, want string }{
			{"host", s.host, "abc.lambda-url.us-east-1.on.aws"},
			{"path", s.path, "/slack/events"},
			{"raw query", s.query, "target=telegram%3A1%3A2&x=a+b&x=c"},
			{"request URI", s.uri, "/slack/events?target=telegram%3A1%3A2&x=a+b&x=c"},
			{"remote addr", s.remote, "203.0.113.9"},
			{"X-Slack-Signature", s.header.Get("X-Slack-Signature"), "v0=deadbeef"},
			{"X-Slack-Request-Timestamp", s.header.Get("X-Slack-Request-Timestamp"), "1764432000"},
			{"Accept", strings.Join(s.header.Values("Accept"), "|"), "text/plain,application/json"},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
			}
		}
		var names []string
		for _, c := range s.cookies {
			names = append(names, c.Name+"="+c.Value)
		}
		if !slices.Equal(names, []string{"session=1", "theme=dark"}) {
			t.Errorf("cookies = %v, want [session=1 theme=dark]", names)
		}
		if s.ctxVal != "invocation" {
			t.Errorf("handler context lost the invocation's values")
		}
	})

	t.Run("EmptyEventIsAGetOfTheRoot", func(t *testing.T) {
		t.Parallel()
		var s seen
		if _, err := functionurl.Handler(recorder(&s, nil))(t.Context(), events.LambdaFunctionURLRequest{}); err != nil {
			t.Fatal(err)
		}
		if s.method != http.MethodGet || s.path != "/" || len(s.body) != 0 {
			t.Fatalf("method %q, path %q, body %q; want GET / with no body", s.method, s.path, s.body)
		}
	})
}

func TestHandlerResponse(t *testing.T) {
	t.Parallel()

	call := func(t *testing.T, respond func(w http.ResponseWriter)) events.LambdaFunctionURLResponse {
		t.Helper()
		var s seen
		resp, err := functionurl.Handler(recorder(&s, respond))(t.Context(), events.LambdaFunctionURLRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	t.Run("TextBodyStatusHeadersAndCookies", func(t *testing.T) {
		t.Parallel()
		resp := call(t, func(w http.ResponseWriter) {
			w.Header().Set("Parley-Ack", "durable")
			w.Header().Add("Vary", "Accept")
			w.Header().Add("Vary", "Origin")
			http.SetCookie(w, &http.Cookie{Name: "a", Value: "1"})
			http.SetCookie(w, &http.Cookie{Name: "b", Value: "2"})
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"ok":true,"text":"ça va"}`))
		})
		if resp.StatusCode != http.StatusAccepted || resp.IsBase64Encoded || resp.Body != `{"ok":true,"text":"ça va"}` {
			t.Fatalf("response %+v", resp)
		}
		if resp.Headers["Parley-Ack"] != "durable" || resp.Headers["Vary"] != "Accept,Origin" {
			t.Errorf("headers = %v, want Parley-Ack and Vary joined with a comma", resp.Headers)
		}
		if _, ok := resp.Headers["Set-Cookie"]; ok || !slices.Equal(resp.Cookies, []string{"a=1", "b=2"}) {
			t.Errorf("cookies = %v, headers %v; want Set-Cookie moved to Cookies", resp.Cookies, resp.Headers)
		}
	})

	t.Run("NonUTF8BodyIsBase64", func(t *testing.T) {
		t.Parallel()
		resp := call(t, func(w http.ResponseWriter) { _, _ = w.Write(binary) })
		got, err := base64.StdEncoding.DecodeString(resp.Body)
		if !resp.IsBase64Encoded || err != nil || !bytes.Equal(got, binary) {
			t.Fatalf("response %+v; want the bytes base64-encoded", resp)
		}
	})

	// As net/http's server does: the header is sent with the status, so
	// later changes are lost, a second status is ignored, and an untyped
	// body gets a sniffed Content-Type.
	t.Run("HeaderIsFixedByTheStatus", func(t *testing.T) {
		t.Parallel()
		resp := call(t, func(w http.ResponseWriter) {
			w.Header().Set("Before", "kept")
			w.WriteHeader(http.StatusTeapot)
			w.Header().Set("After", "lost")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte("a"))
			_, _ = w.Write([]byte("b"))
		})
		if resp.StatusCode != http.StatusTeapot || resp.Body != "ab" || resp.Headers["Before"] != "kept" {
			t.Fatalf("response %+v", resp)
		}
		if _, ok := resp.Headers["After"]; ok {
			t.Errorf("a header set after the status was sent: %v", resp.Headers)
		}
	})

	t.Run("UntypedBodyIsSniffed", func(t *testing.T) {
		t.Parallel()
		resp := call(t, func(w http.ResponseWriter) { _, _ = w.Write([]byte("<html><body>hi</body></html>")) })
		if resp.StatusCode != http.StatusOK || resp.Headers["Content-Type"] != "text/html; charset=utf-8" {
			t.Fatalf("response %+v, want 200 with a sniffed Content-Type", resp)
		}
		typed := call(t, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("<html>"))
		})
		if typed.Headers["Content-Type"] != "application/json" {
			t.Fatalf("response %+v, want the handler's Content-Type", typed)
		}
	})

	t.Run("NothingWrittenIs200", func(t *testing.T) {
		t.Parallel()
		resp := call(t, nil)
		if resp.StatusCode != http.StatusOK || resp.Body != "" || resp.IsBase64Encoded {
			t.Fatalf("response %+v, want an empty 200", resp)
		}
	})
}

// TestRoundTrip serves a handler the way the local runner does: a real HTTP
// request becomes the event a Function URL would deliver (ToEvent), Handler
// serves it, and the response goes back over HTTP (WriteResponse).
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	const maxBody = 64
	var s seen
	inner := functionurl.Handler(recorder(&s, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/octet-stream")
		http.SetCookie(w, &http.Cookie{Name: "a", Value: "1"})
		http.SetCookie(w, &http.Cookie{Name: "b", Value: "2"})
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(s.body) // echo
	}))
	// The server's goroutine hands over what it saw through a channel: the
	// race detector does not see synchronization through a socket.
	type served struct {
		ev   events.LambdaFunctionURLRequest
		seen seen
	}
	handedOver := make(chan served, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s = seen{}
		ev, err := functionurl.ToEvent(r, maxBody)
		if err != nil {
			handedOver <- served{seen: s}
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		resp, err := inner(r.Context(), ev)
		if err != nil {
			t.Errorf("handler: %v", err)
		}
		handedOver <- served{ev, s}
		if err := functionurl.WriteResponse(w, resp); err != nil {
			t.Errorf("write response: %v", err)
		}
	}))
	defer srv.Close()

	post := func(t *testing.T, body []byte) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/hook/a%20b?x=1&y=%2F", bytes.NewReader(body))
		req.Header.Set("X-Hub-Signature-256", "sha256=abc")
		req.Header.Add("X-Multi", "one")
		req.Header.Add("X-Multi", "two")
		req.AddCookie(&http.Cookie{Name: "session", Value: "s1"})
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		return resp, got
	}

	for name, body := range map[string][]byte{"Text": []byte(`{"zen":"ok"}`), "Binary": binary, "Empty": nil, "AtTheLimit": bytes.Repeat([]byte{0xff}, maxBody)} {
		t.Run(name, func(t *testing.T) {
			resp, got := post(t, body)
			h := <-handedOver
			lastEvent, s := h.ev, h.seen
			if resp.StatusCode != http.StatusCreated || !bytes.Equal(got, body) {
				t.Fatalf("status %d, body %x; want 201 echoing %x", resp.StatusCode, got, body)
			}
			if !bytes.Equal(s.body, body) {
				t.Errorf("handler got body %x, want %x", s.body, body)
			}
			if lastEvent.IsBase64Encoded == (name == "Text" || name == "Empty") {
				t.Errorf("event IsBase64Encoded = %v for a %s body", lastEvent.IsBase64Encoded, name)
			}
			if lastEvent.Headers["x-hub-signature-256"] != "sha256=abc" || lastEvent.Headers["x-multi"] != "one,two" {
				t.Errorf("event headers = %v, want lower-cased names and joined values", lastEvent.Headers)
			}
			if s.path != "/hook/a b" || s.query != "x=1&y=%2F" || s.header.Get("X-Multi") != "one,two" {
				t.Errorf("handler saw path %q, query %q, X-Multi %q", s.path, s.query, s.header.Get("X-Multi"))
			}
			if len(s.cookies) != 1 || s.cookies[0].Value != "s1" {
				t.Errorf("handler saw cookies %v", s.cookies)
			}
			if c := resp.Cookies(); len(c) != 2 || c[0].Name != "a" || c[1].Name != "b" {
				t.Errorf("client got cookies %v, want a and b", c)
			}
			if resp.Header.Get("Content-Type") != "application/octet-stream" {
				t.Errorf("client got Content-Type %q", resp.Header.Get("Content-Type"))
			}
		})
	}

	t.Run("OverTheLimit", func(t *testing.T) {
		resp, got := post(t, bytes.Repeat([]byte("a"), maxBody+1))
		<-handedOver
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(got), "body over 64 bytes") {
			t.Fatalf("status %d, body %q; want ToEvent's over-the-limit error", resp.StatusCode, got)
		}
	})
}

func TestWriteResponse(t *testing.T) {
	t.Parallel()

	t.Run("ZeroStatusIs200", func(t *testing.T) {
		t.Parallel()
		w := httptest.NewRecorder()
		if err := functionurl.WriteResponse(w, events.LambdaFunctionURLResponse{Body: "hi"}); err != nil {
			t.Fatal(err)
		}
		if w.Code != http.StatusOK || w.Body.String() != "hi" {
			t.Fatalf("status %d, body %q", w.Code, w.Body)
		}
	})

	t.Run("BadBase64IsAnError", func(t *testing.T) {
		t.Parallel()
		w := httptest.NewRecorder()
		err := functionurl.WriteResponse(w, events.LambdaFunctionURLResponse{StatusCode: 200, Body: "%%%", IsBase64Encoded: true})
		if err == nil {
			t.Fatal("WriteResponse accepted a body that is not base64")
		}
	})
}
