package intent_test

import (
	"slices"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
)

var (
	t0         = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	leaseUntil = t0.Add(20 * time.Second)
)

// unit returns a unit in state st at attempt att.
func unit(id string, st message.UnitState, att int) intent.Unit {
	return intent.Unit{ID: id, Content: message.Text("text " + id), State: st, Attempt: att}
}

// intentOf returns an intent holding units.
func intentOf(units ...intent.Unit) intent.Intent {
	return intent.Intent{ID: "i1", Origin: "evt#telegram#1#1", Units: units}
}

func TestAllowed(t *testing.T) {
	t.Parallel()
	pending := unit("a#1", message.UnitPending, 0)
	retried := intent.Unit{ID: "a#1", State: message.UnitPending, Attempt: 2, FailureClass: message.FailRateLimit, FailureReason: "429"}
	sending := unit("a#1", message.UnitSending, 1)
	sending.LeaseUntil = t0.Add(-time.Second) // abandoned by t0
	sendingLive := unit("a#1", message.UnitSending, 1)
	sendingLive.LeaseUntil = t0.Add(time.Second)
	sendingAtNow := unit("a#1", message.UnitSending, 1)
	sendingAtNow.LeaseUntil = t0
	unknown := unit("a#1", message.UnitUnknown, 1)

	sent, failed := unit("p", message.UnitSent, 1), unit("p", message.UnitFailed, 3)
	prevPending, prevSending, prevUnknown := unit("p", message.UnitPending, 0), unit("p", message.UnitSending, 1), unit("p", message.UnitUnknown, 1)

	receipt := message.Receipt{MessageIDs: []string{"m1"}}
	cases := []struct {
		name string
		in   intent.Intent
		tr   intent.Transition
		want bool
	}{
		// Lease: pending, at its attempt, every earlier unit terminal.
		{"LeasePending", intentOf(pending), intent.Lease(pending, 0, t0, leaseUntil), true},
		{"LeaseRetriedPending", intentOf(retried), intent.Lease(retried, 0, t0, leaseUntil), true},
		{"LeaseStaleAttempt", intentOf(retried), intent.Lease(pending, 0, t0, leaseUntil), false},
		{"LeaseSending", intentOf(sendingLive), intent.Lease(sendingLive, 0, t0, leaseUntil), false},
		{"LeaseSent", intentOf(sent), intent.Lease(sent, 0, t0, leaseUntil), false},
		{"LeaseUnknown", intentOf(unknown), intent.Lease(unknown, 0, t0, leaseUntil), false},
		{"LeaseAfterSent", intentOf(sent, pending), intent.Lease(pending, 1, t0, leaseUntil), true},
		{"LeaseAfterFailed", intentOf(failed, pending), intent.Lease(pending, 1, t0, leaseUntil), true},
		{"LeaseAfterUnknown", intentOf(prevUnknown, pending), intent.Lease(pending, 1, t0, leaseUntil), true},
		{"LeaseBehindPending", intentOf(prevPending, pending), intent.Lease(pending, 1, t0, leaseUntil), false},
		{"LeaseBehindSending", intentOf(prevSending, pending), intent.Lease(pending, 1, t0, leaseUntil), false},
		{"LeaseBehindOneOpenOfMany", intentOf(sent, prevPending, sent, pending), intent.Lease(pending, 3, t0, leaseUntil), false},
		{"LeaseOutOfRange", intentOf(pending), intent.Lease(pending, 1, t0, leaseUntil), false},
		{"LeaseNegativeIndex", intentOf(pending), intent.Lease(pending, -1, t0, leaseUntil), false},

		// Resend: only from unknown_after_send, in order.
		{"ResendUnknown", intentOf(unknown), intent.Resend(unknown, 0, t0, leaseUntil), true},
		{"ResendPending", intentOf(pending), intent.Resend(pending, 0, t0, leaseUntil), false},
		{"ResendSending", intentOf(sendingLive), intent.Resend(sendingLive, 0, t0, leaseUntil), false},
		{"ResendBehindPending", intentOf(prevPending, unknown), intent.Resend(unknown, 1, t0, leaseUntil), false},
		{"ResendStaleAttempt", intentOf(unknown), intent.Resend(unit("a#1", message.UnitUnknown, 0), 0, t0, leaseUntil), false},

		// MarkSent: sending or unknown at the same attempt.
		{"SentFromSending", intentOf(sendingLive), intent.MarkSent(sendingLive, 0, t0, receipt), true},
		{"SentFromUnknownSameAttempt", intentOf(unknown), intent.MarkSent(unknown, 0, t0, receipt), true},
		{"SentFromUnknownOtherAttempt", intentOf(unit("a#1", message.UnitUnknown, 2)), intent.MarkSent(unknown, 0, t0, receipt), false},
		{"SentFromResentSending", intentOf(unit("a#1", message.UnitSending, 2)), intent.MarkSent(unknown, 0, t0, receipt), false},
		{"SentFromPending", intentOf(unit("a#1", message.UnitPending, 1)), intent.MarkSent(sendingLive, 0, t0, receipt), false},
		{"SentTwice", intentOf(unit("a#1", message.UnitSent, 1)), intent.MarkSent(sendingLive, 0, t0, receipt), false},
		{"SentFromFailed", intentOf(unit("a#1", message.UnitFailed, 1)), intent.MarkSent(sendingLive, 0, t0, receipt), false},

		// MarkRetryable: sending only.
		{"RetryFromSending", intentOf(sendingLive), intent.MarkRetryable(sendingLive, 0, t0, t0.Add(time.Second), message.FailTransient, "502"), true},
		{"RetryFromPending", intentOf(pending), intent.MarkRetryable(pending, 0, t0, t0.Add(time.Second), message.FailTransient, "502"), false},
		{"RetryFromUnknown", intentOf(unknown), intent.MarkRetryable(unknown, 0, t0, t0.Add(time.Second), message.FailTransient, "502"), false},
		{"RetryStaleAttempt", intentOf(unit("a#1", message.UnitSending, 2)), intent.MarkRetryable(sendingLive, 0, t0, t0.Add(time.Second), message.FailTransient, "502"), false},

		// MarkFailed: sending (a permanent answer) or pending (out of attempts).
		{"FailFromSending", intentOf(sendingLive), intent.MarkFailed(sendingLive, 0, t0, message.FailAuth, "401"), true},
		{"FailFromPending", intentOf(retried), intent.MarkFailed(retried, 0, t0, message.FailRateLimit, "out of attempts"), true},
		{"FailFromUnknown", intentOf(unknown), intent.MarkFailed(unknown, 0, t0, message.FailUnknown, "x"), false},
		{"FailFromSent", intentOf(unit("a#1", message.UnitSent, 1)), intent.MarkFailed(sendingLive, 0, t0, message.FailAuth, "401"), false},
		{"FailStaleAttempt", intentOf(retried), intent.MarkFailed(pending, 0, t0, message.FailAuth, "401"), false},

		// GiveUp: only from unknown_after_send, at its attempt (finding 8.10).
		{"GiveUpUnknown", intentOf(unknown), intent.GiveUp(unknown, 0, t0, "out of resends"), true},
		{"GiveUpPending", intentOf(pending), intent.GiveUp(pending, 0, t0, "out of resends"), false},
		{"GiveUpSending", intentOf(sendingLive), intent.GiveUp(sendingLive, 0, t0, "out of resends"), false},
		{"GiveUpStaleAttempt", intentOf(unknown), intent.GiveUp(unit("a#1", message.UnitUnknown, 0), 0, t0, "x"), false},
		// MarkUnknown: the caller's own send, or an abandoned lease.
		{"UnknownOwnSend", intentOf(sendingLive), intent.MarkUnknown(sendingLive, 0, t0, "timeout", false), true},
		{"UnknownAbandonedLeaseEnded", intentOf(sending), intent.MarkUnknown(sending, 0, t0, "abandoned", true), true},
		{"UnknownAbandonedLeaseLive", intentOf(sendingLive), intent.MarkUnknown(sendingLive, 0, t0, "abandoned", true), false},
		{"UnknownAbandonedLeaseEndsNow", intentOf(sendingAtNow), intent.MarkUnknown(sendingAtNow, 0, t0, "abandoned", true), false},
		{"UnknownFromPending", intentOf(pending), intent.MarkUnknown(pending, 0, t0, "timeout", false), false},
		{"UnknownFromUnknown", intentOf(unknown), intent.MarkUnknown(unknown, 0, t0, "timeout", false), false},

		// Report and MarkUndelivered: only a sent unit, at its attempt,
		// whatever the units around it are doing.
		{"ReportSent", intentOf(sent), intent.Report(sent, 0, t0, message.StatusRead), true},
		{"ReportSentBehindSending", intentOf(sent, prevSending), intent.Report(sent, 0, t0, message.StatusDelivered), true},
		{"ReportSending", intentOf(sendingLive), intent.Report(sendingLive, 0, t0, message.StatusRead), false},
		{"ReportFailed", intentOf(failed), intent.Report(failed, 0, t0, message.StatusRead), false},
		{"UndeliveredSent", intentOf(sent), intent.MarkUndelivered(sent, 0, t0, message.FailPermission, "131047"), true},
		{"UndeliveredUnknown", intentOf(unknown), intent.MarkUndelivered(unknown, 0, t0, message.FailPermission, "131047"), false},
		{"UndeliveredTwice", intentOf(unit("p", message.UnitFailed, 1)), intent.MarkUndelivered(sent, 0, t0, message.FailPermission, "x"), false},
		{"UndeliveredStaleAttempt", intentOf(unit("p", message.UnitSent, 2)), intent.MarkUndelivered(sent, 0, t0, message.FailPermission, "x"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.in.Allowed(tc.tr); got != tc.want {
				t.Fatalf("Allowed(%s) = %v, want %v", tc.tr.Name, got, tc.want)
			}
		})
	}
}

func TestTransitionsApply(t *testing.T) {
	t.Parallel()
	receipt := message.Receipt{MessageIDs: []string{"m1", "m2"}}
	retried := intent.Unit{ID: "a#1", Content: message.Text("hi"), State: message.UnitPending, Attempt: 2, FailureClass: message.FailRateLimit, FailureReason: "429"}
	sending := intent.Unit{ID: "a#1", Content: message.Text("hi"), State: message.UnitSending, Attempt: 3, LeaseUntil: leaseUntil, FailureClass: message.FailRateLimit, FailureReason: "429"}
	resentSending := sending
	resentSending.Resent = true
	unknown := intent.Unit{ID: "a#1", Content: message.Text("hi"), State: message.UnitUnknown, Attempt: 3, FailureClass: message.FailUnknown, FailureReason: "timeout"}

	cases := []struct {
		name      string
		from      intent.Unit
		tr        intent.Transition
		wantName  string
		want      intent.Unit
		attention bool
	}{
		{
			"Lease", retried, intent.Lease(retried, 0, t0, leaseUntil), "lease",
			// The last failure stays visible while the next attempt runs.
			intent.Unit{ID: "a#1", Content: message.Text("hi"), State: message.UnitSending, Attempt: 3, LeaseUntil: leaseUntil, FailureClass: message.FailRateLimit, FailureReason: "429", UpdatedAt: t0},
			false,
		},
		{
			"Resend", unknown, intent.Resend(unknown, 0, t0, leaseUntil), "resend",
			intent.Unit{ID: "a#1", Content: message.Text("hi"), State: message.UnitSending, Attempt: 4, LeaseUntil: leaseUntil, FailureClass: message.FailUnknown, FailureReason: "timeout", Resent: true, UpdatedAt: t0},
			false,
		},
		{
			"MarkSent", resentSending, intent.MarkSent(resentSending, 0, t0, receipt), "sent",
			intent.Unit{ID: "a#1", Content: message.Text("hi"), State: message.UnitSent, Attempt: 3, Receipt: []string{"m1", "m2"}, SentAt: t0, Resent: true, UpdatedAt: t0},
			false,
		},
		{
			"MarkSentFromUnknown", unknown, intent.MarkSent(unknown, 0, t0, receipt), "sent",
			intent.Unit{ID: "a#1", Content: message.Text("hi"), State: message.UnitSent, Attempt: 3, Receipt: []string{"m1", "m2"}, SentAt: t0, UpdatedAt: t0},
			false,
		},
		{
			"MarkRetryable", sending, intent.MarkRetryable(sending, 0, t0, t0.Add(time.Second), message.FailTransient, "502"), "retry",
			intent.Unit{ID: "a#1", Content: message.Text("hi"), State: message.UnitPending, Attempt: 3, FailureClass: message.FailTransient, FailureReason: "502", NextAt: t0.Add(time.Second), UpdatedAt: t0},
			false,
		},
		{
			"MarkFailed", resentSending, intent.MarkFailed(resentSending, 0, t0, message.FailAuth, "401"), "fail",
			intent.Unit{ID: "a#1", Content: message.Text("hi"), State: message.UnitFailed, Attempt: 3, FailureClass: message.FailAuth, FailureReason: "401", Resent: true, UpdatedAt: t0},
			true,
		},
		{
			"GiveUp", unknown, intent.GiveUp(unknown, 0, t0, "unknown outcome, out of resends"), "give_up",
			intent.Unit{ID: "a#1", Content: message.Text("hi"), State: message.UnitFailed, Attempt: 3, FailureClass: message.FailUnknown, FailureReason: "unknown outcome, out of resends", UpdatedAt: t0},
			true,
		},
		{
			"MarkUnknown", sending, intent.MarkUnknown(sending, 0, t0, "timeout after send", false), "unknown",
			intent.Unit{ID: "a#1", Content: message.Text("hi"), State: message.UnitUnknown, Attempt: 3, FailureClass: message.FailUnknown, FailureReason: "timeout after send", UpdatedAt: t0},
			true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := intentOf(unit("p", message.UnitSent, 1), tc.from)
			tc.tr.Unit = 1
			if tc.tr.Name != tc.wantName || tc.tr.Attention != tc.attention {
				t.Errorf("name %q, attention %v; want %q, %v", tc.tr.Name, tc.tr.Attention, tc.wantName, tc.attention)
			}
			if !in.Allowed(tc.tr) {
				t.Fatalf("%s not allowed on its own source unit", tc.tr.Name)
			}
			got := in.Apply(tc.tr).Units[1]
			if !unitEqual(got, tc.want) {
				t.Fatalf("after %s:\n got %+v\nwant %+v", tc.tr.Name, got, tc.want)
			}
		})
	}

	t.Run("AbandonedMarkUnknownChecksTheLease", func(t *testing.T) {
		t.Parallel()
		if tr := intent.MarkUnknown(sending, 0, t0, "x", true); !tr.LeaseExpiredBy.Equal(t0) {
			t.Fatalf("LeaseExpiredBy = %v, want now", tr.LeaseExpiredBy)
		}
		if tr := intent.MarkUnknown(sending, 0, t0, "x", false); !tr.LeaseExpiredBy.IsZero() {
			t.Fatalf("own-send MarkUnknown checks a lease: %v", tr.LeaseExpiredBy)
		}
	})

	t.Run("OnlyClaimsRequireOrder", func(t *testing.T) {
		t.Parallel()
		for _, tr := range []intent.Transition{intent.Lease(retried, 0, t0, leaseUntil), intent.Resend(unknown, 0, t0, leaseUntil)} {
			if !tr.RequirePrevTerminal {
				t.Errorf("%s does not require earlier units terminal", tr.Name)
			}
		}
	})
}

func unitEqual(a, b intent.Unit) bool {
	return a.ID == b.ID && a.Content == b.Content && a.ReplyTo == b.ReplyTo && a.State == b.State && a.Attempt == b.Attempt &&
		a.LeaseUntil.Equal(b.LeaseUntil) && slices.Equal(a.Receipt, b.Receipt) && a.SentAt.Equal(b.SentAt) &&
		a.FailureClass == b.FailureClass && a.FailureReason == b.FailureReason && a.NextAt.Equal(b.NextAt) &&
		a.Resent == b.Resent && a.UpdatedAt.Equal(b.UpdatedAt)
}

func TestApplyDoesNotAlias(t *testing.T) {
	t.Parallel()
	orig := intentOf(unit("a#1", message.UnitSent, 1), unit("b#1", message.UnitSending, 1))
	orig.Units[0].Receipt = []string{"m0"}
	receipt := []string{"m1"}
	tr := intent.MarkSent(orig.Units[1], 1, t0, message.Receipt{MessageIDs: receipt})

	out := orig.Apply(tr)
	if orig.Units[1].State != message.UnitSending || orig.Units[1].Receipt != nil {
		t.Fatalf("Apply changed the original intent: %+v", orig.Units[1])
	}
	out.Units[0].State = message.UnitFailed
	if orig.Units[0].State != message.UnitSent {
		t.Fatalf("changing the result's units changed the original's")
	}
	receipt[0] = "mutated" // tr.Receipt is this slice
	if got := out.Units[1].Receipt[0]; got != "m1" {
		t.Fatalf("the applied unit's receipt aliases the transition's: %q", got)
	}
	out.Units = append(out.Units, unit("c#1", message.UnitPending, 0))
	if len(orig.Units) != 2 {
		t.Fatal("appending to the result grew the original")
	}
}

func TestIntentHelpers(t *testing.T) {
	t.Parallel()

	t.Run("IDForIsStableAndDistinct", func(t *testing.T) {
		t.Parallel()
		a, b := intent.IDFor("evt#telegram#1#100"), intent.IDFor("evt#telegram#1#101")
		if a != intent.IDFor("evt#telegram#1#100") || a == b {
			t.Fatalf("IDFor: %q, %q", a, b)
		}
		if len(a) != 32 || len(intent.IDFor("")) != 32 {
			t.Fatalf("IDFor length %d, want 32 hex characters", len(a))
		}
		for _, r := range a {
			if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
				t.Fatalf("IDFor(%q) = %q is not lower-case hex", "evt#telegram#1#100", a)
			}
		}
	})

	t.Run("UnitKey", func(t *testing.T) {
		t.Parallel()
		if got := intent.UnitKey("abc", "bubble_1#2"); got != "abc#bubble_1#2" {
			t.Fatalf("UnitKey = %q", got)
		}
	})

	t.Run("IndexAndFirstOpen", func(t *testing.T) {
		t.Parallel()
		in := intentOf(unit("a#1", message.UnitSent, 1), unit("b#1", message.UnitUnknown, 1), unit("c#1", message.UnitFailed, 1),
			unit("d#1", message.UnitPending, 0), unit("e#1", message.UnitSent, 1))
		if in.Index("c#1") != 2 || in.Index("zz") != -1 {
			t.Fatalf("Index(c#1) = %d, Index(zz) = %d", in.Index("c#1"), in.Index("zz"))
		}
		if in.FirstOpen() != 3 {
			t.Fatalf("FirstOpen = %d, want 3 (sent, unknown and failed are terminal)", in.FirstOpen())
		}
		if done := intentOf(unit("a#1", message.UnitSent, 1)); done.FirstOpen() != 1 {
			t.Fatalf("FirstOpen of a finished intent = %d, want len(Units)", done.FirstOpen())
		}
	})
}

func TestClosingTakesTheIntentOffTheSweepList(t *testing.T) {
	t.Parallel()
	in := intentOf(unit("a#1", message.UnitSent, 1), unit("b#1", message.UnitSending, 1))
	in.SweepAt = t0.Add(time.Minute)
	if tr := in.Closing(intent.MarkSent(in.Units[1], 1, t0, message.Receipt{})); !tr.Close || !in.Apply(tr).SweepAt.IsZero() {
		t.Fatalf("the last unit's end does not close: %+v", tr)
	}
	if tr := in.Closing(intent.MarkRetryable(in.Units[1], 1, t0, t0.Add(time.Hour), message.FailRateLimit, "429")); tr.Close ||
		!in.Apply(tr).SweepAt.Equal(t0.Add(time.Hour+intent.SweepGrace)) {
		t.Fatalf("a park closes or does not reschedule: %+v", tr)
	}
	first := intentOf(unit("a#1", message.UnitSending, 1), unit("b#1", message.UnitPending, 0))
	if tr := first.Closing(intent.MarkSent(first.Units[0], 0, t0, message.Receipt{})); tr.Close {
		t.Fatal("an earlier unit's end closes the intent")
	}
	off := intentOf(unit("a#1", message.UnitSending, 1))
	if got := off.Apply(intent.MarkRetryable(off.Units[0], 0, t0, t0.Add(time.Hour), message.FailRateLimit, "429")); !got.SweepAt.IsZero() {
		t.Fatal("an intent off the list was put on it by a park")
	}
}

func TestParseUnitKey(t *testing.T) {
	t.Parallel()
	if id, unit, ok := intent.ParseUnitKey(intent.UnitKey("abc", "b1#2")); !ok || id != "abc" || unit != "b1#2" {
		t.Fatalf("round trip: %q %q %v", id, unit, ok)
	}
	for _, bad := range []string{"", "abc", "#b1#1", "abc#"} {
		if _, _, ok := intent.ParseUnitKey(bad); ok {
			t.Errorf("ParseUnitKey(%q) accepted", bad)
		}
	}
}

// TestSupersededNeedsNoOperator: a unit a newer message superseded is
// failed for no operator to look at: not marked for the attention index,
// not on an operator's list, and never leased again.
func TestSupersededNeedsNoOperator(t *testing.T) {
	now := time.Now()
	in := intent.Intent{ID: "i", Units: []intent.Unit{{ID: "b1#1", State: message.UnitSent}, {ID: "b2#1", State: message.UnitPending}}}
	tr := in.Closing(intent.Supersede(in.Units[1], 1, now))
	if !in.Allowed(tr) || tr.Attention || !tr.Close {
		t.Fatalf("supersede %+v on %+v: allowed %v", tr, in.Units[1], in.Allowed(tr))
	}
	out := in.Apply(tr)
	u := out.Units[1]
	if u.State != message.UnitFailed || u.FailureClass != message.FailSuperseded || u.NeedsOperator() {
		t.Fatalf("superseded unit %+v (needs an operator: %v)", u, u.NeedsOperator())
	}
	if out.Allowed(intent.Lease(u, 1, now, now.Add(time.Minute))) {
		t.Fatal("a superseded unit can be leased")
	}
	leased := in.Apply(intent.Lease(in.Units[1], 1, now, now.Add(time.Minute)))
	if leased.Allowed(intent.Supersede(leased.Units[1], 1, now)) {
		t.Fatal("a unit being sent can be superseded: half a bubble")
	}
}

// LeaseBehind leases a unit while the one before it is sending (leased by
// the same caller, for one call carrying both); Lease would wait for it.
func TestLeaseBehindTheUnitBeingSent(t *testing.T) {
	t.Parallel()
	in := intentOf(unit("a#1", message.UnitSending, 1), unit("b#1", message.UnitPending, 0))
	if in.Allowed(intent.Lease(in.Units[1], 1, t0, t0.Add(time.Minute))) {
		t.Fatal("Lease overtook the unit being sent")
	}
	tr := intent.LeaseBehind(in.Units[1], 1, t0, t0.Add(time.Minute))
	if !in.Allowed(tr) || in.Apply(tr).Units[1].State != message.UnitSending || in.Apply(tr).Units[1].Attempt != 1 {
		t.Fatalf("LeaseBehind: allowed %v, unit %+v", in.Allowed(tr), in.Apply(tr).Units[1])
	}
	// Still a compare-and-set on the unit itself: not twice.
	if in.Apply(tr).Allowed(tr) {
		t.Fatal("LeaseBehind leased a unit already leased")
	}
}
