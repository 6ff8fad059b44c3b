package platform_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

const secretPath = "/bot123456:SECRET-token/sendMessage"

func post(t *testing.T, ctx context.Context, url string) (*platform.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url+secretPath, strings.NewReader(`{"text":"hello"}`))
	if err != nil {
		t.Fatal(err)
	}
	return platform.Do(ctx, &http.Client{}, req)
}

func classOf(t *testing.T, err error) *message.SendError {
	t.Helper()
	var se *message.SendError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *message.SendError", err, err)
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("error leaks the URL path: %v", err)
	}
	return se
}

// hijackAfterRead reads the whole request, then closes the connection
// without answering: the platform may have acted on the request.
func hijackAfterRead(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

func TestDo(t *testing.T) {
	t.Parallel()

	t.Run("AnswerIsReturnedWhateverItsStatus", func(t *testing.T) {
		t.Parallel()
		for _, status := range []int{200, 400, 429, 502} {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "7")
				w.WriteHeader(status)
				_, _ = io.WriteString(w, `{"ok":false}`)
			}))
			resp, err := post(t, context.Background(), srv.URL)
			srv.Close()
			if err != nil {
				t.Fatalf("status %d: %v", status, err)
			}
			if resp.Status != status || string(resp.Body) != `{"ok":false}` || resp.Header.Get("Retry-After") != "7" {
				t.Fatalf("status %d: got %+v", status, resp)
			}
		}
	})

	t.Run("ConnectionClosedAfterRequestIsUnknown", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(hijackAfterRead))
		defer srv.Close()
		_, err := post(t, context.Background(), srv.URL)
		if se := classOf(t, err); se.Class != message.FailUnknown {
			t.Fatalf("class = %s, want unknown (%v)", se.Class, err)
		}
	})

	t.Run("TimeoutAfterRequestIsUnknown", func(t *testing.T) {
		t.Parallel()
		// The server reads the whole request, then the caller gives up
		// waiting (a Lambda deadline): the platform may have acted.
		ctx, cancel := context.WithCancel(context.Background())
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			cancel()
			<-release
		}))
		defer srv.Close()
		defer close(release)
		_, err := post(t, ctx, srv.URL)
		if se := classOf(t, err); se.Class != message.FailUnknown {
			t.Fatalf("class = %s, want unknown (%v)", se.Class, err)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cause not kept: %v", err)
		}
	})

	t.Run("ClosedPortIsTransient", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		_, err = post(t, context.Background(), "http://"+addr)
		se := classOf(t, err)
		if se.Class != message.FailTransient || se.Status != 0 {
			t.Fatalf("got %+v, want transient", se)
		}
		if !strings.Contains(err.Error(), "http://"+addr) {
			t.Fatalf("error should name the host: %v", err)
		}
	})

	t.Run("CancelledBeforeSendIsCancelled", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := post(t, ctx, srv.URL)
		if se := classOf(t, err); se.Class != message.FailCancelled {
			t.Fatalf("class = %s, want cancelled (%v)", se.Class, err)
		}
		if calls.Load() != 0 {
			t.Fatal("the request reached the server")
		}
	})

	t.Run("SuccessWithCutBodyIsUnknown", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			writeCut(buf, "200 OK")
			conn.Close()
		}))
		defer srv.Close()
		_, err := post(t, context.Background(), srv.URL)
		se := classOf(t, err)
		if se.Class != message.FailUnknown || se.Status != 200 {
			t.Fatalf("got %+v, want unknown with status 200", se)
		}
	})

	t.Run("ErrorWithCutBodyIsAnAnswer", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			writeCut(buf, "502 Bad Gateway")
			conn.Close()
		}))
		defer srv.Close()
		resp, err := post(t, context.Background(), srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != 502 || string(resp.Body) != `{"ok":` {
			t.Fatalf("got %+v", resp)
		}
	})

	t.Run("NilClientUsesDefault", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer srv.Close()
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		resp, err := platform.Do(context.Background(), nil, req)
		if err != nil || resp.Status != 200 {
			t.Fatalf("got %+v, %v", resp, err)
		}
	})
}

// writeCut writes a response that promises more body than it sends.
func writeCut(buf *bufio.ReadWriter, status string) {
	_, _ = buf.WriteString("HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"ok\":")
	_ = buf.Flush()
}

func TestStatusClass(t *testing.T) {
	t.Parallel()
	cases := map[int]message.FailureClass{
		400: message.FailInvalidPayload,
		401: message.FailAuth,
		403: message.FailPermission,
		404: message.FailNotFound,
		408: message.FailTransient,
		409: message.FailConflict,
		410: message.FailNotFound,
		413: message.FailInvalidPayload,
		429: message.FailRateLimit,
		500: message.FailTransient,
		503: message.FailTransient,
		302: message.FailUnknown,
	}
	for status, want := range cases {
		if got := platform.StatusClass(status); got != want {
			t.Errorf("StatusClass(%d) = %s, want %s", status, got, want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"30":                            30 * time.Second,
		" 2 ":                           2 * time.Second,
		"0":                             0,
		"-5":                            0,
		"soon":                          0,
		"99999999999999":                24 * time.Hour,
		"Sun, 29 Nov 2026 12:01:00 GMT": time.Minute,
		"Sun, 29 Nov 2026 11:00:00 GMT": 0,
	}
	for v, want := range cases {
		h := http.Header{}
		if v != "" {
			h.Set("Retry-After", v)
		}
		if got := platform.RetryAfter(h, now); got != want {
			t.Errorf("RetryAfter(%q) = %s, want %s", v, got, want)
		}
	}
	if got := platform.Seconds(35); got != 35*time.Second {
		t.Errorf("Seconds(35) = %s", got)
	}
	if got := platform.Seconds(-1); got != 0 {
		t.Errorf("Seconds(-1) = %s", got)
	}
}

func TestReason(t *testing.T) {
	t.Parallel()
	if got := platform.Reason("Bad Request: chat not found"); got != "Bad Request: chat not found" {
		t.Errorf("short reason changed: %q", got)
	}
	if got := platform.Reason("a\nb\x80"); got != "a b?" {
		t.Errorf("got %q", got)
	}
	long := strings.Repeat("é", 300)
	got := platform.Reason(long)
	if len(got) > 200+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("long reason cut badly: %d bytes", len(got))
	}
}
