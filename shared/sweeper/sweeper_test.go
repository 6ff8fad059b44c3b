package sweeper_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/syncbuf"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/localstack/callcount"
	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/metrics"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/sweeper"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

var (
	t0     = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	thread = message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"}
)

// setup is a sweeper on its own table and queues, its DynamoDB calls counted.
type setup struct {
	t     *testing.T
	env   *emulatortest.Env
	store *dynamostore.Store
	calls *callcount.Counter
	now   time.Time
	p     *sweeper.Processor
	logs  *syncbuf.Buffer
}

func newSetup(t *testing.T) *setup {
	env := emulatortest.New(t)
	cfg, calls := callcount.Attach(env.AWS)
	s := &setup{t: t, env: env, store: dynamostore.New(env.DynamoDB, env.Resources.Table), calls: calls, now: t0, logs: &syncbuf.Buffer{}}
	s.p = &sweeper.Processor{
		Store:    dynamostore.New(dynamodb.NewFromConfig(cfg), env.Resources.Table),
		Inbound:  queue.New(env.SQS, env.Resources.InboundURL),
		Outbound: queue.New(env.SQS, env.Resources.OutboundURL),
		Now:      func() time.Time { return s.now },
		Log:      slog.New(slog.NewJSONHandler(s.logs, nil)),
	}
	return s
}

func (s *setup) run() sweeper.Report {
	s.t.Helper()
	r, err := s.p.Run(s.t.Context())
	if err != nil {
		s.t.Fatalf("sweep: %v", err)
	}
	return r
}

// take receives and deletes every message of url.
func (s *setup) take(url string) []string {
	s.t.Helper()
	var bodies []string
	for {
		out, err := s.env.SQS.ReceiveMessage(s.t.Context(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		})
		if err != nil {
			s.t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return bodies
		}
		for _, m := range out.Messages {
			bodies = append(bodies, m.Attributes["MessageGroupId"]+" "+aws.ToString(m.Body))
			if _, err := s.env.SQS.DeleteMessage(s.t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				s.t.Fatal(err)
			}
		}
	}
}

// findings counts the Sweep metric's findings in the logs.
func (s *setup) findings() map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
		points, err := metrics.Decode([]byte(line))
		if err != nil {
			continue
		}
		for _, p := range points {
			if p.Name == metrics.Sweep {
				out[p.Dims[0][metrics.DimFinding]]++
			}
		}
	}
	return out
}

func (s *setup) intent(id string, units ...intent.Unit) intent.Intent {
	s.t.Helper()
	in := intent.Intent{ID: id, Origin: "evt#" + id, Thread: thread, Units: units, CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour), SweepAt: t0.Add(intent.SweepGrace)}
	if _, _, err := s.store.CreateIntent(s.t.Context(), in); err != nil {
		s.t.Fatal(err)
	}
	return in
}

// deferred holds a proactive event with text on its claim until due, as
// ingress does in quiet hours.
func (s *setup) deferred(id, text string, due time.Time) message.Event {
	s.t.Helper()
	ev := message.Event{Platform: message.Events, Account: "cron", EventID: id, Kind: message.KindProactive, Thread: thread, Text: text}
	body, err := intent.EncodeInbound(intent.Inbound{Event: ev, ReceivedAt: due})
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.store.Claim(s.t.Context(), ev.Key(), store.ClaimSpec{Owner: "a", Now: t0, Lease: time.Minute, TTL: 7 * 24 * time.Hour}); err != nil {
		s.t.Fatal(err)
	}
	if err := s.store.Defer(s.t.Context(), ev.Key(), "a", body, due, t0, 7*24*time.Hour); err != nil {
		s.t.Fatal(err)
	}
	return ev
}

func pending(id string) intent.Unit {
	return intent.Unit{ID: id, Content: message.Text("text " + id), State: message.UnitPending}
}

// TestNothingToDoCostsOneQuery: a run with nothing due is one Query.
func TestNothingToDoCostsOneQuery(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	s.intent("fresh", pending("a#1")) // not due for two minutes
	s.calls.Reset()
	if r := s.run(); r.Due != 0 {
		t.Fatalf("report %+v, want nothing due", r)
	}
	if got := s.calls.Snapshot(); len(got) != 1 || got["DynamoDB.Query"] != 1 {
		t.Fatalf("calls %v, want exactly one DynamoDB Query", got)
	}
}

// TestRedrivesAnIntentNothingWillDeliver: an intent whose outbound messages
// are gone (deleted by hand, dead-lettered) is re-driven once it is due, by
// one message naming its last unit on the thread's group, and looked at
// again later, not every run.
func TestRedrivesAnIntentNothingWillDeliver(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	sent := pending("a#1")
	sent.State, sent.Attempt, sent.SentAt = message.UnitSent, 1, t0
	s.intent("lost", sent, pending("b#1"), pending("c#1"))
	s.now = t0.Add(intent.SweepGrace + time.Second)
	if r := s.run(); r.Redriven != 1 || r.Due != 1 {
		t.Fatalf("report %+v, want the intent re-driven", r)
	}
	got := s.take(s.env.Resources.OutboundURL)
	want := thread.Key() + " " + string(intent.EncodeRefOf(intent.Intent{ID: "lost", Origin: "evt#lost"}, "c#1"))
	if len(got) != 1 || got[0] != want {
		t.Fatalf("outbound = %q, want one ref to the last unit in the thread's group: %q", got, want)
	}
	if r := s.run(); r.Due != 0 {
		t.Fatalf("second run %+v, want nothing due so soon", r)
	}
	if f := s.findings(); f[sweeper.FindingRedriven] != 1 {
		t.Fatalf("findings %v", f)
	}
}

// TestWaitingUnitsOnlyMoveTheirTime: a unit parked until its retry time, or
// leased right now, is not stuck: its intent is rescheduled, nothing sent.
func TestWaitingUnitsOnlyMoveTheirTime(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	parked := pending("a#1")
	parked.Attempt, parked.FailureClass, parked.NextAt = 3, message.FailRateLimit, t0.Add(time.Hour)
	s.intent("parked", parked)
	leased := pending("a#1")
	leased.State, leased.Attempt, leased.LeaseUntil = message.UnitSending, 1, t0.Add(10*time.Minute)
	s.intent("leased", leased)
	s.now = t0.Add(5 * time.Minute)
	if r := s.run(); r.Rescheduled != 2 || r.Redriven != 0 {
		t.Fatalf("report %+v, want both rescheduled", r)
	}
	if got := s.take(s.env.Resources.OutboundURL); len(got) != 0 {
		t.Fatalf("sent %v", got)
	}
	s.now = t0.Add(time.Hour + intent.SweepGrace + time.Second)
	if r := s.run(); r.Redriven != 2 {
		t.Fatalf("report %+v, want both re-driven once their time passed with no progress", r)
	}
}

// TestClosedAndHeldIntentsLeaveTheList: an intent whose units are all done
// leaves the list; one held in unknown_after_send is reported.
func TestClosedAndHeldIntentsLeaveTheList(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	held := pending("a#1")
	held.State, held.Attempt = message.UnitUnknown, 1
	s.intent("held", held)
	s.now = t0.Add(time.Hour)
	if r := s.run(); r.Closed != 1 || r.HeldUnknown != 1 || r.Redriven != 0 {
		t.Fatalf("report %+v, want it reported and taken off", r)
	}
	if r := s.run(); r.Due != 0 {
		t.Fatalf("second run %+v", r)
	}
	if f := s.findings(); f[sweeper.FindingHeldUnknown] != 1 {
		t.Fatalf("findings %v", f)
	}
}

// TestStuckTurnClaimIsReportedOnce: a turn claim still pending past its lease
// is reported, once: a turn's claim on its intent's key before it commits,
// and a "turn#" claim of the previous release.
func TestStuckTurnClaimIsReportedOnce(t *testing.T) {
	t.Parallel()
	for _, key := range []string{store.IntentKey("i-stuck"), "turn#evt#x"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			s := newSetup(t)
			if _, err := s.store.Claim(t.Context(), key, store.ClaimSpec{Owner: "a", Now: t0, Lease: 90 * time.Second, TTL: time.Hour, Sweep: true}); err != nil {
				t.Fatal(err)
			}
			s.now = t0.Add(time.Minute)
			if r := s.run(); r.Due != 0 {
				t.Fatalf("report %+v, want nothing before the lease end + grace", r)
			}
			s.now = t0.Add(90*time.Second + store.SweepGrace)
			if r := s.run(); r.StuckClaims != 1 || r.Closed != 1 {
				t.Fatalf("report %+v, want the claim reported and taken off", r)
			}
			if r := s.run(); r.Due != 0 {
				t.Fatalf("second run %+v", r)
			}
			if !strings.Contains(s.logs.String(), `"claim_key":"`+key+`"`) || s.findings()[sweeper.FindingStuckClaim] != 1 {
				t.Fatalf("logs lack the finding:\n%s", s.logs.String())
			}
		})
	}
}

// TestDeferredEventIsEnqueuedAtItsTimeOnce: a deferred event is enqueued
// when due, on its thread's group, under its event key, once, even when two
// sweeps race.
func TestDeferredEventIsEnqueuedAtItsTimeOnce(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	due := t0.Add(14 * time.Hour)
	ev := s.deferred("d1", "wake up", due)
	s.now = due.Add(-time.Second)
	if r := s.run(); r.Undeferred != 0 {
		t.Fatalf("report %+v before its time", r)
	}
	s.now = due
	var wg sync.WaitGroup
	reports := make([]sweeper.Report, 2)
	for i := range reports {
		wg.Go(func() { reports[i], _ = s.p.Run(t.Context()) })
	}
	wg.Wait()
	got := s.take(s.env.Resources.InboundURL)
	if len(got) != 1 || !strings.HasPrefix(got[0], thread.Key()+" ") {
		t.Fatalf("inbound = %q, want the event once, in its thread's group", got)
	}
	var in intent.Inbound
	if err := json.Unmarshal([]byte(strings.TrimPrefix(got[0], thread.Key()+" ")), &in); err != nil || in.Event.EventID != "d1" {
		t.Fatalf("enqueued %q (%v)", got[0], err)
	}
	c, err := s.store.GetClaim(t.Context(), ev.Key(), due)
	if err != nil || c.State != store.ClaimEnqueued {
		t.Fatalf("claim = %+v, %v; want enqueued", c, err)
	}
	if n := reports[0].Undeferred + reports[1].Undeferred; n < 1 {
		t.Fatalf("reports %+v", reports)
	}

}

// TestFailingItemNeverBlocksTheOnesBehind_Finding1: a deferred event the
// queue refuses for good (here, over its maximum size) sat at the head of the
// sweep index's bounded query on every run, so nothing due after it was ever
// looked at. A run now sets an item it could not mend back, behind the
// others, and the event after it is enqueued.
func TestFailingItemNeverBlocksTheOnesBehind_Finding1(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	s.p.Limit = 1
	s.deferred("poison", strings.Repeat("x", 300<<10), t0.Add(time.Minute)) // over the queue's 256 KiB
	s.deferred("next", "wake up", t0.Add(2*time.Minute))
	s.now = t0.Add(3 * time.Minute)
	for range 3 {
		_, _ = s.p.Run(t.Context()) // the poison's failure is reported; the run goes on
	}
	got := s.take(s.env.Resources.InboundURL)
	if len(got) != 1 || !strings.Contains(got[0], `"event_id":"next"`) {
		t.Fatalf("inbound = %.200q, want the event due after the one the queue refuses", got)
	}
	if !strings.Contains(s.logs.String(), "set back") {
		t.Errorf("no line says the failing item was set back:\n%s", s.logs.String())
	}
}
