package turn_test

import (
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
)

// sentIntent stores an intent of three units on the thread of event("1"):
// the first sent as "wamid.A", the second held unknown after its send, the
// third still sending.
func (s *setup) sentIntent() intent.Intent {
	s.t.Helper()
	ctx := s.t.Context()
	ev := event("1")
	in := intent.Intent{ID: intent.IDFor(ev.Key()), Origin: ev.Key(), Thread: ev.Thread, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	for _, id := range []string{"b1#1", "b2#1", "b3#1"} {
		in.Units = append(in.Units, intent.Unit{ID: id, Content: message.Text("x"), State: message.UnitPending})
	}
	if _, _, err := s.store.CreateIntent(ctx, in); err != nil {
		s.t.Fatal(err)
	}
	steps := []intent.Transition{
		intent.Lease(in.Units[0], 0, t0, t0.Add(time.Minute)),
	}
	apply := func(t intent.Transition) {
		var err error
		if in, err = s.store.Apply(ctx, in.ID, t); err != nil {
			s.t.Fatal(err)
		}
	}
	apply(steps[0])
	apply(intent.MarkSent(in.Units[0], 0, t0, message.Receipt{MessageIDs: []string{"wamid.A"}}))
	apply(intent.Lease(in.Units[1], 1, t0, t0.Add(time.Minute)))
	apply(intent.MarkUnknown(in.Units[1], 1, t0, "timeout", false))
	apply(intent.Lease(in.Units[2], 2, t0, t0.Add(time.Minute)))
	return in
}

func statusEvent(id string, th message.Thread, st message.Status) message.Event {
	return message.Event{
		Platform: th.Platform, Account: th.Account, EventID: id, Kind: message.KindStatus,
		Thread: th, Status: &st, Time: t0,
	}
}

func TestStatuses(t *testing.T) {
	t.Parallel()
	s := newSetup(t, envelopeReply(bubbles(1)))
	s.p.Reports = s.store
	in := s.sentIntent()
	th := in.Thread
	tag := func(unit string) string { return intent.UnitKey(in.ID, unit) }
	unit := func(i int) intent.Unit {
		t.Helper()
		got, err := s.store.GetIntent(t.Context(), in.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Units[i]
	}

	// Delivered, then read, then a late delivered: the furthest one stays.
	for i, state := range []string{message.StatusDelivered, message.StatusRead, message.StatusDelivered} {
		ev := statusEvent("wamid.A:"+state+string(rune('0'+i)), th, message.Status{MessageID: "wamid.A", State: state, Tag: tag("b1#1")})
		if err := s.handle(intent.Inbound{Event: ev}); err != nil {
			t.Fatal(err)
		}
	}
	if u := unit(0); u.State != message.UnitSent || u.Reported != message.StatusRead {
		t.Fatalf("after delivered, read, delivered: unit %s reported %q", u.State, u.Reported)
	}

	// Another thread's status naming the unit changes nothing: a tag is
	// only a claim.
	other := th
	other.Chat = "43"
	failed := message.Status{MessageID: "wamid.A", State: message.StatusFailed, Code: "131047", Reason: "Re-engagement message", Class: message.FailPermission, Tag: tag("b1#1")}
	if err := s.handle(intent.Inbound{Event: statusEvent("x:failed", other, failed)}); err != nil {
		t.Fatal(err)
	}
	// Nor does a status of another message with the unit's tag.
	wrong := failed
	wrong.MessageID = "wamid.Z"
	if err := s.handle(intent.Inbound{Event: statusEvent("z:failed", th, wrong)}); err != nil {
		t.Fatal(err)
	}
	// Nor one without a tag.
	untagged := failed
	untagged.Tag = ""
	if err := s.handle(intent.Inbound{Event: statusEvent("u:failed", th, untagged)}); err != nil {
		t.Fatal(err)
	}
	if u := unit(0); u.State != message.UnitSent {
		t.Fatalf("a status that does not name the unit moved it to %s", u.State)
	}

	// A failure after the accepted send fails the unit with its code.
	if err := s.handle(intent.Inbound{Event: statusEvent("wamid.A:failed", th, failed)}); err != nil {
		t.Fatal(err)
	}
	if u := unit(0); u.State != message.UnitFailed || u.FailureClass != message.FailPermission || u.FailureReason != "status 131047 Re-engagement message" || u.Reported != message.StatusFailed {
		t.Fatalf("failed status: unit %+v", u)
	}
	if u := unit(0); len(u.Receipt) != 1 || u.Receipt[0] != "wamid.A" {
		t.Errorf("the failed unit lost its receipt: %v", u.Receipt)
	}

	// A report on the unit held unknown proves it was sent.
	ev := statusEvent("wamid.B:sent", th, message.Status{MessageID: "wamid.B", State: message.StatusSent, Tag: tag("b2#1")})
	if err := s.handle(intent.Inbound{Event: ev}); err != nil {
		t.Fatal(err)
	}
	if u := unit(1); u.State != message.UnitSent || len(u.Receipt) != 1 || u.Receipt[0] != "wamid.B" {
		t.Fatalf("status on an unknown unit: %+v", u)
	}

	// A failure reported while the unit is still sending waits for the
	// sender to record it; a delivered report then is dropped.
	early := message.Status{MessageID: "wamid.C", State: message.StatusFailed, Code: "131026", Tag: tag("b3#1")}
	err := s.handle(intent.Inbound{Event: statusEvent("wamid.C:failed", th, early)})
	if d, ok := retryAfter(err); !ok || d <= 0 {
		t.Fatalf("failure before the receipt: %v, want a retry", err)
	}
	early.State = message.StatusDelivered
	if err := s.handle(intent.Inbound{Event: statusEvent("wamid.C:delivered", th, early)}); err != nil {
		t.Fatal(err)
	}
	if u := unit(2); u.State != message.UnitSending {
		t.Fatalf("an early status moved the sending unit to %s", u.State)
	}
	if s.agent.count() != 0 {
		t.Fatalf("a status reached the agent %d times", s.agent.count())
	}
}

func TestStatusesOffByDefault(t *testing.T) {
	t.Parallel()
	s := newSetup(t, envelopeReply(bubbles(1)))
	in := s.sentIntent()
	ev := statusEvent("wamid.A:failed", in.Thread, message.Status{MessageID: "wamid.A", State: message.StatusFailed, Tag: intent.UnitKey(in.ID, "b1#1")})
	if err := s.handle(intent.Inbound{Event: ev}); err != nil {
		t.Fatal(err)
	}
	got, err := s.store.GetIntent(t.Context(), in.ID)
	if err != nil || got.Units[0].State != message.UnitSent {
		t.Fatalf("without Reports a status moved the unit: %+v, %v", got.Units[0], errors.Unwrap(err))
	}
}
