package delivery_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/shared/delivery"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/line"
)

const lineChat = "Uada00000000000000000000000000042"

var lineThread = message.Thread{Platform: message.LINE, Account: "U0bot000000000000000000000000042", Chat: lineChat}

// lineSetup is a setup whose LINE channel is the real client against the
// fake Messaging API, on the processor's clock.
func lineSetup(t *testing.T, cfg delivery.Config) (*setup, *fakeline.API, *fakeapi.Recorder) {
	t.Helper()
	s := newSetup(t, cfg)
	rec := fakeapi.New(fakeapi.Options{Now: s.clock.Now})
	api := fakeline.New(fakeline.Options{Token: "line-token", Recorder: rec})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	s.p.Channels[message.LINE] = delivery.Channel{
		Sender:       &line.Client{Token: "line-token", BaseURL: srv.URL, HTTP: srv.Client(), Now: s.clock.Now},
		Capabilities: line.Adapter.Capabilities(),
	}
	return s, api, rec
}

// lineReply persists an intent of n bubbles answering an event whose reply
// token is token, fresh for a minute.
func (s *setup) lineReply(n int, token string) intent.Intent {
	s.t.Helper()
	s.seq++
	in := intent.Intent{ID: intent.IDFor(fmt.Sprint("evt#", s.t.Name(), s.seq)), Origin: "evt#1", Thread: lineThread, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour),
		ReplyContext: &message.ReplyContext{Token: token, Until: t0.Add(time.Minute)}}
	for i := range n {
		in.Units = append(in.Units, pending(fmt.Sprintf("b%d#1", i+1)))
	}
	if _, created, err := s.store.CreateIntent(s.t.Context(), in); err != nil || !created {
		s.t.Fatalf("create intent: %v (created %v)", err, created)
	}
	return in
}

// calls is what the fake was asked, in order: "reply:<bubbles>" or "push".
func calls(rec *fakeapi.Recorder) string {
	var out []string
	for _, d := range rec.Delivered() {
		if _, ok := d.Args["replyToken"]; ok {
			out = append(out, fmt.Sprint("reply:", strings.Count(d.Text, "\n\n")+1))
		} else {
			out = append(out, "push")
		}
	}
	return strings.Join(out, " ")
}

// allSent fails unless every unit of in is sent with a message id of its
// own.
func (s *setup) allSent(in intent.Intent) {
	s.t.Helper()
	got := s.get(in)
	seen := map[string]bool{}
	for _, u := range got.Units {
		if u.State != message.UnitSent || len(u.Receipt) != 1 || seen[u.Receipt[0]] {
			s.t.Fatalf("units %s: want each sent with its own message id (%+v)", states(got), u)
		}
		seen[u.Receipt[0]] = true
	}
}

// TestLINERepliesWithTheFirstFiveBubbles: of a 7-bubble reply, the first 5
// go in one free reply call, unpaced, each with its own receipt; the other
// 2 are pushed, paced. With PARLEY_REPLY_BUBBLES=1 only the first replies.
func TestLINERepliesWithTheFirstFiveBubbles(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		bubbles int
		want    string
		sleeps  int
	}{
		{0, "reply:5 push push", 2},
		{1, "reply:1 push push push push push push", 6},
		{3, "reply:3 push push push push", 4},
	} {
		t.Run(fmt.Sprint("ReplyBubbles", c.bubbles), func(t *testing.T) {
			t.Parallel()
			s, api, rec := lineSetup(t, delivery.Config{BubbleDelay: time.Second, ReplyBubbles: c.bubbles})
			in := s.lineReply(7, api.IssueReplyToken(lineChat))
			if err := s.handle(in, "b7#1"); err != nil {
				t.Fatal(err)
			}
			if got := calls(rec); got != c.want {
				t.Fatalf("calls %q, want %q", got, c.want)
			}
			if len(s.clock.sleeps) != c.sleeps {
				t.Fatalf("paced %d times (%v), want %d", len(s.clock.sleeps), s.clock.sleeps, c.sleeps)
			}
			s.allSent(in)
			// A redelivery of any record sends nothing again.
			if err := s.handle(in, "b3#1"); err != nil || calls(rec) != c.want {
				t.Fatalf("redelivery: %v, calls %q", err, calls(rec))
			}
		})
	}
}

// TestLINEReplyRefusedOrLost: a token LINE refuses (fresh by its time, but
// never issued or spent) sends every bubble on its own, in order, once; a
// reply whose answer was lost is sent once (the client proves it by the
// spent token).
func TestLINEReplyRefusedOrLost(t *testing.T) {
	t.Parallel()
	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		s, _, rec := lineSetup(t, delivery.Config{BubbleDelay: time.Second})
		in := s.lineReply(3, "never-issued")
		err := s.handle(in, "b3#1")
		if _, ok := retryAfter(err); !ok {
			t.Fatalf("refused reply: %v, want the record back", err)
		}
		if got := states(s.get(in)); got != "b1#1:pending@1 b2#1:pending@1 b3#1:pending@1" {
			t.Fatalf("after a refused reply: %s", got)
		}
		if err := s.handle(in, "b3#1"); err != nil {
			t.Fatal(err)
		}
		if got := calls(rec); got != "push push push" {
			t.Fatalf("calls %q: want each bubble pushed once", got)
		}
		s.allSent(in)
		got := s.get(in)
		if got.Units[0].SentAt.After(got.Units[1].SentAt) || got.Units[1].SentAt.After(got.Units[2].SentAt) {
			t.Fatalf("out of order: %v %v %v", got.Units[0].SentAt, got.Units[1].SentAt, got.Units[2].SentAt)
		}
	})
	t.Run("LostAnswer", func(t *testing.T) {
		t.Parallel()
		s, api, rec := lineSetup(t, delivery.Config{BubbleDelay: time.Second})
		rec.Inject(fakeapi.Fault{DropResponseAfterCommit: true})
		in := s.lineReply(2, api.IssueReplyToken(lineChat))
		if err := s.handle(in, "b2#1"); err != nil {
			t.Fatal(err)
		}
		if got := calls(rec); got != "reply:2" {
			t.Fatalf("calls %q: want the reply once", got)
		}
		if got := states(s.get(in)); got != "b1#1:sent@1 b2#1:sent@1" {
			t.Fatalf("after a lost answer: %s", got)
		}
	})
}
