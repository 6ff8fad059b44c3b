package turn_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/envelope"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/questions"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/turn"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeAgent answers turns in pure Go (the real HTTP client is tested in
// package agent and end to end).
type fakeAgent struct {
	mu     sync.Mutex
	calls  []agent.TurnRequest
	answer func(req agent.TurnRequest) (agent.Reply, error)
}

func (a *fakeAgent) Call(_ context.Context, req agent.TurnRequest) (agent.Reply, error) {
	a.mu.Lock()
	a.calls = append(a.calls, req)
	a.mu.Unlock()
	return a.answer(req)
}

func (a *fakeAgent) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.calls)
}

// envelopeReply is a 200 with an openab.turn.v1 body.
func envelopeReply(body string) func(agent.TurnRequest) (agent.Reply, error) {
	return func(agent.TurnRequest) (agent.Reply, error) {
		return agent.Reply{Status: http.StatusOK, ContentType: "application/json", Body: []byte(body)}, nil
	}
}

func bubbles(n int) string {
	var ms []string
	for i := 1; i <= n; i++ {
		ms = append(ms, fmt.Sprintf(`{"id":"b%d","text":"bubble %d"}`, i, i))
	}
	return `{"schema":"openab.turn.v1","messages":[` + strings.Join(ms, ",") + `]}`
}

// channel is a platform as the turn sees it: Telegram's limits.
var channel = turn.Channel{Capabilities: message.Capabilities{TextLimit: 4096, Counting: message.CountUTF16}}

// failingTyper is a typing indicator that always fails.
type failingTyper struct {
	typed chan message.Thread
}

func (c failingTyper) Typing(_ context.Context, th message.Thread) error {
	c.typed <- th
	return errors.New("typing: 502")
}

// setup is one test's processor on its own table and outbound queue.
type setup struct {
	t     *testing.T
	env   *emulatortest.Env
	store *dynamostore.Store
	agent *fakeAgent
	p     *turn.Processor
	clock *clock
}

// clock is the processor's clock; tests move it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newSetup(t *testing.T, answer func(agent.TurnRequest) (agent.Reply, error)) *setup {
	t.Helper()
	env := emulatortest.New(t)
	s := &setup{t: t, env: env, store: dynamostore.New(env.DynamoDB, env.Resources.Table), agent: &fakeAgent{answer: answer}, clock: &clock{now: t0}}
	s.p = &turn.Processor{
		Claims:   s.store,
		Intents:  s.store,
		Outbox:   queue.New(env.SQS, env.Resources.OutboundURL),
		Agent:    s.agent,
		Channels: map[message.Platform]turn.Channel{message.Telegram: channel},
		Now:      s.clock.Now,
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	return s
}

func event(id string) message.Event {
	return message.Event{
		Platform: message.Telegram, Account: "7000000001", EventID: id, Kind: message.KindMessage,
		Thread: message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"},
		Sender: message.Sender{ID: "42"}, Text: "hello", MessageID: "m" + id, ChatType: message.ChatPrivate, Time: t0,
	}
}

func (s *setup) handle(in intent.Inbound) error {
	s.t.Helper()
	body, err := intent.EncodeInbound(in)
	if err != nil {
		s.t.Fatal(err)
	}
	return s.p.Handle(s.t.Context(), consumer.Record{SQSMessage: events.SQSMessage{MessageId: "m1", Body: string(body)}})
}

func (s *setup) claim(ev message.Event) (store.Claim, error) {
	return s.store.GetClaim(s.t.Context(), store.IntentKey(intent.IDFor(ev.Key())), t0)
}

func (s *setup) intent(ev message.Event) (intent.Intent, error) {
	return s.store.GetIntent(s.t.Context(), intent.IDFor(ev.Key()))
}

// outbound takes every ref off the outbound queue, in order.
func (s *setup) outbound() []intent.Ref {
	s.t.Helper()
	var refs []intent.Ref
	for {
		out, err := s.env.SQS.ReceiveMessage(s.t.Context(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(s.env.Resources.OutboundURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			s.t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return refs
		}
		for _, m := range out.Messages {
			r, err := intent.DecodeRef([]byte(aws.ToString(m.Body)))
			if err != nil {
				s.t.Fatal(err)
			}
			if g := m.Attributes["MessageGroupId"]; g != "telegram:7000000001:42" {
				s.t.Errorf("ref in group %q, want the thread key", g)
			}
			if d := m.Attributes["MessageDeduplicationId"]; d != message.DedupID(intent.UnitKey(r.Intent, r.Unit)) {
				s.t.Errorf("ref dedup id %q, want DedupID of the unit key", d)
			}
			refs = append(refs, r)
			if _, err := s.env.SQS.DeleteMessage(s.t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(s.env.Resources.OutboundURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				s.t.Fatal(err)
			}
		}
	}
}

func retryAfter(err error) (time.Duration, bool) {
	var re *consumer.RetryError
	if errors.As(err, &re) {
		return re.After, true
	}
	return 0, false
}

func unitIDs(refs []intent.Ref) string {
	var ids []string
	for _, r := range refs {
		ids = append(ids, r.Unit)
	}
	return strings.Join(ids, ",")
}

func TestTurn(t *testing.T) {
	t.Parallel()

	t.Run("PlansPersistsThenEnqueues", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(2)))
		ev := event("1")
		ev.ChatType = message.ChatGroup
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatal(err)
		}
		in, err := s.intent(ev)
		if err != nil {
			t.Fatalf("no intent persisted: %v", err)
		}
		if len(in.Units) != 2 || in.Units[0].ID != "b1#1" || in.Units[1].Content.Text != "bubble 2" || in.Units[0].State != message.UnitPending {
			t.Fatalf("units = %+v", in.Units)
		}
		if in.Units[0].ReplyTo != "m1" || in.Units[1].ReplyTo != "" {
			t.Errorf("reply-to %q, %q; want the first unit quoting the group message", in.Units[0].ReplyTo, in.Units[1].ReplyTo)
		}
		if in.Origin != ev.Key() || in.Thread != ev.Thread || !in.ExpiresAt.Equal(t0.Add(30*24*time.Hour)) {
			t.Errorf("intent origin %q, thread %+v, expires %v", in.Origin, in.Thread, in.ExpiresAt)
		}
		if refs := s.outbound(); unitIDs(refs) != "b1#1,b2#1" || refs[0].Intent != in.ID {
			t.Fatalf("enqueued %v, want both units of the intent in order", refs)
		}
		if c, err := s.claim(ev); err != nil || c.State != store.ClaimDone {
			t.Fatalf("claim = %+v, %v; want done", c, err)
		}
		req := s.agent.calls[0]
		if req.TurnID != in.ID || req.ThreadKey != ev.Thread.Key() || req.Event.Key() != ev.Key() {
			t.Errorf("agent request turn %q thread %q event %q", req.TurnID, req.ThreadKey, req.Event.Key())
		}
		// A redelivery after the claim is settled does nothing.
		if err := s.handle(intent.Inbound{Event: ev}); err != nil || s.agent.count() != 1 {
			t.Fatalf("redelivery: %v, agent called %d times", err, s.agent.count())
		}
	})

	t.Run("AnAnswerNeverStartsATurn", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(1)))
		ev := event("press")
		ev.Kind, ev.Text, ev.Press = message.KindAnswer, "", &message.Press{Data: "q1:0", MessageID: "77"}
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatal(err)
		}
		if n := s.agent.count(); n != 0 {
			t.Fatalf("a press asked the agent %d times", n)
		}
		if _, err := s.intent(ev); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a press planned a reply: %v", err)
		}
	})

	t.Run("ReplyContextReachesTheIntent", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(2)))
		ev := event("rc")
		ev.ReplyContext = &message.ReplyContext{Token: "tok-1", Until: t0.Add(time.Minute)}
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatal(err)
		}
		in, err := s.intent(ev)
		if err != nil {
			t.Fatal(err)
		}
		if rc := in.ReplyContext; rc == nil || rc.Token != "tok-1" || !rc.Until.Equal(t0.Add(time.Minute)) {
			t.Fatalf("intent reply context %+v", in.ReplyContext)
		}
	})

	t.Run("TypingIsBestEffort", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(1)))
		typer := failingTyper{typed: make(chan message.Thread, 1)}
		s.p.Channels[message.Telegram] = turn.Channel{Capabilities: channel.Capabilities, Typer: typer}
		ev := event("ty")
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatalf("a failed typing indicator failed the turn: %v", err)
		}
		if th := <-typer.typed; th != ev.Thread {
			t.Fatalf("typing shown in %+v", th)
		}
		if refs := s.outbound(); unitIDs(refs) != "b1#1" {
			t.Fatalf("enqueued %v", refs)
		}
	})

	t.Run("DeferredIsParked", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(1)))
		for _, tc := range []struct {
			notBefore time.Time
			want      time.Duration
		}{
			{t0.Add(time.Hour), time.Hour},
			{t0.Add(12 * time.Hour), 12 * time.Hour},
			{t0.Add(48 * time.Hour), 48 * time.Hour}, // the consumer parks it as long as SQS allows
		} {
			ev := event("d1")
			err := s.handle(intent.Inbound{Event: ev, NotBefore: tc.notBefore})
			if d, ok := retryAfter(err); !ok || d != tc.want {
				t.Errorf("NotBefore now+%v: %v, want a retry after %v", tc.notBefore.Sub(t0), err, tc.want)
			}
			if _, err := s.claim(ev); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a deferred turn claimed its event: %v", err)
			}
		}
		if s.agent.count() != 0 {
			t.Fatalf("agent called %d times for deferred turns", s.agent.count())
		}
		// Once its time has come, it runs.
		if err := s.handle(intent.Inbound{Event: event("d2"), NotBefore: t0.Add(-time.Minute)}); err != nil || s.agent.count() != 1 {
			t.Fatalf("due turn: %v, agent calls %d", err, s.agent.count())
		}
	})

	t.Run("SettledClaimSkipsTheAgent", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(1)))
		ev := event("s1")
		key := store.IntentKey(intent.IDFor(ev.Key()))
		if _, err := s.store.Claim(t.Context(), key, store.ClaimSpec{Owner: "earlier", Now: t0, Lease: time.Minute, TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		if err := s.store.Settle(t.Context(), key, "earlier", store.ClaimDone, "", t0, time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatal(err)
		}
		if s.agent.count() != 0 {
			t.Fatalf("agent called %d times for a settled turn", s.agent.count())
		}
		if refs := s.outbound(); len(refs) != 0 {
			t.Fatalf("enqueued %v for a settled turn", refs)
		}
	})

	t.Run("RunningElsewhereRetriesAtItsLeaseEnd", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(1)))
		ev := event("r1")
		if _, err := s.store.Claim(t.Context(), store.IntentKey(intent.IDFor(ev.Key())), store.ClaimSpec{Owner: "other", Now: t0, Lease: 40 * time.Second, TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		err := s.handle(intent.Inbound{Event: ev})
		if d, ok := retryAfter(err); !ok || d != 40*time.Second || s.agent.count() != 0 {
			t.Fatalf("Handle = %v (agent calls %d), want a retry after the other turn's 40 s lease", err, s.agent.count())
		}
	})

	t.Run("RerunAfterACrashOnlyEnqueues", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(3)))
		ev := event("c1")
		// An earlier attempt committed its intent, then died before it
		// enqueued anything.
		id := intent.IDFor(ev.Key())
		if _, err := s.store.Claim(t.Context(), store.IntentKey(id), store.ClaimSpec{Owner: "dead", Now: t0.Add(-2 * time.Minute), Lease: time.Minute, TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		in := intent.Intent{ID: id, Origin: ev.Key(), Thread: ev.Thread, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour),
			Units: []intent.Unit{
				{ID: "x#1", Content: message.Text("sent before"), State: message.UnitSent},
				{ID: "x#2", Content: message.Text("planned before"), State: message.UnitPending},
			}}
		if _, created, err := s.store.CommitIntent(t.Context(), in, "dead", "envelope", t0); err != nil || !created {
			t.Fatalf("commit: %v, created %v", err, created)
		}
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatal(err)
		}
		if s.agent.count() != 0 {
			t.Fatalf("agent called %d times although the intent was committed", s.agent.count())
		}
		if refs := s.outbound(); unitIDs(refs) != "x#2" {
			t.Fatalf("enqueued %v, want the committed plan's open unit", refs)
		}
	})

	t.Run("RedeliveryOfADeliveredTurnEnqueuesNothing", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(1)))
		ev := event("c4")
		id := intent.IDFor(ev.Key())
		if _, err := s.store.Claim(t.Context(), store.IntentKey(id), store.ClaimSpec{Owner: "done", Now: t0, Lease: time.Minute, TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		in := intent.Intent{ID: id, Origin: ev.Key(), Thread: ev.Thread, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour),
			Units: []intent.Unit{{ID: "x#1", Content: message.Text("sent"), State: message.UnitSent}, {ID: "x#2", Content: message.Text("failed"), State: message.UnitFailed}}}
		if _, _, err := s.store.CommitIntent(t.Context(), in, "done", "envelope", t0); err != nil {
			t.Fatal(err)
		}
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatal(err)
		}
		if refs := s.outbound(); len(refs) != 0 || s.agent.count() != 0 {
			t.Fatalf("enqueued %v and asked the agent %d times for a delivered turn", refs, s.agent.count())
		}
	})

	t.Run("IntentOfThePreviousReleaseOnlyEnqueues", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(3)))
		ev := event("c2")
		// The previous release wrote intents without a claim on them.
		in := intent.Intent{ID: intent.IDFor(ev.Key()), Origin: ev.Key(), Thread: ev.Thread, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour),
			Units: []intent.Unit{{ID: "x#1", Content: message.Text("planned before"), State: message.UnitPending}}}
		if _, _, err := s.store.CreateIntent(t.Context(), in); err != nil {
			t.Fatal(err)
		}
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatal(err)
		}
		if s.agent.count() != 0 {
			t.Fatalf("agent called %d times although the intent was persisted", s.agent.count())
		}
		if refs := s.outbound(); unitIDs(refs) != "x#1" {
			t.Fatalf("enqueued %v, want the persisted plan", refs)
		}
	})

	t.Run("CommitAfterLosingTheClaimWritesNothing", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(1)))
		ev := event("c3")
		key := store.IntentKey(intent.IDFor(ev.Key()))
		if _, err := s.store.Claim(t.Context(), key, store.ClaimSpec{Owner: "now", Now: t0, Lease: time.Minute, TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		in := intent.Intent{ID: intent.IDFor(ev.Key()), Origin: ev.Key(), Thread: ev.Thread, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour),
			Units: []intent.Unit{{ID: "x#1", Content: message.Text("late"), State: message.UnitPending}}}
		var held *store.ClaimHeldError
		if _, _, err := s.store.CommitIntent(t.Context(), in, "expired", "envelope", t0); !errors.As(err, &held) || held.Current.Owner != "now" {
			t.Fatalf("commit by a former owner = %v, want the claim held by its owner", err)
		}
		if _, err := s.intent(ev); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("intent after a refused commit: %v, want none", err)
		}
	})
}

func TestTurnAgentFailures(t *testing.T) {
	t.Parallel()

	t.Run("PermanentErrorSettlesTheClaimFailed", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, func(agent.TurnRequest) (agent.Reply, error) {
			return agent.Reply{}, &agent.Error{Kind: agent.KindPermanent, Status: http.StatusBadRequest, Err: agent.ErrStatus}
		})
		ev := event("p1")
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatalf("Handle = %v, want nil: the thread moves on", err)
		}
		c, err := s.claim(ev)
		if err != nil || c.State != store.ClaimFailed || c.Reason != "agent_status_400" {
			t.Fatalf("claim = %+v, %v; want failed with agent_status_400", c, err)
		}
		if _, err := s.intent(ev); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an intent was written for a refused turn: %v", err)
		}
		if err := s.handle(intent.Inbound{Event: ev}); err != nil || s.agent.count() != 1 {
			t.Fatalf("redelivery: %v, agent calls %d; want the failed turn skipped", err, s.agent.count())
		}
	})

	// A platform may redeliver for days (WhatsApp for up to about 7), and
	// ingress sends every duplicate again: the turn's claim is what keeps
	// such a late copy from asking the agent a second time.
	t.Run("RedeliveryAtTheEndOfTheRetryWindowIsSkipped", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, func(agent.TurnRequest) (agent.Reply, error) {
			return agent.Reply{}, &agent.Error{Kind: agent.KindPermanent, Status: http.StatusBadRequest, Err: agent.ErrStatus}
		})
		ev := event("late1")
		if err := s.handle(intent.Inbound{Event: ev, ReceivedAt: t0}); err != nil {
			t.Fatal(err)
		}
		s.clock.Advance(7*24*time.Hour + 12*time.Hour)
		if err := s.handle(intent.Inbound{Event: ev, ReceivedAt: s.clock.Now()}); err != nil || s.agent.count() != 1 {
			t.Fatalf("redelivery 7.5 days on: %v, agent calls %d; want the settled turn skipped", err, s.agent.count())
		}
	})

	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusGone} {
		t.Run(fmt.Sprint("Misconfigured", status, "IsRetried"), func(t *testing.T) {
			t.Parallel()
			s := newSetup(t, func(agent.TurnRequest) (agent.Reply, error) {
				return agent.Reply{}, &agent.Error{Kind: agent.KindPermanent, Status: status, Err: agent.ErrStatus}
			})
			ev := event("n1")
			herr := s.handle(intent.Inbound{Event: ev})
			d, ok := retryAfter(herr)
			if !ok || d < time.Second {
				t.Fatalf("Handle = %v, want a retry: a misconfiguration is asked again until the turn's age, never dropped", herr)
			}
			c, err := s.claim(ev)
			if err != nil || c.State != store.ClaimPending || !c.LeaseUntil.Equal(t0.Add(d)) {
				t.Fatalf("claim = %+v, %v; want released until its retry time", c, err)
			}
			s.clock.Advance(5 * time.Second)
			if err := s.handle(intent.Inbound{Event: ev, ReceivedAt: t0}); err == nil || s.agent.count() != 2 {
				t.Fatalf("retry: %v, agent calls %d; want the agent asked again", err, s.agent.count())
			}
		})
	}

	t.Run("TransientErrorRetriesAfterRetryAfter", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, func(agent.TurnRequest) (agent.Reply, error) {
			return agent.Reply{}, &agent.Error{Kind: agent.KindTransient, Status: http.StatusServiceUnavailable, RetryAfter: 20 * time.Second, Err: agent.ErrStatus}
		})
		err := s.handle(intent.Inbound{Event: event("t1")})
		if d, ok := retryAfter(err); !ok || d != 20*time.Second {
			t.Fatalf("Handle = %v, want a retry after the agent's 20 s", err)
		}
	})

	t.Run("BadRecords", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(1)))
		err := s.p.Handle(t.Context(), consumer.Record{SQSMessage: events.SQSMessage{Body: "{}"}})
		var dead *consumer.DeadLetterError
		if !errors.As(err, &dead) {
			t.Fatalf("bad body: %v, want DeadLetter: to the DLQ, alone", err)
		}
		ev := event("x1")
		ev.Platform, ev.Thread.Platform = message.Slack, message.Slack
		if err := s.handle(intent.Inbound{Event: ev}); err != nil || s.agent.count() != 0 {
			t.Fatalf("no channel for the platform: %v, agent calls %d; want dropped", err, s.agent.count())
		}
	})
}

func TestTurnPlans(t *testing.T) {
	t.Parallel()

	// Over a limit the reply is rejected whole; the person still gets the
	// configured error line, under every policy but silent.
	for name, policy := range map[string]envelope.ParseErrorPolicy{
		"OverLimitWithErrorMessageSendsOneErrorUnit": envelope.PolicyErrorMessage,
		"OverLimitWithFallbackTextSendsOneErrorUnit": envelope.PolicyFallbackText,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSetup(t, envelopeReply(bubbles(5))) // over the default 4
			s.p.Config.Envelope = envelope.Config{OnParseError: policy, ErrorMessage: "Sorry, try again."}
			ev := event("o1")
			if err := s.handle(intent.Inbound{Event: ev}); err != nil {
				t.Fatal(err)
			}
			in, err := s.intent(ev)
			if err != nil {
				t.Fatalf("no intent: %v", err)
			}
			if len(in.Units) != 1 || in.Units[0].ID != "error#1" || in.Units[0].Content.Text != "Sorry, try again." {
				t.Fatalf("units = %+v, want the one error line and nothing of the reply", in.Units)
			}
			if refs := s.outbound(); unitIDs(refs) != "error#1" {
				t.Fatalf("enqueued %v", refs)
			}
			if c, err := s.claim(ev); err != nil || c.State != store.ClaimDone {
				t.Fatalf("claim = %+v, %v; want done", c, err)
			}
		})
	}

	t.Run("OverLimitUnderSilentSendsNothing", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(5)))
		s.p.Config.Envelope = envelope.Config{OnParseError: envelope.PolicySilent}
		ev := event("o2")
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.intent(ev); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an over-limit plan was persisted: %v", err)
		}
		if c, err := s.claim(ev); err != nil || c.State != store.ClaimDone || c.Reason != "rejected" {
			t.Fatalf("claim = %+v, %v; want done, rejected", c, err)
		}
	})

	for name, answer := range map[string]func(agent.TurnRequest) (agent.Reply, error){
		"SilentEnvelope": envelopeReply(`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"never"}],"next":{"type":"silent"}}`),
		"NoContent":      func(agent.TurnRequest) (agent.Reply, error) { return agent.Reply{Status: http.StatusNoContent}, nil },
		"AcceptedAsync": func(agent.TurnRequest) (agent.Reply, error) {
			return agent.Reply{Status: http.StatusAccepted, Accepted: true}, nil
		},
	} {
		t.Run(name+"WritesNoIntent", func(t *testing.T) {
			t.Parallel()
			s := newSetup(t, answer)
			ev := event("q1")
			if err := s.handle(intent.Inbound{Event: ev}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.intent(ev); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("an intent was written: %v", err)
			}
			if refs := s.outbound(); len(refs) != 0 {
				t.Fatalf("enqueued %v", refs)
			}
			if c, err := s.claim(ev); err != nil || c.State != store.ClaimDone {
				t.Fatalf("claim = %+v, %v; want done", c, err)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c := turn.Config{}.WithDefaults()
	if c.ClaimTTL != store.DedupeTTL || c.ClaimLease != 90*time.Second || c.IntentTTL != 30*24*time.Hour || c.TypingTimeout != 2*time.Second {
		t.Fatalf("defaults = %+v", c)
	}
	if c.Envelope.MaxBubbles != envelope.DefaultMaxBubbles {
		t.Fatalf("envelope defaults not applied: %+v", c.Envelope)
	}
}

// TestAgentOutageWithinTheAgeLosesNothing (finding 8.3): the turn's budget
// was 20 receives of the inbound message (about an hour, and less when other
// messages of the thread rode along). An agent down for an hour is asked
// again with backoff, the event never reaches the DLQ, and its reply comes.
func TestAgentOutageWithinTheAgeLosesNothing(t *testing.T) {
	t.Parallel()
	var s *setup
	s = newSetup(t, func(agent.TurnRequest) (agent.Reply, error) {
		if s.clock.Now().Before(t0.Add(time.Hour)) {
			return agent.Reply{}, &agent.Error{Kind: agent.KindTransient, Status: http.StatusBadGateway, Err: agent.ErrStatus}
		}
		return envelopeReply(bubbles(2))(agent.TurnRequest{})
	})
	ev := event("o1")
	for tries := 0; ; tries++ {
		err := s.handle(intent.Inbound{Event: ev, ReceivedAt: t0})
		if err == nil {
			break
		}
		d, ok := retryAfter(err)
		if !ok || tries > 200 {
			t.Fatalf("try %d: %v, want a retry within the turn's age", tries, err)
		}
		s.clock.Advance(d)
	}
	if in, err := s.intent(ev); err != nil || len(in.Units) != 2 {
		t.Fatalf("intent = %+v, %v; want the reply planned after the outage", in, err)
	}
	if n := s.agent.count(); n < 10 {
		t.Fatalf("agent asked %d times over an hour's outage, want it asked again and again", n)
	}
}

// TestTurnPastItsAgeIsDeadLettered: past its age a failing turn goes to the
// DLQ for an operator, and its claim is free for the redrive.
func TestTurnPastItsAgeIsDeadLettered(t *testing.T) {
	t.Parallel()
	s := newSetup(t, func(agent.TurnRequest) (agent.Reply, error) {
		return agent.Reply{}, &agent.Error{Kind: agent.KindPermanent, Status: http.StatusUnauthorized, Err: agent.ErrStatus}
	})
	s.p.Config.MaxAge = time.Hour
	ev := event("g1")
	s.clock.Advance(61 * time.Minute)
	err := s.handle(intent.Inbound{Event: ev, ReceivedAt: t0})
	var dead *consumer.DeadLetterError
	if !errors.As(err, &dead) {
		t.Fatalf("Handle = %v, want DeadLetter past the turn's age", err)
	}
	if c, err := s.claim(ev); err != nil || c.Live(s.clock.Now()) {
		t.Fatalf("claim = %+v, %v; want it free for a redrive", c, err)
	}
}

// TestLongRetryAfterWaitsWithoutAskingTheAgent (finding 8.4): an agent's
// Retry-After past 12 hours brought the message back every visibility
// timeout (SQS refused the park), asking the agent each time. The claim
// holds the retry time: a message back early parks for the rest.
func TestLongRetryAfterWaitsWithoutAskingTheAgent(t *testing.T) {
	t.Parallel()
	s := newSetup(t, func(agent.TurnRequest) (agent.Reply, error) {
		return agent.Reply{}, &agent.Error{Kind: agent.KindTransient, Status: http.StatusServiceUnavailable, RetryAfter: 14 * time.Hour, Err: agent.ErrStatus}
	})
	s.p.Config.MaxAge = 24 * time.Hour
	ev := event("r1")
	if d, ok := retryAfter(s.handle(intent.Inbound{Event: ev, ReceivedAt: t0})); !ok || d != 14*time.Hour {
		t.Fatalf("first answer parks %v, want 14h (the consumer parks what SQS allows)", d)
	}
	s.clock.Advance(11*time.Hour + 55*time.Minute) // back as early as SQS returns it
	if d, ok := retryAfter(s.handle(intent.Inbound{Event: ev, ReceivedAt: t0})); !ok || d != 2*time.Hour+5*time.Minute {
		t.Fatalf("early return parks %v, want the remaining 2h05m", d)
	}
	if n := s.agent.count(); n != 1 {
		t.Fatalf("agent asked %d times, want once: the early return waits", n)
	}
}

// TestOversizedReplyNeverAsksAgain (finding 8.6): a reply too big to store
// failed the intent write on every retry, so the agent was asked about 20
// times and the event reached the DLQ with no word to the person. Over the
// plan's bounds the reply is rejected whole (the error line); a write the
// store refuses for its size is never retried either.
func TestOversizedReplyNeverAsksAgain(t *testing.T) {
	t.Parallel()
	t.Run("OverThePlanBounds", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, func(agent.TurnRequest) (agent.Reply, error) {
			return agent.Reply{Status: http.StatusOK, ContentType: "text/plain", Body: []byte(strings.Repeat("word ", 100_000))}, nil
		})
		ev := event("z1")
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatal(err)
		}
		in, err := s.intent(ev)
		if err != nil || len(in.Units) != 1 || in.Units[0].ID != "error#1" {
			t.Fatalf("intent = %+v, %v; want the error line only", in.Units, err)
		}
		if s.agent.count() != 1 {
			t.Fatalf("agent asked %d times", s.agent.count())
		}
	})
	t.Run("RefusedByTheStore", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bubbles(2)))
		s.p.Intents = &refusingIntents{Store: s.store, refuse: 1}
		ev := event("z2")
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatalf("Handle = %v, want nil: a refused write is not retried", err)
		}
		in, err := s.intent(ev)
		if err != nil || len(in.Units) != 1 || in.Units[0].Content.Text != envelope.DefaultErrorMessage {
			t.Fatalf("intent = %+v, %v; want the error line in place of the refused plan", in.Units, err)
		}
		if err := s.handle(intent.Inbound{Event: ev}); err != nil || s.agent.count() != 1 {
			t.Fatalf("redelivery: %v, agent asked %d times; want once", err, s.agent.count())
		}
	})
}

// refusingIntents refuses the first refuse intent writes as the store
// refuses an item over its size limit.
type refusingIntents struct {
	*dynamostore.Store
	mu     sync.Mutex
	refuse int
}

func (r *refusingIntents) CommitIntent(ctx context.Context, in intent.Intent, owner, outcome string, now time.Time) (intent.Intent, bool, error) {
	r.mu.Lock()
	refuse := r.refuse > 0
	r.refuse--
	r.mu.Unlock()
	if refuse {
		return intent.Intent{}, false, fmt.Errorf("dynamodb create intent: %w: item size has exceeded the maximum allowed size", store.ErrInvalid)
	}
	return r.Store.CommitIntent(ctx, in, owner, outcome, now)
}

// bigForm is an ask envelope of 20 fields of 25 options each, every title
// and value full of '<': about 99 KB as the agent writes it, far more once
// encoded as stored (json.Marshal writes each '<' as six bytes).
func bigForm() string {
	var props []string
	for f := range 20 {
		var opts []string
		for o := range 25 {
			opts = append(opts, fmt.Sprintf(`{"const":"%s%02d","title":"%s%02d"}`, strings.Repeat("<", 80), o, strings.Repeat("<", 88), o))
		}
		props = append(props, fmt.Sprintf(`"f%02d":{"type":"string","oneOf":[%s]}`, f, strings.Join(opts, ",")))
	}
	return `{"schema":"openab.turn.v1","messages":[{"id":"b1","text":"pick"}],"next":{"type":"ask","request":{"message":"Pick",` +
		`"requestedSchema":{"type":"object","properties":{` + strings.Join(props, ",") + `}}}}}`
}

// TestOversizedQuestionNeverAsksAgain_Finding4: the envelope's limits
// counted the bubbles' text, not the question's form, so a form of 99 KB
// whose record exceeds DynamoDB's 400 KB passed them; the store's refusal
// was retried like an outage, and the agent was asked again and again
// while the thread waited. The form is bounded, as stored, when the
// envelope is checked (the error line, once); and a question the store
// refuses all the same is permanent, never a second agent call.
func TestOversizedQuestionNeverAsksAgain_Finding4(t *testing.T) {
	t.Parallel()
	withQuestions := func(s *setup) {
		s.p.Questions = s.store
		s.p.Inbox = queue.New(s.env.SQS, s.env.Resources.InboundURL)
	}
	if n := len(bigForm()); n > 100_000 {
		t.Fatalf("the form is %d bytes, want about 99 KB", n)
	}
	t.Run("OverTheEnvelopesBound", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(bigForm()))
		withQuestions(s)
		ev := event("q1")
		for range 2 { // the first delivery, then a redelivery
			if err := s.handle(intent.Inbound{Event: ev}); err != nil {
				t.Fatalf("Handle = %v, want nil: nothing here gets better with a retry", err)
			}
		}
		in, err := s.intent(ev)
		if err != nil || len(in.Units) != 1 || in.Units[0].Content.Text != envelope.DefaultErrorMessage {
			t.Fatalf("intent = %+v, %v; want the error line only", in.Units, err)
		}
		if n := s.agent.count(); n != 1 {
			t.Fatalf("agent asked %d times, want once", n)
		}
	})
	t.Run("RefusedByTheStore", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, envelopeReply(`{"schema":"openab.turn.v1","messages":[{"id":"b1","text":"pick"}],"next":{"type":"ask","request":{"message":"Pick",`+
			`"requestedSchema":{"type":"object","properties":{"seat":{"type":"string","enum":["12A","12C"]}}}}}}`))
		withQuestions(s)
		s.p.Questions = refusingQuestions{s.store}
		ev := event("q2")
		for range 2 {
			if err := s.handle(intent.Inbound{Event: ev}); err != nil {
				t.Fatalf("Handle = %v, want nil: a refused write is not retried", err)
			}
		}
		in, err := s.intent(ev)
		if err != nil || len(in.Units) != 1 || in.Units[0].Content.Text != envelope.DefaultErrorMessage {
			t.Fatalf("intent = %+v, %v; want the error line in place of the refused plan", in.Units, err)
		}
		if n := s.agent.count(); n != 1 {
			t.Fatalf("agent asked %d times, want once", n)
		}
	})
}

// refusingQuestions refuses every question as the store refuses an item
// over its size limit.
type refusingQuestions struct{ *dynamostore.Store }

func (refusingQuestions) AskQuestion(context.Context, store.Question) (store.Question, bool, error) {
	return store.Question{}, false, fmt.Errorf("dynamodb ask question: %w: item size has exceeded the maximum allowed size", store.ErrInvalid)
}

// TestAnswerTooLargeToKeepIsRefusedOnce (finding 4's other half): a free-text
// answer that would take the question's record past DynamoDB's 400 KB was
// retried like an outage, blocking the thread. It is not taken: the person
// is told, the question stays open, and nothing is retried.
func TestAnswerTooLargeToKeepIsRefusedOnce(t *testing.T) {
	t.Parallel()
	s := newSetup(t, envelopeReply(`{"schema":"openab.turn.v1","messages":[],"next":{"type":"ask","request":{"message":"Any note?",`+
		`"requestedSchema":{"type":"object","properties":{"note":{"type":"string"}},"required":["note"]}}}}`))
	s.p.Questions = s.store
	s.p.Inbox = queue.New(s.env.SQS, s.env.Resources.InboundURL)
	if err := s.handle(intent.Inbound{Event: event("n1")}); err != nil {
		t.Fatal(err)
	}
	huge := event("n2")
	huge.Text = strings.Repeat("<", 70_000) // 420 KB as stored
	if err := s.handle(intent.Inbound{Event: huge}); err != nil {
		t.Fatalf("Handle = %v, want nil: the answer is refused, not retried", err)
	}
	in, err := s.intent(huge)
	if err != nil || len(in.Units) != 1 || in.Units[0].Content.Text != questions.NoticeTooLong {
		t.Fatalf("intent = %+v, %v; want the notice", in.Units, err)
	}
	q, err := s.store.GetQuestion(t.Context(), store.QuestionKey(huge.Thread))
	if err != nil || q.State != store.QuestionOpen {
		t.Fatalf("question %+v, %v; want it open", q, err)
	}
	if n := s.agent.count(); n != 1 {
		t.Fatalf("agent asked %d times, want once (the question)", n)
	}
}

// racingPark is a waiting turn's Park that runs before first, as if a post
// arrived just as the turn parked its message, and records each park.
type racingPark struct {
	mu     sync.Mutex
	before func()
	parks  []time.Duration
}

func (p *racingPark) ChangeVisibility(_ context.Context, _ string, d time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.before != nil {
		p.before()
		p.before = nil
	}
	p.parks = append(p.parks, d)
	return nil
}

// TestWaitingTurnParksItselfThenLooksAgain (ADR 0014): a turn whose agent
// answered 202 parks its own message until its next look (the deadline, or
// an hour) and leaves it parked (consumer.Parked, so the consumer does not
// change it again); a post recorded as it parked, whose wake the park may
// have undone, is planned in the same invocation.
func TestWaitingTurnParksItselfThenLooksAgain(t *testing.T) {
	t.Parallel()
	accepted := func(agent.TurnRequest) (agent.Reply, error) {
		return agent.Reply{Status: http.StatusAccepted, Accepted: true}, nil
	}
	t.Run("NoPostYet", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, accepted)
		park := &racingPark{}
		s.p.Awaits, s.p.Park = s.store, park
		s.p.Config.AsyncTimeout = 3 * time.Hour
		err := s.handle(intent.Inbound{Event: event("p1")})
		var parked *consumer.ParkedError
		if !errors.As(err, &parked) {
			t.Fatalf("Handle = %v, want the message left parked", err)
		}
		if !slices.Equal(park.parks, []time.Duration{time.Hour}) {
			t.Fatalf("parked %v, want once for an hour", park.parks)
		}
	})
	t.Run("PostWhileParking", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t, accepted)
		ev := event("p2")
		turnID := intent.IDFor(ev.Key())
		park := &racingPark{before: func() {
			if _, err := s.store.FinishAwait(t.Context(), turnID, store.AwaitPost{ID: "msg_1", ContentType: "text/plain", Body: []byte("found it"), At: t0}, t0); err != nil {
				t.Error(err)
			}
		}}
		s.p.Awaits, s.p.Park = s.store, park
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatalf("Handle = %v, want the post planned now", err)
		}
		in, err := s.intent(ev)
		if err != nil || len(in.Units) != 1 || in.Units[0].Content.Text != "found it" {
			t.Fatalf("intent = %+v, %v; want the posted reply", in.Units, err)
		}
	})
}

// settleFails is the store with its claim settles failing while fail is
// set, as a throttled write that the SDK gave up on.
type settleFails struct {
	*dynamostore.Store
	mu   sync.Mutex
	fail bool
}

func (s *settleFails) Settle(ctx context.Context, key, owner string, state store.ClaimState, reason string, now time.Time, ttl time.Duration) error {
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail {
		return errors.New("settle: throttled (ProvisionedThroughputExceededException)")
	}
	return s.Store.Settle(ctx, key, owner, state, reason, now, ttl)
}

// TestNothingToSendIsSettledBeforeTheMessageGoes_Seed582: a turn whose
// reply is nothing to send (silent) has its settled claim as its only
// record. When that settle failed, the turn still reported success, so
// its message was deleted and the claim stayed pending for good: an
// acknowledged message with neither a reply nor an outcome, and a late
// duplicate of it would run the turn again (the simulation's seed 582).
// Now the message is retried until the outcome is written.
func TestNothingToSendIsSettledBeforeTheMessageGoes_Seed582(t *testing.T) {
	t.Parallel()
	s := newSetup(t, envelopeReply(`{"schema":"openab.turn.v1","messages":[],"next":{"type":"silent"}}`))
	fs := &settleFails{Store: s.store, fail: true}
	s.p.Claims = fs
	ev := event("s582")
	if err := s.handle(intent.Inbound{Event: ev}); err == nil {
		t.Fatal("the turn reported success with its outcome unwritten: the message would be deleted")
	}
	if c, err := s.claim(ev); err != nil || c.State != store.ClaimPending {
		t.Fatalf("claim = %+v, %v; want still pending", c, err)
	}
	fs.mu.Lock()
	fs.fail = false
	fs.mu.Unlock()
	// The retry comes once the failed attempt's lease is over.
	s.clock.Advance(time.Hour)
	if err := s.handle(intent.Inbound{Event: ev}); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if c, err := s.claim(ev); err != nil || c.State != store.ClaimDone {
		t.Fatalf("claim = %+v, %v; want done after the retry", c, err)
	}
	if _, err := s.intent(ev); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an intent was written: %v", err)
	}
}
