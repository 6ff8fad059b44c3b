package operator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/operator"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

var thread = message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"}

// setup is a fresh table and queue pair on the emulators, an operator over
// them and a log file the test writes as the functions would.
type setup struct {
	t     *testing.T
	env   *emulatortest.Env
	store *dynamostore.Store
	op    *operator.Operator
	log   string
	now   time.Time
}

func newSetup(t *testing.T) *setup {
	t.Helper()
	env := emulatortest.New(t)
	s := &setup{t: t, env: env, store: dynamostore.New(env.DynamoDB, env.Resources.Table), log: filepath.Join(t.TempDir(), "parley-local.log"),
		now: time.Now().UTC().Truncate(time.Millisecond)}
	if err := os.WriteFile(s.log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	target, err := operator.TargetFromEnv(func(k string) string {
		for _, kv := range env.Resources.Env() {
			if name, v, _ := strings.Cut(kv, "="); name == k {
				return v
			}
		}
		return ""
	}, s.log)
	if err != nil {
		t.Fatal(err)
	}
	s.op = &operator.Operator{
		Target: target, Store: s.store, SQS: env.SQS, Logs: operator.FileLogs{Path: s.log},
		Platforms: map[message.Platform]message.Capabilities{message.Telegram: {}, message.LINE: {Idempotent: true}},
		Now:       func() time.Time { return s.now },
	}
	return s
}

// line appends a log line as a function writes it.
func (s *setup) line(at time.Time, level, msg, function string, kv ...any) {
	s.t.Helper()
	rec := map[string]any{"time": at.Format(time.RFC3339Nano), "level": level, "msg": msg, "function": function}
	for i := 0; i+1 < len(kv); i += 2 {
		rec[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(rec)
	f, err := os.OpenFile(s.log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		s.t.Fatal(err)
	}
}

// message stores what the functions store for one message of thread: its
// event key, its turn committed as an intent of texts, each unit then
// moved by last (nil leaves it pending).
func (s *setup) message(eventID string, at time.Time, texts []string, last ...func(intent.Unit, int, time.Time) intent.Transition) (string, intent.Intent) {
	s.t.Helper()
	ctx := context.Background()
	key := message.Event{Platform: thread.Platform, Account: thread.Account, EventID: eventID}.Key()
	if _, err := s.store.Claim(ctx, key, store.ClaimSpec{Owner: "ingress", Now: at, TTL: store.DedupeTTL, State: store.ClaimEnqueued}); err != nil {
		s.t.Fatal(err)
	}
	id := intent.IDFor(key)
	owner := "turn"
	if _, err := s.store.Claim(ctx, store.IntentKey(id), store.ClaimSpec{Owner: owner, Now: at, Lease: time.Minute, TTL: store.DedupeTTL, Sweep: true, Thread: thread, Origin: key}); err != nil {
		s.t.Fatal(err)
	}
	in := intent.Intent{ID: id, Origin: key, Thread: thread, CreatedAt: at, ExpiresAt: at.Add(30 * 24 * time.Hour), SweepAt: at.Add(intent.SweepGrace)}
	for i, text := range texts {
		in.Units = append(in.Units, intent.Unit{ID: fmt.Sprintf("b%d#1", i+1), Content: message.Text(text), State: message.UnitPending})
	}
	in.CreatedAt = at.Add(500 * time.Millisecond)
	in, _, err := s.store.CommitIntent(ctx, in, owner, "envelope", in.CreatedAt)
	if err != nil {
		s.t.Fatal(err)
	}
	for i, f := range last {
		if f == nil {
			continue
		}
		t := at.Add(time.Duration(i+1) * time.Second)
		if in, err = s.store.Apply(ctx, id, in.Closing(intent.Lease(in.Units[i], i, t, t.Add(time.Minute)))); err != nil {
			s.t.Fatal(err)
		}
		if in, err = s.store.Apply(ctx, id, in.Closing(f(in.Units[i], i, t))); err != nil {
			s.t.Fatal(err)
		}
	}
	return key, in
}

func sent(u intent.Unit, i int, at time.Time) intent.Transition {
	return intent.MarkSent(u, i, at, message.Receipt{MessageIDs: []string{fmt.Sprint(100 + i)}})
}

func held(u intent.Unit, i int, at time.Time) intent.Transition {
	return intent.MarkUnknown(u, i, at, "timeout after the request left", false)
}

func forbidden(u intent.Unit, i int, at time.Time) intent.Transition {
	return intent.MarkFailed(u, i, at, message.FailPermission, "Forbidden: bot was blocked by the user")
}

// TestTimelineReadsRecordsAndSaysWhatOnlyTheLogsHold: a message's
// timeline holds its event key's state, its turn's attempts, its intent
// and each unit as stored, and, read from the lines that carry its
// correlation id, the agent's latency and a failed call, each marked as
// from the log.
func TestTimelineReadsRecordsAndSaysWhatOnlyTheLogsHold(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	at := s.now.Add(-time.Minute)
	key, in := s.message("900001", at, []string{"on it", "done"}, sent, held)
	s.line(at.Add(-3*time.Second), "INFO", "event accepted", "ingress", "event_key", key, "thread_key", thread.Key(), "kind", "message", "result", "enqueued", "decision", "accepted")
	s.line(at.Add(-2*time.Second), "WARN", "agent call failed", "turn", "event_key", key, "intent_id", in.ID, "status", 503, "kind", "transient", "agent_ms", 12)
	s.line(at.Add(300*time.Millisecond), "INFO", "agent answered", "turn", "event_key", key, "intent_id", in.ID, "status", 200, "agent_ms", 42)
	s.line(at, "INFO", "event accepted", "ingress", "event_key", "evt#telegram#7000000001#other", "thread_key", thread.Key())

	tl, err := s.op.Message(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if tl.CorrelationID != key || tl.IntentID != in.ID || tl.Thread != thread.Key() {
		t.Fatalf("timeline of %s: %+v", key, tl)
	}
	var names []string
	for _, st := range tl.Steps {
		names = append(names, st.Name+"/"+st.Source)
	}
	want := []string{"enqueued/record", "received/log", "agent_called/log", "turn_claimed/record", "agent_called/log", "planned/record", "unit/record", "unit/record"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("steps %v, want %v", names, want)
	}
	if d := tl.Steps[4].Detail; !strings.Contains(d, "200") || !strings.Contains(d, "42 ms") {
		t.Errorf("agent step %q: want its status and latency from the log", d)
	}
	if len(tl.Units) != 2 || tl.Units[0].State != message.UnitSent || tl.Units[1].State != message.UnitUnknown || !tl.Units[1].NeedsOperator || tl.Units[0].Text != "on it" {
		t.Errorf("units %+v: want the first sent, the second held for an operator", tl.Units)
	}
	if !strings.Contains(strings.Join(tl.Notes, " "), "read from the function logs") {
		t.Errorf("notes %q: want the timeline to say which steps come from the logs", tl.Notes)
	}

	for _, bad := range []string{"900001", "int#" + in.ID, "evt#telegram#7000000001"} {
		if _, err := s.op.Message(context.Background(), bad); !errors.Is(err, operator.ErrAmbiguous) {
			t.Errorf("Message(%q): %v, want it refused as ambiguous", bad, err)
		}
	}
	if _, err := s.op.Message(context.Background(), "evt#telegram#7000000001#nothing"); !errors.Is(err, operator.ErrNotFound) {
		t.Errorf("Message of an unknown key: %v, want not found", err)
	}
}

// TestThreadListsItsMessagesFromTheLogs: the table has no index by thread;
// the logs' thread_key does, and each message found gets its timeline.
func TestThreadListsItsMessagesFromTheLogs(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	a, _ := s.message("910001", s.now.Add(-2*time.Minute), []string{"one"}, sent)
	b, _ := s.message("910002", s.now.Add(-time.Minute), []string{"two"}, sent)
	s.line(s.now.Add(-2*time.Minute), "INFO", "event accepted", "ingress", "event_key", a, "thread_key", thread.Key())
	s.line(s.now.Add(-time.Minute), "INFO", "event accepted", "ingress", "event_key", b, "thread_key", thread.Key())
	s.line(s.now.Add(-time.Minute), "INFO", "event accepted", "ingress", "event_key", "evt#telegram#7000000001#x", "thread_key", "telegram:7000000001:43")
	msgs, tls, err := s.op.Thread(context.Background(), thread.Key())
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].CorrelationID != a || msgs[1].CorrelationID != b || len(tls) != 2 || tls[1].Units[0].Text != "two" {
		t.Fatalf("thread: %+v", msgs)
	}
	if _, _, err := s.op.Thread(context.Background(), "42"); !errors.Is(err, operator.ErrAmbiguous) {
		t.Errorf("Thread(42): %v, want it refused as ambiguous", err)
	}
}

// TestAttentionOldestFirstAndAnOperatorsDecisions: held and failed units
// are listed oldest first; a resend of a held unit on a platform without
// idempotency says what it risks and changes nothing without yes, then
// goes back to pending and on the outbound queue; an abandon takes a
// failed unit off the list; each is safe to run twice.
func TestAttentionOldestFirstAndAnOperatorsDecisions(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	ctx := context.Background()
	_, older := s.message("920001", s.now.Add(-2*time.Hour), []string{"held one"}, held)
	_, newer := s.message("920002", s.now.Add(-time.Hour), []string{"fine", "failed one"}, sent, forbidden)
	heldKey, failedKey := intent.UnitKey(older.ID, "b1#1"), intent.UnitKey(newer.ID, "b2#1")

	items, _, err := s.op.Attention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].Key != heldKey || items[0].Kind != operator.KindHeldUnit || items[1].Key != failedKey || items[1].Kind != operator.KindFailedUnit {
		t.Fatalf("attention %+v: want the held unit, then the failed one", items)
	}

	var confirm *operator.ConfirmError
	if _, err := s.op.Resend(ctx, heldKey, false); !errors.As(err, &confirm) || !strings.Contains(confirm.Risk, "twice") {
		t.Fatalf("resend of a held Telegram unit without yes: %v, want what it risks", err)
	}
	if in, _ := s.store.GetIntent(ctx, older.ID); in.Units[0].State != message.UnitUnknown {
		t.Fatalf("unconfirmed resend changed the unit: %s", in.Units[0].State)
	}
	d, err := s.op.Resend(ctx, heldKey, true)
	if err != nil || d.Outcome != "resent" || d.After != message.UnitPending {
		t.Fatalf("resend --yes: %+v, %v", d, err)
	}
	refs := receiveAll(t, s.env, s.env.Resources.OutboundURL)
	if len(refs) != 1 || refs[0].Intent != older.ID || refs[0].Unit != "b1#1" || refs[0].Event != older.Origin {
		t.Fatalf("outbound after the resend: %+v, want one message naming the unit and its event", refs)
	}
	if d, err := s.op.Resend(ctx, heldKey, true); err != nil || d.Outcome != "already_pending" {
		t.Fatalf("the same resend again: %+v, %v; want already_pending", d, err)
	}

	d, err = s.op.Abandon(ctx, failedKey)
	if err != nil || d.Outcome != "abandoned" {
		t.Fatalf("abandon: %+v, %v", d, err)
	}
	if d, err := s.op.Abandon(ctx, failedKey); err != nil || d.Outcome != "already_abandoned" {
		t.Fatalf("the same abandon again: %+v, %v", d, err)
	}
	if items, _, _ := s.op.Attention(ctx); len(items) != 0 {
		t.Fatalf("attention after the decisions: %+v, want nothing", items)
	}
	for _, bad := range []string{"b1#1", "evt#telegram#1#2", newer.ID} {
		if _, err := s.op.Abandon(ctx, bad); !errors.Is(err, operator.ErrAmbiguous) {
			t.Errorf("Abandon(%q): %v, want it refused as ambiguous", bad, err)
		}
	}
	if _, err := s.op.Abandon(ctx, intent.UnitKey(newer.ID, "b1#1")); !errors.Is(err, operator.ErrAmbiguous) {
		t.Errorf("abandon of a sent unit: %v, want refused", err)
	}
}

// TestResendOnAnIdempotentPlatformNeedsNoYes: where the platform drops a
// copy sent under the unit's key, a resend risks nothing and asks nothing.
func TestResendOnAnIdempotentPlatformNeedsNoYes(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	in := intent.Intent{Thread: message.Thread{Platform: message.LINE, Account: "U1", Chat: "U2"}}
	if risk := s.op.ResendRisk(in, intent.Unit{State: message.UnitUnknown}); risk != "" {
		t.Errorf("LINE resend risk %q, want none", risk)
	}
	if risk := s.op.ResendRisk(intent.Intent{Thread: thread}, intent.Unit{State: message.UnitFailed, FailureClass: message.FailPermission}); risk != "" {
		t.Errorf("resend of a refused unit risk %q, want none: the platform refused it", risk)
	}
}

// TestStuckClaimIsListed: a turn claim pending past its lease is on the
// attention list until something settles it.
func TestStuckClaimIsListed(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	key := "evt#telegram#7000000001#930001"
	if _, err := s.store.Claim(context.Background(), store.IntentKey(intent.IDFor(key)), store.ClaimSpec{
		Owner: "gone", Now: s.now.Add(-10 * time.Minute), Lease: time.Minute, TTL: store.DedupeTTL, Sweep: true, Thread: thread, Origin: key,
	}); err != nil {
		t.Fatal(err)
	}
	items, _, err := s.op.Attention(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Kind != operator.KindStuckClaim || items[0].CorrelationID != key {
		t.Fatalf("attention %+v: want the stuck claim", items)
	}
}

type ref = intent.Ref

// receiveAll takes every message of a queue.
func receiveAll(t *testing.T, env *emulatortest.Env, url string) []ref {
	t.Helper()
	var out []ref
	for range 10 {
		got, err := env.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) == 0 {
			break
		}
		for _, m := range got.Messages {
			r, err := intent.DecodeRef([]byte(aws.ToString(m.Body)))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
			_, _ = env.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
		}
	}
	return out
}

// deadLetter puts an inbound event received at on the inbound DLQ, as the
// turn's consumer does.
func (s *setup) deadLetter(eventID string, at time.Time) string {
	s.t.Helper()
	return s.deadLetterIn(thread, eventID, at)
}

// deadLetterIn is deadLetter in thread th.
func (s *setup) deadLetterIn(th message.Thread, eventID string, at time.Time) string {
	s.t.Helper()
	ev := message.Event{Platform: th.Platform, Account: th.Account, EventID: eventID, Kind: message.KindMessage, Thread: th, Text: "hello", Time: at}
	body, err := intent.EncodeInbound(intent.Inbound{Event: ev, ReceivedAt: at})
	if err != nil {
		s.t.Fatal(err)
	}
	q := queue.New(s.env.SQS, s.env.Resources.InboundDLQURL)
	if err := q.Send(context.Background(), queue.Message{Group: th.Key(), Dedup: "dlq#" + eventID, Body: body}); err != nil {
		s.t.Fatal(err)
	}
	return ev.Key()
}

func (s *setup) visible(url string) int {
	s.t.Helper()
	out, err := s.env.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil {
		s.t.Fatal(err)
	}
	var n int
	fmt.Sscan(out.Attributes["ApproximateNumberOfMessages"], &n)
	return n
}

// TestRedriveRefusesAnOldMessage: a dead-letter queue holding a message
// made longer ago than the redrive's max age is not redriven at all, so
// the stale message never reaches its conversation; every message is
// visible again after the look, and the refusal names the old one.
func TestRedriveRefusesAnOldMessage(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	old := s.deadLetter("940001", s.now.Add(-15*time.Hour))
	s.deadLetter("940002", s.now.Add(-time.Minute))
	msgs, peek, err := s.op.DeadLetters(context.Background(), "inbound")
	if err != nil || len(msgs) == 0 || peek.Visible != 2 {
		t.Fatalf("list: %+v %+v %v", msgs, peek, err)
	}
	r, err := s.op.Redrive(context.Background(), "inbound", time.Hour)
	var refused *operator.RefusedError
	if !errors.As(err, &refused) || r.Outcome != "refused" {
		t.Fatalf("redrive: %+v, %v; want refused", r, err)
	}
	// fauxqs hands out one message per group: the young one waits behind
	// the old one, and a refusal names whichever it read.
	if len(r.Refused) != 1 || r.Refused[0].CorrelationID != old || r.Refused[0].Age < 15*time.Hour {
		t.Errorf("refused %+v, want the 15-hour-old message", r.Refused)
	}
	if n := s.visible(s.env.Resources.InboundDLQURL); n != 2 {
		t.Errorf("dead-letter queue holds %d visible after the refusal, want both, untouched", n)
	}
	if n := s.visible(s.env.Resources.InboundURL); n != 0 {
		t.Errorf("inbound holds %d after the refusal, want nothing replayed", n)
	}
	if _, err := s.op.Redrive(context.Background(), "nowhere", time.Hour); !errors.Is(err, operator.ErrAmbiguous) {
		t.Errorf("redrive of an unknown queue: %v, want refused", err)
	}
	if _, err := s.op.Redrive(context.Background(), "inbound", 0); !errors.Is(err, operator.ErrAmbiguous) {
		t.Errorf("redrive without a max age: %v, want refused", err)
	}
}

// TestRenderedTextIsInert: text from an agent reaches a terminal quoted,
// its control characters escaped.
func TestRenderedTextIsInert(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	operator.WriteTimeline(&b, operator.Timeline{CorrelationID: "evt#t#1#\x1b[2J", Units: []operator.UnitView{{Key: "i#b1#1", Text: "hi\x1b[31m red\r\n"}}})
	if strings.ContainsAny(b.String(), "\x1b\r") || !strings.Contains(b.String(), `"hi\x1b[31m red\r\n"`) {
		t.Fatalf("rendered %q: want the text quoted, escapes inert", b.String())
	}
}
