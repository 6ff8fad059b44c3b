package ingress_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// statusRig is a rig whose pipeline applies statuses, on an intent of two
// units to thread 42: the first sent as "wamid.A", the second leased.
func statusRig(t *testing.T) (*rig, intent.Intent) {
	t.Helper()
	b := newRig(t, &scriptReceiver{})
	b.pipeline.Reports = b.pipeline.Claims.(*dynamostore.Store)
	th := humanEvent("x").Thread
	in := intent.Intent{ID: intent.IDFor("evt#" + t.Name()), Origin: "evt#" + t.Name(), Thread: th, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	for _, id := range []string{"b1#1", "b2#1"} {
		in.Units = append(in.Units, intent.Unit{ID: id, Content: message.Text("x"), State: message.UnitPending})
	}
	ctx := t.Context()
	if _, _, err := b.store.CreateIntent(ctx, in); err != nil {
		t.Fatal(err)
	}
	steps := []func(intent.Intent) intent.Transition{
		func(in intent.Intent) intent.Transition { return intent.Lease(in.Units[0], 0, t0, t0.Add(time.Minute)) },
		func(in intent.Intent) intent.Transition {
			return intent.MarkSent(in.Units[0], 0, t0, message.Receipt{MessageIDs: []string{"wamid.A"}})
		},
		func(in intent.Intent) intent.Transition { return intent.Lease(in.Units[1], 1, t0, t0.Add(time.Minute)) },
	}
	for _, step := range steps {
		var err error
		if in, err = b.store.Apply(ctx, in.ID, step(in)); err != nil {
			t.Fatal(err)
		}
	}
	b.calls.Reset()
	return b, in
}

func statusOf(in intent.Intent, unit, wamid, state string) message.Event {
	st := message.Status{MessageID: wamid, State: state, Tag: intent.UnitKey(in.ID, unit)}
	if state == message.StatusFailed {
		st.Code = "131026"
	}
	return message.Event{Platform: in.Thread.Platform, Account: in.Thread.Account, EventID: wamid + ":" + state,
		Kind: message.KindStatus, Thread: in.Thread, Status: &st, Time: t0}
}

// A status is applied at ingress: one read and, when it changes the unit,
// one conditional write; no dedupe key, no queue message, no turn.
func TestStatusesAppliedAtIngress(t *testing.T) {
	t.Parallel()
	b, in := statusRig(t)
	delivered := statusOf(in, "b1#1", "wamid.A", message.StatusDelivered)
	a := decodeAck(t, b.postScript(script{Events: []message.Event{delivered}}))
	if got := a.results(); got != "wamid.A:delivered=recorded(status_recorded)" {
		t.Fatalf("ack %s", got)
	}
	if got := b.calls.Snapshot(); got["DynamoDB.GetItem"] != 1 || got["DynamoDB.UpdateItem"] != 1 || b.awsCalls() != 2 {
		t.Fatalf("calls %v: want one read and one write", got)
	}
	// The same status again (Meta retries) reads and writes nothing.
	b.calls.Reset()
	a = decodeAck(t, b.postScript(script{Events: []message.Event{delivered}}))
	if got := a.results(); got != "wamid.A:delivered=recorded(status_duplicate)" || b.awsCalls() != 1 {
		t.Fatalf("ack %s after %v calls: want a duplicate on one read", got, b.calls.Snapshot())
	}
	if _, err := b.claim(delivered); err == nil {
		t.Fatal("a status wrote a dedupe key")
	}
	if q := b.queued(); len(q) != 0 {
		t.Fatalf("%d statuses queued", len(q))
	}
	got, err := b.store.GetIntent(t.Context(), in.ID)
	if err != nil || got.Units[0].Reported != message.StatusDelivered {
		t.Fatalf("unit %+v, %v: want delivered", got.Units[0], err)
	}
}

// A failure reported before its unit's receipt is queued in its intent's
// own group, never its thread's; a status for an unknown unit changes
// nothing and is answered.
func TestStatusesThatMustWait(t *testing.T) {
	t.Parallel()
	b, in := statusRig(t)
	early := statusOf(in, "b2#1", "wamid.B", message.StatusFailed)
	unknown := statusOf(in, "b7#1", "wamid.C", message.StatusFailed)
	a := decodeAck(t, b.postScript(script{Events: []message.Event{early, unknown}}))
	if got := a.results(); got != "wamid.B:failed=enqueued(status_wait) wamid.C:failed=recorded(status_unmatched)" {
		t.Fatalf("ack %s", got)
	}
	if n := b.calls.Total(func(op string) bool { return strings.HasPrefix(op, "DynamoDB.") && op != "DynamoDB.GetItem" }); n != 0 {
		t.Fatalf("%d writes: %v", n, b.calls.Snapshot())
	}
	q := b.queued()
	if len(q) != 1 || q[0].group != ingress.StatusGroup(in.ID) || q[0].group == in.Thread.Key() || q[0].dedup != message.DedupID(early.Key()) || q[0].in.Event.Status.Tag != early.Status.Tag {
		t.Fatalf("queued %+v: want the early failure alone, in its intent's group", q)
	}
	if got, _ := b.store.GetIntent(t.Context(), in.ID); got.Units[1].State != message.UnitSending {
		t.Fatalf("the early failure moved its unit to %s", got.Units[1].State)
	}
}

// A store that cannot be read refuses the request (503): the platform
// retries, and nothing was written.
func TestStatusStoreDownIsRetried(t *testing.T) {
	t.Parallel()
	b, in := statusRig(t)
	fired := b.faults.Add(awsfault.Fault{Op: "DynamoDB.GetItem", Times: 1 << 10})
	w := b.postScript(script{Events: []message.Event{statusOf(in, "b1#1", "wamid.A", message.StatusRead)}})
	if w.Code != http.StatusServiceUnavailable || fired() == 0 {
		t.Fatalf("status %d: %s; want 503", w.Code, w.Body)
	}
	if got, _ := b.store.GetIntent(t.Context(), in.ID); got.Units[0].Reported != "" {
		t.Fatalf("unit reported %q", got.Units[0].Reported)
	}
}
