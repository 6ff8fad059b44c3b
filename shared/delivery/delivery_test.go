package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/delivery"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// t0 is millisecond-aligned: the store keeps times in milliseconds.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is the processor's Now and Sleep: sleeping records the request and
// moves time, never waits.
type clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

// sender is a platform in pure Go: it records what it is asked to send and
// answers with respond (nil: success with a receipt).
type sender struct {
	mu      sync.Mutex
	caps    message.Capabilities
	sent    []message.Outgoing
	respond func(n int, m message.Outgoing) error
}

func (s *sender) Send(_ context.Context, m message.Outgoing) (message.Receipt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, m)
	if s.respond != nil {
		if err := s.respond(len(s.sent), m); err != nil {
			return message.Receipt{}, err
		}
	}
	return message.Receipt{MessageIDs: []string{fmt.Sprint("pm-", len(s.sent))}}, nil
}

func (s *sender) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.sent {
		out = append(out, m.Content.Text)
	}
	return out
}

var thread = message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"}

// setup is one test's processor on its own table, with a Telegram sender.
type setup struct {
	t      *testing.T
	env    *emulatortest.Env
	store  *dynamostore.Store
	clock  *clock
	sender *sender
	p      *delivery.Processor
	seq    int
}

func newSetup(t *testing.T, cfg delivery.Config) *setup {
	t.Helper()
	env := emulatortest.New(t)
	s := &setup{t: t, env: env, store: dynamostore.New(env.DynamoDB, env.Resources.Table), clock: &clock{now: t0}, sender: &sender{caps: message.Capabilities{TextLimit: 4096}}}
	s.p = &delivery.Processor{
		Intents:  s.store,
		Channels: map[message.Platform]delivery.Channel{message.Telegram: {Sender: s.sender, Capabilities: s.sender.caps}},
		Config:   cfg,
		Now:      s.clock.Now,
		Sleep:    s.clock.Sleep,
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	return s
}

// idempotent says whether the test platform deduplicates resent units.
func (s *setup) idempotent(yes bool) {
	ch := s.p.Channels[message.Telegram]
	ch.Capabilities.Idempotent = yes
	s.p.Channels[message.Telegram] = ch
}

// create persists an intent of units on th.
func (s *setup) create(th message.Thread, units ...intent.Unit) intent.Intent {
	s.t.Helper()
	s.seq++
	in := intent.Intent{ID: intent.IDFor(fmt.Sprint("evt#", s.t.Name(), s.seq)), Origin: "evt#1", Thread: th, Units: units, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	if _, created, err := s.store.CreateIntent(s.t.Context(), in); err != nil || !created {
		s.t.Fatalf("create intent: %v (created %v)", err, created)
	}
	return in
}

// handle delivers the record naming unit of in.
func (s *setup) handle(in intent.Intent, unitID string) error {
	return s.p.Handle(s.t.Context(), consumer.Record{SQSMessage: events.SQSMessage{MessageId: "m1", Body: string(intent.EncodeRef(in.ID, unitID))}})
}

func (s *setup) get(in intent.Intent) intent.Intent {
	s.t.Helper()
	got, err := s.store.GetIntent(s.t.Context(), in.ID)
	if err != nil {
		s.t.Fatal(err)
	}
	return got
}

func pending(id string) intent.Unit {
	return intent.Unit{ID: id, Content: message.Text("text " + id), State: message.UnitPending}
}

func retryAfter(err error) (time.Duration, bool) {
	var re *consumer.RetryError
	if errors.As(err, &re) {
		return re.After, true
	}
	return 0, false
}

func states(in intent.Intent) string {
	var parts []string
	for _, u := range in.Units {
		parts = append(parts, fmt.Sprintf("%s:%s@%d", u.ID, u.State, u.Attempt))
	}
	return strings.Join(parts, " ")
}

func TestDeliverInOrder(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{BubbleDelay: time.Second})
	in := s.create(thread, pending("a#1"), pending("b#1"), pending("c#1"))
	// The record names the last unit: every open unit before it goes first.
	if err := s.handle(in, "c#1"); err != nil {
		t.Fatal(err)
	}
	if got := s.sender.texts(); !slices.Equal(got, []string{"text a#1", "text b#1", "text c#1"}) {
		t.Fatalf("sent %v, want the units in order", got)
	}
	got := s.get(in)
	if states(got) != "a#1:sent@1 b#1:sent@1 c#1:sent@1" {
		t.Fatalf("units = %s", states(got))
	}
	if !slices.Equal(got.Units[2].Receipt, []string{"pm-3"}) || !got.Units[2].SentAt.Equal(t0.Add(2*time.Second)) {
		t.Errorf("c#1 receipt %v sent at %v", got.Units[2].Receipt, got.Units[2].SentAt)
	}
	// Paced: each unit waited the full delay after the one before.
	if !slices.Equal(s.clock.sleeps, []time.Duration{time.Second, time.Second}) {
		t.Errorf("sleeps = %v, want [1s 1s]", s.clock.sleeps)
	}
	if k := s.sender.sent[1].IdempotencyKey; k != intent.UnitKey(in.ID, "b#1") {
		t.Errorf("idempotency key %q, want the unit key", k)
	}
	// A redelivery of any record sends nothing again.
	if err := s.handle(in, "b#1"); err != nil || len(s.sender.texts()) != 3 {
		t.Fatalf("redelivery: %v, sent %d in all", err, len(s.sender.texts()))
	}
}

func TestPacing(t *testing.T) {
	t.Parallel()

	t.Run("SleepsTheRestOfTheBubbleDelay", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{BubbleDelay: time.Second})
		a := pending("a#1")
		a.State, a.Attempt, a.SentAt = message.UnitSent, 1, t0.Add(-300*time.Millisecond)
		in := s.create(thread, a, pending("b#1"))
		if err := s.handle(in, "b#1"); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.clock.sleeps, []time.Duration{700 * time.Millisecond}) {
			t.Fatalf("sleeps = %v, want [700ms]: BubbleDelay minus the time since a#1 was sent", s.clock.sleeps)
		}
		if got := s.get(in); got.Units[1].State != message.UnitSent || !got.Units[1].SentAt.Equal(t0.Add(700*time.Millisecond)) {
			t.Fatalf("b#1 = %s sent at %v", got.Units[1].State, got.Units[1].SentAt)
		}
	})

	t.Run("DelayAlreadyOverDoesNotSleep", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{BubbleDelay: time.Second})
		a := pending("a#1")
		a.State, a.Attempt, a.SentAt = message.UnitSent, 1, t0.Add(-2*time.Second)
		in := s.create(thread, a, pending("b#1"))
		if err := s.handle(in, "b#1"); err != nil {
			t.Fatal(err)
		}
		if len(s.clock.sleeps) != 0 || len(s.sender.texts()) != 1 {
			t.Fatalf("sleeps %v, sent %v; want b#1 sent at once", s.clock.sleeps, s.sender.texts())
		}
	})

	t.Run("LongWaitParksTheMessage", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{BubbleDelay: 10 * time.Second, MaxInlineWait: 5 * time.Second})
		a := pending("a#1")
		a.State, a.Attempt, a.SentAt = message.UnitSent, 1, t0.Add(-time.Second)
		in := s.create(thread, a, pending("b#1"))
		err := s.handle(in, "b#1")
		if d, ok := retryAfter(err); !ok || d != 9*time.Second {
			t.Fatalf("Handle = %v, want a consumer.RetryError after 9s", err)
		}
		if len(s.clock.sleeps) != 0 || len(s.sender.texts()) != 0 {
			t.Fatalf("slept %v, sent %v; a long wait parks instead", s.clock.sleeps, s.sender.texts())
		}
		if got := s.get(in); got.Units[1].State != message.UnitPending || got.Units[1].Attempt != 0 {
			t.Fatalf("b#1 = %s@%d, want untouched", got.Units[1].State, got.Units[1].Attempt)
		}
	})
}

func TestFailures(t *testing.T) {
	t.Parallel()

	t.Run("PastItsAgeAFailedUnitFailsWithItsLastClass", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{MaxAge: time.Hour})
		u := pending("a#1")
		u.Attempt, u.FailureClass, u.FailureReason = 40, message.FailRateLimit, "429 too many requests"
		in := s.create(thread, u, pending("b#1"))
		s.clock.now = t0.Add(61 * time.Minute)
		if err := s.handle(in, "b#1"); err != nil {
			t.Fatal(err)
		}
		got := s.get(in)
		a := got.Units[0]
		if a.State != message.UnitFailed || a.FailureClass != message.FailRateLimit || a.FailureReason != "gave up past its age of 1h0m0s: 429 too many requests" {
			t.Fatalf("a#1 = %s %s %q, want failed with its last class", a.State, a.FailureClass, a.FailureReason)
		}
		if !slices.Equal(s.sender.texts(), []string{"text b#1"}) {
			t.Fatalf("sent %v, want only b#1: a#1 was past its age", s.sender.texts())
		}
	})

	t.Run("AFailurePastItsAgeFailsTheUnit", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{MaxAge: time.Hour})
		s.sender.respond = func(int, message.Outgoing) error {
			return &message.SendError{Class: message.FailTransient, Status: 503, Reason: "service_unavailable"}
		}
		in := s.create(thread, pending("a#1"))
		s.clock.now = t0.Add(90 * time.Minute) // a unit never tried is still sent: only failures age it out
		if err := s.handle(in, "a#1"); err != nil {
			t.Fatalf("Handle = %v, want nil: the unit is settled", err)
		}
		if a := s.get(in).Units[0]; a.State != message.UnitFailed || a.Attempt != 1 || a.FailureClass != message.FailTransient ||
			a.FailureReason != "gave up past its age of 1h0m0s: service_unavailable" {
			t.Fatalf("a#1 = %+v", a)
		}
	})

	t.Run("NoSenderForThePlatform", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{})
		slackThread := message.Thread{Platform: message.Slack, Account: "T1", Chat: "C1"}
		in := s.create(slackThread, pending("a#1"))
		if err := s.handle(in, "a#1"); err != nil {
			t.Fatal(err)
		}
		a := s.get(in).Units[0]
		if a.State != message.UnitFailed || a.FailureClass != message.FailInvalidPayload || !strings.Contains(a.FailureReason, "no sender configured") {
			t.Fatalf("a#1 = %s %s %q, want failed invalid_payload: no sender configured", a.State, a.FailureClass, a.FailureReason)
		}
	})

	t.Run("LeasedByAnotherAttemptRetriesAtItsLeaseEnd", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{})
		u := pending("a#1")
		u.State, u.Attempt, u.LeaseUntil = message.UnitSending, 1, t0.Add(7*time.Second)
		in := s.create(thread, u)
		err := s.handle(in, "a#1")
		if d, ok := retryAfter(err); !ok || d != 7*time.Second {
			t.Fatalf("Handle = %v, want a retry after 7s (the lease's end)", err)
		}
		if len(s.sender.texts()) != 0 || s.get(in).Units[0].State != message.UnitSending {
			t.Fatal("a unit leased by another attempt was touched")
		}
	})

	t.Run("RateLimitParksExactlyRetryAfter", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{})
		s.sender.respond = func(int, message.Outgoing) error {
			return &message.SendError{Class: message.FailRateLimit, RetryAfter: 3 * time.Second, Status: 429, Reason: "too many requests"}
		}
		in := s.create(thread, pending("a#1"))
		err := s.handle(in, "a#1")
		if d, ok := retryAfter(err); !ok || d != 3*time.Second {
			t.Fatalf("Handle = %v, want a retry after exactly 3s", err)
		}
		if a := s.get(in).Units[0]; a.State != message.UnitPending || a.Attempt != 1 || a.FailureClass != message.FailRateLimit ||
			!a.NextAt.Equal(t0.Add(3*time.Second)) {
			t.Fatalf("a#1 = %s@%d %s next %v, want back to pending with its failure, due in 3s", a.State, a.Attempt, a.FailureClass, a.NextAt)
		}
	})

	t.Run("RepeatedRateLimitsWaitLongerThanRetryAfter", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{})
		s.sender.respond = func(int, message.Outgoing) error {
			return &message.SendError{Class: message.FailRateLimit, RetryAfter: time.Second, Status: 429, Reason: "too many requests"}
		}
		u := pending("a#1")
		u.Attempt, u.FailureClass = 6, message.FailRateLimit // the 7th 429 in a row comes next
		in := s.create(thread, u)
		if d, ok := retryAfter(s.handle(in, "a#1")); !ok || d != 64*time.Second {
			t.Fatalf("retry after %v, want the floor of 64s for a 7th 429 (retry_after 1s)", d)
		}
	})

	t.Run("TransientFailureBacksOffByTheUnitsAttempts", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{})
		s.sender.respond = func(int, message.Outgoing) error {
			return &message.SendError{Class: message.FailTransient, Reason: "request not sent"}
		}
		in := s.create(thread, pending("a#1"))
		d, ok := retryAfter(s.handle(in, "a#1"))
		if !ok || d < time.Second || d > 2*time.Second || d%time.Second != 0 {
			t.Fatalf("retry after %v (%v), want a jittered backoff of 1-2s for a first failure, in whole seconds", d, ok)
		}
		if a := s.get(in).Units[0]; !a.NextAt.Equal(t0.Add(d)) {
			t.Fatalf("a#1 next %v, want now + %v", a.NextAt, d)
		}
	})

	t.Run("PermanentFailureMovesOn", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{})
		s.sender.respond = func(n int, _ message.Outgoing) error {
			if n == 1 {
				return &message.SendError{Class: message.FailPermission, Status: 403, Reason: "bot was blocked"}
			}
			return nil
		}
		in := s.create(thread, pending("a#1"), pending("b#1"))
		if err := s.handle(in, "b#1"); err != nil {
			t.Fatal(err)
		}
		got := s.get(in)
		if states(got) != "a#1:failed@1 b#1:sent@1" || got.Units[0].FailureClass != message.FailPermission {
			t.Fatalf("units = %s (%s), want a#1 failed and b#1 sent", states(got), got.Units[0].FailureClass)
		}
	})

	t.Run("BadRecords", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{})
		err := s.p.Handle(t.Context(), consumer.Record{SQSMessage: events.SQSMessage{Body: `{"version":"nope"}`}})
		var dead *consumer.DeadLetterError
		if !errors.As(err, &dead) || !errors.Is(err, intent.ErrBadRef) {
			t.Fatalf("bad body: %v, want DeadLetter(ErrBadRef): to the DLQ, alone", err)
		}
		if err := s.handle(intent.Intent{ID: "missing"}, "a#1"); err != nil {
			t.Fatalf("a ref to no intent: %v, want dropped", err)
		}
		in := s.create(thread, pending("a#1"))
		if err := s.handle(in, "zz#1"); err != nil || len(s.sender.texts()) != 0 {
			t.Fatalf("a ref to no unit: %v, sent %v; want dropped", err, s.sender.texts())
		}
	})
}

func TestUnknownOutcomes(t *testing.T) {
	t.Parallel()

	unknownThenPending := func(s *setup) intent.Intent {
		u := pending("a#1")
		u.State, u.Attempt, u.FailureClass, u.FailureReason = message.UnitUnknown, 1, message.FailUnknown, "timeout"
		return s.create(thread, u, pending("b#1"))
	}

	t.Run("HeldUnderHold", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{Unknown: delivery.UnknownHold})
		in := unknownThenPending(s)
		if err := s.handle(in, "b#1"); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.sender.texts(), []string{"text b#1"}) {
			t.Fatalf("sent %v, want only b#1: a#1 is held for an operator", s.sender.texts())
		}
		if got := s.get(in); states(got) != "a#1:unknown_after_send@1 b#1:sent@1" {
			t.Fatalf("units = %s", states(got))
		}
	})

	for name, cfg := range map[string]delivery.Config{
		"ResentUnderResend":   {Unknown: delivery.UnknownResend},
		"ResentByPlatform":    {Unknown: delivery.UnknownHold, UnknownByPlatform: map[message.Platform]delivery.UnknownPolicy{message.Telegram: delivery.UnknownResend}},
		"ResentIfIdempotent":  {Unknown: delivery.UnknownHold},
		"ResentOverPlatforms": {Unknown: delivery.UnknownResend, UnknownByPlatform: map[message.Platform]delivery.UnknownPolicy{message.Slack: delivery.UnknownHold}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSetup(t, cfg)
			s.idempotent(name == "ResentIfIdempotent")
			in := unknownThenPending(s)
			if err := s.handle(in, "b#1"); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.sender.texts(), []string{"text a#1", "text b#1"}) {
				t.Fatalf("sent %v, want a#1 resent, then b#1", s.sender.texts())
			}
			a := s.get(in).Units[0]
			if a.State != message.UnitSent || a.Attempt != 2 || !a.Resent {
				t.Fatalf("a#1 = %s@%d resent %v, want sent on attempt 2, marked resent", a.State, a.Attempt, a.Resent)
			}
		})
	}

	t.Run("PlatformHoldOverridesResend", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{Unknown: delivery.UnknownResend, UnknownByPlatform: map[message.Platform]delivery.UnknownPolicy{message.Telegram: delivery.UnknownHold}})
		in := unknownThenPending(s)
		if err := s.handle(in, "b#1"); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.sender.texts(), []string{"text b#1"}) {
			t.Fatalf("sent %v, want a#1 held under telegram=hold", s.sender.texts())
		}
	})

	t.Run("AbandonedSendBecomesUnknown", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{})
		u := pending("a#1")
		u.State, u.Attempt, u.LeaseUntil = message.UnitSending, 1, t0.Add(-time.Second)
		in := s.create(thread, u, pending("b#1"))
		if err := s.handle(in, "b#1"); err != nil {
			t.Fatal(err)
		}
		got := s.get(in)
		if states(got) != "a#1:unknown_after_send@1 b#1:sent@1" || got.Units[0].FailureReason != "abandoned mid-send" {
			t.Fatalf("units = %s (%q), want a#1 unknown (held) and b#1 sent", states(got), got.Units[0].FailureReason)
		}
	})

	t.Run("UnknownSendOutcomeIsHeld", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{})
		s.sender.respond = func(n int, _ message.Outgoing) error {
			if n == 1 {
				return &message.SendError{Class: message.FailUnknown, Reason: "timeout after the request left"}
			}
			return nil
		}
		in := s.create(thread, pending("a#1"), pending("b#1"))
		if err := s.handle(in, "b#1"); err != nil {
			t.Fatal(err)
		}
		if got := s.get(in); states(got) != "a#1:unknown_after_send@1 b#1:sent@1" {
			t.Fatalf("units = %s", states(got))
		}
	})

	t.Run("UnknownSendOutcomeUnderResendIsRetried", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, delivery.Config{Unknown: delivery.UnknownResend})
		s.sender.respond = func(n int, _ message.Outgoing) error {
			if n == 1 {
				return errors.New("connection reset") // unclassified: unknown
			}
			return nil
		}
		in := s.create(thread, pending("a#1"))
		if err := s.handle(in, "a#1"); err == nil {
			t.Fatal("Handle = nil, want an error so the record is retried")
		}
		if err := s.handle(in, "a#1"); err != nil {
			t.Fatal(err)
		}
		if a := s.get(in).Units[0]; a.State != message.UnitSent || !a.Resent || a.Attempt != 2 {
			t.Fatalf("a#1 = %s@%d resent %v", a.State, a.Attempt, a.Resent)
		}
	})
}

// TestResendEnds (finding 8.10): under resend, a unit out of resends stayed
// in unknown_after_send forever, since MarkFailed does not leave that state.
// It ends failed, in the attention index, and the thread goes on.
func TestResendEnds(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]func(u *intent.Unit, s *setup){
		"OutOfResends": func(u *intent.Unit, s *setup) { u.Resends, u.Resent = 3, true },
		"PastItsAge":   func(u *intent.Unit, s *setup) { s.clock.now = t0.Add(7 * time.Hour) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSetup(t, delivery.Config{Unknown: delivery.UnknownResend, MaxResends: 3})
			u := pending("a#1")
			u.State, u.Attempt, u.FailureClass = message.UnitUnknown, 4, message.FailUnknown
			setup(&u, s)
			in := s.create(thread, u, pending("b#1"))
			if err := s.handle(in, "b#1"); err != nil {
				t.Fatal(err)
			}
			got := s.get(in)
			if states(got) != "a#1:failed@4 b#1:sent@1" || got.Units[0].FailureClass != message.FailUnknown ||
				!strings.Contains(got.Units[0].FailureReason, "unknown outcome") {
				t.Fatalf("units = %s (%s %q), want a#1 failed keeping its doubt, b#1 sent", states(got), got.Units[0].FailureClass, got.Units[0].FailureReason)
			}
			if !slices.Equal(s.sender.texts(), []string{"text b#1"}) {
				t.Fatalf("sent %v, want a#1 not resent", s.sender.texts())
			}
		})
	}
}

// TestNoSendPastTheDeadline (finding 8.8): a record with several open units,
// or a long bubble delay, started sends its invocation could not finish, and
// a send cut off is an unknown outcome held for an operator. A send starts
// only when it can finish; the rest goes back to the queue.
func TestNoSendPastTheDeadline(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{SendTimeout: 2 * time.Second, BubbleDelay: time.Second})
	in := s.create(thread, pending("a#1"), pending("b#1"))
	ctx, cancel := context.WithTimeout(t.Context(), 3500*time.Millisecond) // a#1 fits; a#1 + 1s pause + b#1 does not
	defer cancel()
	s.sender.respond = func(int, message.Outgoing) error {
		time.Sleep(time.Second) // a slow platform, in wall time
		return nil
	}
	err := s.p.Handle(ctx, consumer.Record{SQSMessage: events.SQSMessage{MessageId: "m1", Body: string(intent.EncodeRef(in.ID, "b#1"))}})
	if d, ok := retryAfter(err); !ok || d > time.Second {
		t.Fatalf("Handle = %v, want the rest handed back (a retry after the pacing wait at most)", err)
	}
	if got := s.get(in); states(got) != "a#1:sent@1 b#1:pending@0" {
		t.Fatalf("units = %s, want b#1 untouched for the next invocation", states(got))
	}
}

// TestLongWaitParksAgainForTheRest (finding 8.4): a record back before its
// unit's retry time (SQS parks at most 12 hours) waits the rest without a
// lease, an attempt or a send.
func TestLongWaitParksAgainForTheRest(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{MaxAge: 24 * time.Hour})
	u := pending("a#1")
	u.Attempt, u.FailureClass, u.NextAt = 1, message.FailRateLimit, t0.Add(14*time.Hour)
	in := s.create(thread, u)
	s.clock.now = t0.Add(12 * time.Hour)
	if d, ok := retryAfter(s.handle(in, "a#1")); !ok || d != 2*time.Hour {
		t.Fatalf("retry after %v, want the remaining 2h", d)
	}
	if got := s.get(in).Units[0]; got.Attempt != 1 || got.State != message.UnitPending || len(s.sender.texts()) != 0 {
		t.Fatalf("a#1 = %s@%d after %d sends; want it untouched", got.State, got.Attempt, len(s.sender.texts()))
	}
}

// TestOutageWithinTheAgeLosesNothing (finding 8.3): 8 attempts with a doubling
// backoff rode out 2-4 minutes of an outage. Failures that prove nothing was
// posted keep a unit pending through a 30-minute outage, then it is sent.
func TestOutageWithinTheAgeLosesNothing(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{})
	recovery := t0.Add(30 * time.Minute)
	s.sender.respond = func(n int, _ message.Outgoing) error {
		if s.clock.Now().Before(recovery) {
			if n%2 == 0 {
				return &message.SendError{Class: message.FailRateLimit, RetryAfter: 300 * time.Second, Status: 429, Reason: "Too Many Requests"}
			}
			return &message.SendError{Class: message.FailTransient, Reason: "request not sent"}
		}
		return nil
	}
	in := s.create(thread, pending("a#1"), pending("b#1"))
	for tries := 0; ; tries++ {
		err := s.handle(in, "b#1")
		if err == nil {
			break
		}
		d, ok := retryAfter(err)
		if !ok || tries > 100 {
			t.Fatalf("try %d: %v", tries, err)
		}
		s.clock.now = s.clock.now.Add(d)
	}
	got := s.get(in)
	if states(got) != "a#1:sent@"+strconv.Itoa(got.Units[0].Attempt)+" b#1:sent@1" || got.Units[0].Attempt < 10 {
		t.Fatalf("units = %s, want a#1 sent after many failed attempts, then b#1", states(got))
	}
	if !slices.Equal(s.sender.texts()[len(s.sender.texts())-2:], []string{"text a#1", "text b#1"}) {
		t.Fatalf("sent %v, want a#1 then b#1 last", s.sender.texts())
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	d := delivery.Config{}.WithDefaults()
	if d.BubbleDelay != time.Second || d.MaxInlineWait != 5*time.Second || d.SendTimeout != 10*time.Second ||
		d.Lease != 20*time.Second || d.MaxAge != 6*time.Hour || d.MaxResends != 3 || d.Unknown != delivery.UnknownHold {
		t.Fatalf("defaults = %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	bad := delivery.Config{
		BubbleDelay: -time.Second, SendTimeout: 10 * time.Second, Lease: 10 * time.Second, MaxAge: 25 * time.Hour, MaxResends: -1,
		Unknown: "maybe", UnknownByPlatform: map[message.Platform]delivery.UnknownPolicy{message.Slack: "later"},
	}.WithDefaults()
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate accepted a bad config")
	}
	for _, want := range []string{"bubble delay", "lease (10s) must exceed the send timeout (10s)", "max age 25h0m0s", "max resends", `"maybe"`, `"later"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not report %q:\n%v", want, err)
		}
	}
}

// TestIntentOfThePreviousReleaseDelivers: an intent item as the previous
// release wrote it (no layout version, units holding only "text") is read
// and delivered, in order, by this code. The item is written raw, as that
// release's PutItem left it, not through today's encoder.
func TestIntentOfThePreviousReleaseDelivers(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{BubbleDelay: time.Second})
	id := intent.IDFor("evt#telegram#7000000001#v1")
	unit := func(uid, text string) types.AttributeValue {
		return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"id": &types.AttributeValueMemberS{Value: uid}, "text": &types.AttributeValueMemberS{Value: text},
			"reply_to": &types.AttributeValueMemberS{Value: "318"}, "st": &types.AttributeValueMemberS{Value: "pending"},
			"att": &types.AttributeValueMemberN{Value: "0"}, "lease": &types.AttributeValueMemberN{Value: "0"},
			"rcpt": &types.AttributeValueMemberNULL{Value: true}, "sent": &types.AttributeValueMemberN{Value: "0"},
			"fc": &types.AttributeValueMemberS{Value: ""}, "fr": &types.AttributeValueMemberS{Value: ""},
			"resent": &types.AttributeValueMemberBOOL{Value: false}, "upd": &types.AttributeValueMemberN{Value: "0"},
		}}
	}
	item := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "int#" + id}, "kind": &types.AttributeValueMemberS{Value: "intent"},
		"id": &types.AttributeValueMemberS{Value: id}, "origin": &types.AttributeValueMemberS{Value: "evt#telegram#7000000001#v1"},
		"thread": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			// message.Thread has no dynamodbav tags: its field names.
			"Platform": &types.AttributeValueMemberS{Value: "telegram"}, "Account": &types.AttributeValueMemberS{Value: "7000000001"},
			"Chat": &types.AttributeValueMemberS{Value: "42"}, "Thread": &types.AttributeValueMemberS{Value: ""},
		}},
		"units":      &types.AttributeValueMemberL{Value: []types.AttributeValue{unit("b1#1", "first, as v1 wrote it"), unit("b2#1", "second")}},
		"created_at": &types.AttributeValueMemberN{Value: strconv.FormatInt(t0.UnixMilli(), 10)},
		"expires_at": &types.AttributeValueMemberN{Value: strconv.FormatInt(t0.Add(time.Hour).Unix(), 10)},
	}
	if _, err := s.env.DynamoDB.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(s.env.Resources.Table), Item: item}); err != nil {
		t.Fatal(err)
	}
	in := intent.Intent{ID: id}
	if err := s.handle(in, "b2#1"); err != nil {
		t.Fatal(err)
	}
	if got := s.sender.texts(); !slices.Equal(got, []string{"first, as v1 wrote it", "second"}) {
		t.Fatalf("sent %q", got)
	}
	if s.sender.sent[0].ReplyTo != "318" || s.sender.sent[0].Thread != thread {
		t.Fatalf("first unit went as %+v", s.sender.sent[0])
	}
	if got := s.get(in); states(got) != "b1#1:sent@1 b2#1:sent@1" {
		t.Fatalf("states %s", states(got))
	}
}

// TestAnOperatorsResendIsSentByTheInstanceThatHeldTheUnit: an instance
// that held a unit for an operator keeps the intent as it last moved it;
// when the operator resends the unit (back to pending, in the store) and
// its message reaches that same instance, the unit is sent. Before, the
// instance's own view said the unit was held, and it dropped the message
// without a look at the store.
func TestAnOperatorsResendIsSentByTheInstanceThatHeldTheUnit(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{})
	s.sender.respond = func(n int, _ message.Outgoing) error {
		if n == 1 {
			return &message.SendError{Class: message.FailUnknown, Reason: "timeout after the request left"}
		}
		return nil
	}
	in := s.create(thread, pending("a#1"))
	if err := s.handle(in, "a#1"); err != nil {
		t.Fatal(err)
	}
	held := s.get(in)
	if states(held) != "a#1:unknown_after_send@1" {
		t.Fatalf("units = %s, want a#1 held", states(held))
	}
	if _, err := s.store.Apply(t.Context(), in.ID, intent.OperatorResend(held.Units[0], 0, t0)); err != nil {
		t.Fatal(err)
	}
	if err := s.handle(in, "a#1"); err != nil {
		t.Fatal(err)
	}
	if got := s.get(in); states(got) != "a#1:sent@2" || len(s.sender.texts()) != 2 {
		t.Fatalf("units = %s after %d sends, want a#1 sent by a second attempt", states(got), len(s.sender.texts()))
	}
}
