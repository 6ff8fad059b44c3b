package runner_test

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/message"
)

// Matchers for the durable steps, by the item they touch and the change.

func pkOf(key map[string]types.AttributeValue) string {
	s, _ := key["pk"].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

func value(vals map[string]types.AttributeValue, k string) (string, bool) {
	v, ok := vals[k]
	if !ok {
		return "", false
	}
	s, _ := v.(*types.AttributeValueMemberS)
	if s == nil {
		return "", true
	}
	return s.Value, true
}

// eventKeyPut matches ingress writing a person's event's dedupe key.
func eventKeyPut(in any) bool {
	p, ok := in.(*dynamodb.PutItemInput)
	return ok && strings.HasPrefix(pkOf(p.Item), "evt#")
}

// turnCommit matches the turn's commit: its intent written onto its claim.
func turnCommit(in any) bool {
	u, ok := in.(*dynamodb.UpdateItemInput)
	if !ok || !strings.HasPrefix(pkOf(u.Key), "int#") {
		return false
	}
	_, units := u.ExpressionAttributeValues[":c_units"]
	return units
}

// turnClaim matches the turn's claim of its intent's key: a lease set, and
// no unit's.
func turnClaim(in any) bool {
	u, ok := in.(*dynamodb.UpdateItemInput)
	if !ok || !strings.HasPrefix(pkOf(u.Key), "int#") || strings.Contains(aws.ToString(u.UpdateExpression), "#units[") {
		return false
	}
	_, lease := value(u.ExpressionAttributeValues, ":lease")
	return lease
}

// unitTransition matches a transition of unit 0 to state to.
func unitTransition(to message.UnitState) func(any) bool {
	return func(in any) bool {
		u, ok := in.(*dynamodb.UpdateItemInput)
		if !ok || !strings.HasPrefix(pkOf(u.Key), "int#") || !strings.Contains(aws.ToString(u.UpdateExpression), "#units[0]") {
			return false
		}
		got, _ := value(u.ExpressionAttributeValues, ":to")
		return got == string(to)
	}
}

// TestCrashAtEveryDurableStep crashes Parley — a failed call, or a call that
// succeeded but whose answer was lost — at each durable step boundary, lets
// the platform and the queues retry, and checks the reply arrives exactly once
// (I1, I2, I4). Where the outcome of a send is truly unknown, the documented
// policy decides: hold (the default) keeps the unit for an operator, resend
// sends it again and says so.
func TestCrashAtEveryDurableStep(t *testing.T) {
	t.Parallel()
	type scenario struct {
		name   string
		faults []awsfault.Fault
		// platform, when set, is a fault at the fake platform instead.
		platform *fakeplatform.Fault
		policy   string
		// retry is the platform's behaviour after the first answer.
		retry func(t *testing.T, h *harness, update []byte)
		// want is the texts the platform ends with, in order.
		want []string
		// unit0 is the first unit's final state.
		unit0 message.UnitState
	}
	retryUntilOK := func(t *testing.T, h *harness, update []byte) {
		for range 3 {
			if status, _ := h.postTelegram(update); status == http.StatusOK {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatal("the platform's retries never got a 200")
	}
	two := []string{"x1", "x2"}
	scenarios := []scenario{
		{name: "IngressEnqueueFailsAfterTheDedupeWrite",
			faults: []awsfault.Fault{{Op: "SQS.SendMessage"}},
			retry:  retryUntilOK, want: two, unit0: message.UnitSent},
		// The enqueue fails and so does forgetting the dedupe key: the
		// retry finds the key, and sends the event before it answers
		// "duplicate".
		{name: "IngressCrashesHoldingTheDedupeKey",
			faults: []awsfault.Fault{{Op: "SQS.SendMessage"}, {Op: "DynamoDB.DeleteItem"}},
			retry:  retryUntilOK, want: two, unit0: message.UnitSent},
		{name: "IngressEnqueuedButTheAnswerWasLost",
			faults: []awsfault.Fault{{Op: "SQS.SendMessage", After: true}},
			retry:  retryUntilOK, want: two, unit0: message.UnitSent},
		// The dedupe key is written but its answer lost, and the send
		// beside it succeeded: the event is durable, and answered so.
		{name: "IngressKeyWrittenButTheAnswerWasLost",
			faults: []awsfault.Fault{{Op: "DynamoDB.PutItem", Match: eventKeyPut, After: true}},
			want:   two, unit0: message.UnitSent},
		// The key is written but its answer lost, and the send beside it
		// fails: the retry, finding the key, enqueues the event.
		{name: "IngressKeyWrittenAnswerLostAndTheSendFails",
			faults: []awsfault.Fault{{Op: "DynamoDB.PutItem", Match: eventKeyPut, After: true}, {Op: "SQS.SendMessage"}},
			retry:  retryUntilOK, want: two, unit0: message.UnitSent},
		// The claim is the intent: the commit writes the plan and settles
		// the claim at once, and a retry finds both and only enqueues.
		{name: "TurnCrashesAfterTheCommit",
			faults: []awsfault.Fault{{Op: "DynamoDB.UpdateItem", Match: turnCommit, After: true}},
			want:   two, unit0: message.UnitSent},
		// The claim's write fails: nothing was claimed, and the retry
		// claims and asks the agent once.
		{name: "TurnClaimFails",
			faults: []awsfault.Fault{{Op: "DynamoDB.UpdateItem", Match: turnClaim}},
			want:   two, unit0: message.UnitSent},
		{name: "TurnEnqueueFails",
			faults: []awsfault.Fault{{Op: "SQS.SendMessageBatch"}},
			want:   two, unit0: message.UnitSent},
		{name: "TurnEnqueuedButTheAnswerWasLost",
			faults: []awsfault.Fault{{Op: "SQS.SendMessageBatch", After: true}},
			want:   two, unit0: message.UnitSent},
		{name: "DeliveryLeaseFails",
			faults: []awsfault.Fault{{Op: "DynamoDB.UpdateItem", Match: unitTransition(message.UnitSending)}},
			want:   two, unit0: message.UnitSent},
		{name: "DeliveryReceiptWrittenButTheAnswerWasLost",
			faults: []awsfault.Fault{{Op: "DynamoDB.UpdateItem", Match: unitTransition(message.UnitSent), After: true}},
			want:   two, unit0: message.UnitSent},
		{name: "DeliveryCrashesBetweenSendAndReceiptHold",
			faults: []awsfault.Fault{{Op: "DynamoDB.UpdateItem", Match: unitTransition(message.UnitSent)}},
			want:   two, unit0: message.UnitUnknown},
		{name: "DeliveryCrashesBetweenSendAndReceiptResend", policy: "resend",
			faults: []awsfault.Fault{{Op: "DynamoDB.UpdateItem", Match: unitTransition(message.UnitSent)}},
			want:   []string{"x1", "x1", "x2"}, unit0: message.UnitSent},
		{name: "PlatformAnswerLostHold",
			platform: &fakeplatform.Fault{Platform: message.Telegram, DropResponseAfterCommit: true},
			want:     two, unit0: message.UnitUnknown},
		{name: "PlatformAnswerLostResend", policy: "resend",
			platform: &fakeplatform.Fault{Platform: message.Telegram, DropResponseAfterCommit: true},
			want:     []string{"x1", "x1", "x2"}, unit0: message.UnitSent},
	}
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, options{env: map[string]string{"PARLEY_UNKNOWN_SEND_POLICY": sc.policy, "PARLEY_SEND_TIMEOUT": "1s"}})
			var fired []func() int
			for _, f := range sc.faults {
				fired = append(fired, h.faults.Add(f))
			}
			if sc.platform != nil {
				h.fake.Inject(*sc.platform)
			}
			update := telegramUpdate(6000+i, int64(600+i), "/bubbles x1 | x2")
			status, body := h.postTelegram(update)
			if sc.retry != nil {
				if status == http.StatusOK {
					t.Fatalf("first delivery: %d %s; want a 5xx that makes the platform retry", status, body)
				}
				sc.retry(t, h, update)
			} else if status != http.StatusOK {
				t.Fatalf("webhook: %d %s", status, body)
			}
			h.waitDelivered(len(sc.want), 45*time.Second)
			h.quiesce(30 * time.Second)

			for k, f := range fired {
				if f() != 1 {
					t.Fatalf("fault %d fired %d times, want 1: the scenario did not happen", k, f())
				}
			}
			if got := texts(h.fake.Delivered()); !slices.Equal(got, sc.want) {
				t.Fatalf("platform got %q, want %q", got, sc.want)
			}
			if h.agent.calls() != 1 {
				t.Fatalf("%d agent calls, want 1", h.agent.calls())
			}
			in := h.intentFor("evt#telegram#" + tgBotID + "#" + strconv.Itoa(6000+i))
			if got := in.Units[0].State; got != sc.unit0 {
				t.Fatalf("first unit ended %s, want %s", got, sc.unit0)
			}
			if sc.unit0 == message.UnitSent && sc.policy == "resend" && !in.Units[0].Resent {
				t.Fatal("a resent unit is not marked as resent")
			}
			if sc.unit0 == message.UnitUnknown && len(h.logs.lines("msg", "unit outcome unknown: held for an operator")) == 0 &&
				len(h.logs.lines("msg", "unit abandoned mid-send: outcome unknown")) == 0 {
				t.Fatal("a held unit was not logged")
			}
		})
	}
}

// lostWrites records, by writeLabel, the conditional writes whose first
// answer was lost after DynamoDB applied it (options.lostAnswers).
type lostWrites struct {
	mu   sync.Mutex
	seen map[string]int
}

func (l *lostWrites) add(in any) {
	l.mu.Lock()
	l.seen[writeLabel(in)]++
	l.mu.Unlock()
}

func (l *lostWrites) labels() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(maps.Keys(l.seen))
}

// writeLabel names a conditional DynamoDB write by its operation, its key's
// kind (evt#, int#, q#, await#, tri#) and, for an update, what it changes;
// an unconditional write is "".
func writeLabel(in any) string {
	kind := func(key map[string]types.AttributeValue) string {
		pk := pkOf(key)
		if i := strings.IndexByte(pk, '#'); i >= 0 {
			return pk[:i+1]
		}
		return pk
	}
	switch w := in.(type) {
	case *dynamodb.PutItemInput:
		if w.ConditionExpression != nil {
			return "put " + kind(w.Item)
		}
	case *dynamodb.DeleteItemInput:
		if w.ConditionExpression != nil {
			return "delete " + kind(w.Key)
		}
	case *dynamodb.UpdateItemInput:
		if w.ConditionExpression != nil {
			return "update " + kind(w.Key) + " " + updateKind(w)
		}
	}
	return ""
}

// updateKind is which of the store's writes an UpdateItem is, by the names
// and values it uses.
func updateKind(u *dynamodb.UpdateItemInput) string {
	expr := aws.ToString(u.UpdateExpression)
	name := func(n string) bool { _, ok := u.ExpressionAttributeNames[n]; return ok }
	val := func(v string) bool { _, ok := u.ExpressionAttributeValues[v]; return ok }
	switch {
	case strings.Contains(expr, "#units["):
		to, _ := value(u.ExpressionAttributeValues, ":to")
		return "unit " + to
	case name("#swt"):
		return "sweep"
	case val(":c_units"):
		return "commit"
	case name("#claimed"):
		return "claim"
	case name("#settled") && name("#body"):
		return "defer"
	case name("#settled"):
		return "settle"
	case val(":until"):
		return "release"
	case val(":deferred"):
		return "undefer"
	case name("#pl"):
		return "take"
	case name("#gb"):
		return "give-back"
	case val(":final"):
		return "finish"
	case name("#posts"):
		return "post"
	case val(":expired"):
		return "expire"
	case name("#handle"):
		return "handle"
	}
	return "other"
}

// TestAppliedAnswerLostAtEveryConditionalWrite runs Parley's flows with the
// first answer of every conditional DynamoDB write lost after DynamoDB
// applied it, which the SDK's retryer sends again (awsfault.LostAnswer):
// each retry meets its own write. The flows must end exactly as they do
// without the fault (their own tests' checks), and every kind of write
// named must have been made so. A retry taken for someone else's write
// would show: a unit leased "by another worker" held in unknown_after_send
// though never sent, a multi-select toggled twice, a take refused by its
// own cooldown, an await finished "by another post".
func TestAppliedAnswerLostAtEveryConditionalWrite(t *testing.T) {
	t.Parallel()
	for _, sc := range []struct {
		name string
		run  func(t *testing.T, lost bool) *harness
		want []string
	}{
		{"Bubbles", testTelegramUpdateBecomesPacedBubbles,
			[]string{"put evt#", "update int# claim", "update int# commit", "update int# unit sending", "update int# unit sent"}},
		{"MultiSelect", testQuestionFreeTextAndMultiSelect,
			[]string{"put q#", "update int# claim", "update int# commit", "update int# unit sent"}},
		{"SupersedeAndExpiry", testQuestionSkipSupersedeAndExpiry,
			[]string{"put q#", "update int# unit sent"}},
		{"AsyncReply", testAsyncReply,
			[]string{"put await#", "update await# finish", "update int# release"}},
		{"AsyncSequential", testAsyncSequential,
			[]string{"put await#", "update await# post", "update await# finish"}},
		{"AsyncTimeout", testAsyncReplyTimesOut,
			[]string{"put await#", "update await# expire", "update int# settle"}},
		{"DeferredEvent", testFourteenHourDeferralIsDeliveredAtItsTime,
			[]string{"update evt# claim", "update tri# take", "update evt# defer", "update evt# undefer"}},
		{"SweeperRedrive", testSweeperRedrivesUnitsDeletedByHand,
			[]string{"update int# sweep", "update int# unit sent"}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			h := sc.run(t, true)
			got := h.lost.labels()
			for _, w := range sc.want {
				if !slices.Contains(got, w) {
					t.Errorf("no %q write had its answer lost; lost: %q", w, got)
				}
			}
			t.Logf("writes whose answer was lost and retried: %q", got)
		})
	}
}
