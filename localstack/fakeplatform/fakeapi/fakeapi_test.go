package fakeapi_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/message"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// echo is the smallest fake: it records every POST's body as the text of
// a message into the chat named by the path, through Handle.
type echo struct {
	rec *fakeapi.Recorder
	ids fakeapi.IDs
}

func (e echo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	chat := strings.TrimPrefix(r.URL.Path, "/")
	body, _ := io.ReadAll(r.Body)
	e.rec.Handle(w, fakeapi.Send{
		Platform: message.Telegram,
		Chat:     chat,
		IDs:      e.ids,
		Fail: func(w http.ResponseWriter, f fakeapi.Fault) {
			http.Error(w, "fault "+f.Error, max(f.Status, 400))
		},
		Accept: func(w http.ResponseWriter) (fakeapi.Delivery, bool) {
			if len(body) == 0 {
				http.Error(w, "empty", http.StatusBadRequest)
				return fakeapi.Delivery{}, false
			}
			return fakeapi.Delivery{Chat: chat, Text: string(body)}, true
		},
		Answer: func(w http.ResponseWriter, d fakeapi.Delivery) { _, _ = io.WriteString(w, d.MessageID) },
	})
}

func newEcho(t *testing.T, opt fakeapi.Options) (*fakeapi.Recorder, *httptest.Server) {
	t.Helper()
	rec := fakeapi.New(opt)
	srv := httptest.NewServer(echo{rec: rec, ids: fakeapi.Sequence()})
	t.Cleanup(srv.Close)
	return rec, srv
}

func post(t *testing.T, srv *httptest.Server, chat, text string) (int, string, error) {
	t.Helper()
	resp, err := srv.Client().Post(srv.URL+"/"+chat, "text/plain", strings.NewReader(text))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}

// TestHandle: the order every fake shares. A fault answers before the
// call is validated and records nothing; a dropped answer comes after the
// message was recorded.
func TestHandle(t *testing.T) {
	t.Parallel()
	rec, srv := newEcho(t, fakeapi.Options{Now: func() time.Time { return t0 }})

	if st, body, err := post(t, srv, "42", "hi"); err != nil || st != 200 || body != "1" {
		t.Fatalf("plain send: %d %q %v", st, body, err)
	}
	rec.Inject(fakeapi.Fault{Status: 503, Error: "down"})
	if st, body, _ := post(t, srv, "42", ""); st != 503 || body != "fault down" {
		t.Fatalf("a fault answers before validation: %d %q", st, body)
	}
	if st, _, _ := post(t, srv, "42", ""); st != 400 {
		t.Fatalf("validation: %d", st)
	}
	rec.Inject(fakeapi.Fault{DropResponseAfterCommit: true})
	if _, _, err := post(t, srv, "42", "maybe"); err == nil {
		t.Fatal("the answer was not dropped")
	}
	got := rec.Delivered()
	if len(got) != 2 || got[1].Text != "maybe" || got[1].MessageID != "2" || got[1].Platform != message.Telegram || !got[1].At.Equal(t0) {
		t.Fatalf("Delivered = %+v", got)
	}
	if rec.Calls() != 4 {
		t.Fatalf("Calls = %d, want every attempt", rec.Calls())
	}
}

func TestFaultQueue(t *testing.T) {
	t.Parallel()
	rec, srv := newEcho(t, fakeapi.Options{})
	rec.Inject(fakeapi.Fault{Platform: message.Slack, Status: 500})         // another platform's
	rec.Inject(fakeapi.Fault{Chat: "43", Status: 403, Error: "43"})         // another chat's
	rec.Inject(fakeapi.Fault{Status: 429, Error: "twice", Times: 2})        // any chat, twice
	rec.Inject(fakeapi.Fault{Platform: message.Telegram, Error: "then me"}) // queued behind
	want := []string{"fault twice", "fault twice", "fault then me", "1"}
	for i, w := range want {
		if _, body, _ := post(t, srv, "42", "x"); body != w {
			t.Fatalf("send %d into 42: %q, want %q", i, body, w)
		}
	}
	if _, body, _ := post(t, srv, "43", "x"); body != "fault 43" {
		t.Fatalf("into 43: %q", body)
	}
	if f := (fakeapi.Fault{RetryAfter: 2500 * time.Millisecond}); f.RetryAfterSeconds() != 3 {
		t.Fatalf("RetryAfterSeconds(2.5s) = %d, want 3 (rounded up)", f.RetryAfterSeconds())
	}
	if f := (fakeapi.Fault{RetryAfter: 2 * time.Second}); f.RetryAfterSeconds() != 2 {
		t.Fatalf("RetryAfterSeconds(2s) = %d", f.RetryAfterSeconds())
	}
}

func TestDelay(t *testing.T) {
	t.Parallel()
	rec, srv := newEcho(t, fakeapi.Options{})
	rec.Inject(fakeapi.Fault{Delay: 150 * time.Millisecond})
	start := time.Now()
	if st, _, err := post(t, srv, "42", "slow"); err != nil || st != 200 {
		t.Fatalf("%d %v", st, err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("answered after %s", d)
	}
}

func TestIDs(t *testing.T) {
	t.Parallel()
	seq := fakeapi.Sequence()
	var got []string
	for _, chat := range []string{"42", "42", "-100", "42"} {
		got = append(got, seq.Next(chat, t0))
	}
	if strings.Join(got, " ") != "1 2 1 3" {
		t.Fatalf("Sequence: %v", got)
	}
	ts := fakeapi.Timestamps()
	got = nil
	for _, c := range []struct {
		chat string
		at   time.Time
	}{{"C1", t0}, {"C1", t0}, {"D1", t0}, {"C1", t0.Add(time.Second)}, {"C1", t0}} {
		got = append(got, ts.Next(c.chat, c.at))
	}
	want := "1795953600.000000 1795953600.000001 1795953600.000000 1795953601.000000 1795953601.000001"
	if strings.Join(got, " ") != want {
		t.Fatalf("Timestamps:\n got %v\nwant %v", got, want)
	}
}

func TestBubbles(t *testing.T) {
	t.Parallel()
	now := t0
	var out bytes.Buffer
	rec, srv := newEcho(t, fakeapi.Options{Now: func() time.Time { return now }, Out: &out})
	_, _, _ = post(t, srv, "42", "on it")
	now = now.Add(1200 * time.Millisecond)
	_, _, _ = post(t, srv, "42", "two\nlines")
	const want = `[+0.00s] telegram chat=42 | on it
[+1.20s] telegram chat=42 | two
                          | lines
`
	if out.String() != want {
		t.Fatalf("Out\n got %q\nwant %q", out.String(), want)
	}
	rec.Act(fakeapi.Action{Platform: message.Telegram, Chat: "42", Action: "typing"})
	if a := rec.Actions(); len(a) != 1 || !a[0].At.Equal(now) || out.String() != want {
		t.Fatalf("an action is recorded, not printed: %+v", a)
	}
}

func TestWaitFor(t *testing.T) {
	t.Parallel()
	rec, srv := newEcho(t, fakeapi.Options{})
	done := make(chan []fakeapi.Delivery)
	go func() {
		got, _ := rec.WaitFor(context.Background(), 2)
		done <- got
	}()
	_, _, _ = post(t, srv, "42", "a")
	_, _, _ = post(t, srv, "42", "b")
	if got := <-done; len(got) != 2 {
		t.Fatalf("WaitFor = %+v", got)
	}
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if got, err := rec.WaitFor(short, 3); !errors.Is(err, context.DeadlineExceeded) || len(got) != 2 {
		t.Fatalf("WaitFor past the end: %d, %v", len(got), err)
	}
}

func TestArgs(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		ctype, body string
		ok          bool
		text        string
	}{
		"JSON":         {"application/json", `{"text":"hi","n":42}`, true, "hi"},
		"JSONCharset":  {"application/json; charset=utf-8", `{"text":"hi"}`, true, "hi"},
		"Form":         {"application/x-www-form-urlencoded", "text=hi&n=42", true, "hi"},
		"JSONNull":     {"application/json", `null`, false, ""},
		"JSONArray":    {"application/json", `[1]`, false, ""},
		"FormBadQuery": {"application/x-www-form-urlencoded", "text=%zz", false, ""},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
		r.Header.Set("Content-Type", tc.ctype)
		args, ok := fakeapi.Args(r)
		if ok != tc.ok || fakeapi.Str(args, "text") != tc.text {
			t.Errorf("%s: Args = %v, %v", name, args, ok)
		}
		if ok && fakeapi.Str(args, "n") != "42" && name != "JSONCharset" {
			t.Errorf("%s: n = %q, want a number read by its digits", name, fakeapi.Str(args, "n"))
		}
	}
}
