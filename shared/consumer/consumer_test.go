package consumer_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/queue"
)

// visCall is one ChangeVisibility call.
type visCall struct {
	handle string
	after  time.Duration
}

// recordingVisibility records ChangeVisibility calls. The consumer's batch
// logic is pure; the real queue is exercised in sqs_test.go.
type recordingVisibility struct {
	mu    sync.Mutex
	calls []visCall
	err   error
}

func (v *recordingVisibility) ChangeVisibility(_ context.Context, handle string, d time.Duration) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls = append(v.calls, visCall{handle, d})
	return v.err
}

func (v *recordingVisibility) byHandle() map[string]time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	m := map[string]time.Duration{}
	for _, c := range v.calls {
		m[c.handle] = c.after
	}
	return m
}

// rec builds a record "<group><n>" of group with a receive count.
func rec(id, group string, receiveCount int) events.SQSMessage {
	return events.SQSMessage{
		MessageId: id, ReceiptHandle: "rh-" + id, Body: "body-" + id,
		Attributes: map[string]string{
			"MessageGroupId":          group,
			"ApproximateReceiveCount": strconv.Itoa(receiveCount),
		},
	}
}

func batch(recs ...events.SQSMessage) events.SQSEvent { return events.SQSEvent{Records: recs} }

// handled collects the ids of records the handler saw, in call order.
type handled struct {
	mu  sync.Mutex
	ids []string
}

func (h *handled) add(id string) {
	h.mu.Lock()
	h.ids = append(h.ids, id)
	h.mu.Unlock()
}

func (h *handled) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ids)
}

func failedIDs(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// run handles ev with c and fails the test if HandleSQS returns an error,
// which it must never do.
func run(t *testing.T, ctx context.Context, c *consumer.Consumer, ev events.SQSEvent) events.SQSEventResponse {
	t.Helper()
	if c.Log == nil {
		c.Log = quiet
	}
	resp, err := c.HandleSQS(ctx, ev)
	if err != nil {
		t.Fatalf("HandleSQS returned an error: %v (it must report failures as data)", err)
	}
	return resp
}

func TestHandleSQSFailureRule(t *testing.T) {
	t.Parallel()

	t.Run("AllSucceedReportNothing", func(t *testing.T) {
		t.Parallel()
		vis := &recordingVisibility{}
		var h handled
		c := &consumer.Consumer{Visibility: vis, Handle: func(_ context.Context, r consumer.Record) error {
			h.add(r.MessageId)
			return nil
		}}
		resp := run(t, t.Context(), c, batch(rec("a1", "A", 1), rec("b1", "B", 1), rec("a2", "A", 1)))
		if len(resp.BatchItemFailures) != 0 || len(vis.calls) != 0 {
			t.Fatalf("failures %v, visibility calls %v; want none", failedIDs(resp), vis.calls)
		}
		if got := h.list(); len(got) != 3 {
			t.Fatalf("handled %v, want all three records", got)
		}
	})

	t.Run("FailedRecordTakesTheRestOfItsGroupWithTheSameDelay", func(t *testing.T) {
		t.Parallel()
		vis := &recordingVisibility{}
		var h handled
		c := &consumer.Consumer{Visibility: vis, Handle: func(_ context.Context, r consumer.Record) error {
			h.add(r.MessageId)
			if r.MessageId == "a2" {
				return consumer.Retry(errors.New("rate limited"), 7*time.Second)
			}
			return nil
		}}
		ev := batch(rec("a1", "A", 1), rec("b1", "B", 1), rec("a2", "A", 1), rec("c1", "C", 1), rec("a3", "A", 1), rec("b2", "B", 1), rec("a4", "A", 1))
		resp := run(t, t.Context(), c, ev)

		if got, want := failedIDs(resp), []string{"a2", "a3", "a4"}; !slices.Equal(got, want) {
			t.Fatalf("failures = %v, want %v (the failed record and every later one of its group, in batch order)", got, want)
		}
		vis2 := vis.byHandle()
		if len(vis2) != 3 {
			t.Fatalf("visibility calls = %v, want one per failed record", vis.calls)
		}
		for _, id := range []string{"a2", "a3", "a4"} {
			if vis2["rh-"+id] != 7*time.Second {
				t.Errorf("visibility of %s = %v, want 7s (the group's shared retry delay)", id, vis2["rh-"+id])
			}
		}
		got := h.list()
		for _, id := range []string{"a3", "a4"} {
			if slices.Contains(got, id) {
				t.Errorf("%s was handled after a2 failed; a group stops at its first failure", id)
			}
		}
		for _, id := range []string{"a1", "b1", "b2", "c1"} {
			if !slices.Contains(got, id) {
				t.Errorf("%s was not handled; other groups go on", id)
			}
		}
	})

	t.Run("WrappedRetryGivesExactlyItsDelay", func(t *testing.T) {
		t.Parallel()
		for _, d := range []time.Duration{0, 1500 * time.Millisecond, 42 * time.Second, 11 * time.Hour} {
			vis := &recordingVisibility{}
			c := &consumer.Consumer{
				Visibility: vis,
				Backoff:    func(int) time.Duration { return time.Hour }, // never used for a Retry
				Handle: func(context.Context, consumer.Record) error {
					return fmt.Errorf("send: %w", consumer.Retry(errors.New("slow down"), d))
				},
			}
			resp := run(t, t.Context(), c, batch(rec("a1", "A", 5)))
			if len(resp.BatchItemFailures) != 1 || vis.byHandle()["rh-a1"] != d {
				t.Errorf("Retry(%v): failures %v, visibility calls %v; want a1 parked exactly %v", d, failedIDs(resp), vis.calls, d)
			}
		}
	})

	t.Run("OtherErrorsBackOffByReceiveCount", func(t *testing.T) {
		t.Parallel()
		vis := &recordingVisibility{}
		var counts []int
		var mu sync.Mutex
		c := &consumer.Consumer{
			Visibility: vis,
			Groups:     1,
			Backoff: func(n int) time.Duration {
				mu.Lock()
				counts = append(counts, n)
				mu.Unlock()
				return time.Duration(n) * time.Second
			},
			Handle: func(context.Context, consumer.Record) error { return errors.New("agent unreachable") },
		}
		resp := run(t, t.Context(), c, batch(rec("a1", "A", 3), rec("b1", "B", 6)))
		if len(resp.BatchItemFailures) != 2 {
			t.Fatalf("failures = %v, want both", failedIDs(resp))
		}
		got := vis.byHandle()
		if got["rh-a1"] != 3*time.Second || got["rh-b1"] != 6*time.Second {
			t.Fatalf("visibility = %v, want Backoff(receive count): a1 3s, b1 6s", got)
		}
		slices.Sort(counts)
		if !slices.Equal(counts, []int{3, 6}) {
			t.Fatalf("Backoff called with %v, want the records' receive counts [3 6]", counts)
		}
	})

	t.Run("DefaultBackoffWithoutRetryDelay", func(t *testing.T) {
		t.Parallel()
		vis := &recordingVisibility{}
		c := &consumer.Consumer{Visibility: vis, Handle: func(context.Context, consumer.Record) error { return errors.New("boom") }}
		run(t, t.Context(), c, batch(rec("a1", "A", 3)))
		// Receive count 3: 8 s, jittered over its upper half.
		if d := vis.byHandle()["rh-a1"]; d < 4*time.Second || d > 8*time.Second {
			t.Fatalf("visibility = %v, want consumer.Backoff(3) within [4s, 8s]", d)
		}
	})

	t.Run("VisibilityFailureStillReportsTheRecord", func(t *testing.T) {
		t.Parallel()
		vis := &recordingVisibility{err: errors.New("sqs unavailable")}
		c := &consumer.Consumer{Visibility: vis, Handle: func(context.Context, consumer.Record) error {
			return consumer.Retry(errors.New("later"), time.Second)
		}}
		resp := run(t, t.Context(), c, batch(rec("a1", "A", 1), rec("a2", "A", 1)))
		if got := failedIDs(resp); !slices.Equal(got, []string{"a1", "a2"}) {
			t.Fatalf("failures = %v, want [a1 a2] even though parking them failed", got)
		}
		if len(vis.calls) != 2 {
			t.Fatalf("visibility calls = %v, want one attempt per failed record", vis.calls)
		}
	})

	t.Run("RecordCarriesItsGroupAndReceiveCount", func(t *testing.T) {
		t.Parallel()
		var got consumer.Record
		c := &consumer.Consumer{Visibility: &recordingVisibility{}, Handle: func(_ context.Context, r consumer.Record) error {
			got = r
			return nil
		}}
		run(t, t.Context(), c, batch(rec("a1", "telegram:1:2", 4)))
		if got.Group != "telegram:1:2" || got.ReceiveCount != 4 || got.Body != "body-a1" {
			t.Fatalf("record = group %q, receive count %d, body %q", got.Group, got.ReceiveCount, got.Body)
		}
	})
}

func TestHandleSQSDeadline(t *testing.T) {
	t.Parallel()

	t.Run("NoTimeToStartReturnsEveryRecordAtOnce", func(t *testing.T) {
		t.Parallel()
		vis := &recordingVisibility{}
		var calls atomic.Int32
		c := &consumer.Consumer{
			Visibility: vis, Reserve: time.Millisecond, MinStart: time.Minute,
			Handle: func(context.Context, consumer.Record) error { calls.Add(1); return nil },
		}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		resp := run(t, ctx, c, batch(rec("a1", "A", 1), rec("b1", "B", 1), rec("a2", "A", 1)))
		if calls.Load() != 0 {
			t.Fatalf("handler called %d times with less than MinStart left", calls.Load())
		}
		if got := failedIDs(resp); !slices.Equal(got, []string{"a1", "b1", "a2"}) {
			t.Fatalf("failures = %v, want every record", got)
		}
		for h, d := range vis.byHandle() {
			if d != 0 {
				t.Errorf("visibility of %s = %v, want 0: unstarted records go back at once", h, d)
			}
		}
		if len(vis.calls) != 3 {
			t.Fatalf("visibility calls = %v, want 3", vis.calls)
		}
	})

	t.Run("RecordsThatCannotStartGoBackUnprocessed", func(t *testing.T) {
		t.Parallel()
		const minStart = 2 * time.Second
		vis := &recordingVisibility{}
		var h handled
		c := &consumer.Consumer{
			Visibility: vis, Reserve: 10 * time.Millisecond, MinStart: minStart,
			Handle: func(ctx context.Context, r consumer.Record) error {
				h.add(r.MessageId)
				// The consumer reads the wall clock for deadlines: a1
				// works until less than MinStart is left for a2.
				dl, _ := ctx.Deadline()
				select {
				case <-time.After(time.Until(dl.Add(-minStart)) + 50*time.Millisecond):
				case <-ctx.Done():
				}
				return nil
			},
		}
		// A second of margin for a1 to start on a loaded machine.
		ctx, cancel := context.WithTimeout(t.Context(), minStart+10*time.Millisecond+time.Second)
		defer cancel()
		resp := run(t, ctx, c, batch(rec("a1", "A", 1), rec("a2", "A", 1), rec("a3", "A", 1)))
		if got := h.list(); !slices.Equal(got, []string{"a1"}) {
			t.Fatalf("handled %v, want only a1 (it started with time left)", got)
		}
		if got := failedIDs(resp); !slices.Equal(got, []string{"a2", "a3"}) {
			t.Fatalf("failures = %v, want [a2 a3]: a1 finished, the rest had no time", got)
		}
		if got := vis.byHandle(); got["rh-a2"] != 0 || got["rh-a3"] != 0 || len(got) != 2 {
			t.Fatalf("visibility = %v, want a2 and a3 visible at once", got)
		}
	})

	t.Run("HandlersGetTheDeadlineLessTheReserve", func(t *testing.T) {
		t.Parallel()
		var got time.Time
		c := &consumer.Consumer{
			Visibility: &recordingVisibility{}, Reserve: 3 * time.Second, MinStart: time.Millisecond,
			Handle: func(ctx context.Context, _ consumer.Record) error { got, _ = ctx.Deadline(); return nil },
		}
		dl := time.Now().Add(time.Minute)
		ctx, cancel := context.WithDeadline(t.Context(), dl)
		defer cancel()
		run(t, ctx, c, batch(rec("a1", "A", 1)))
		if want := dl.Add(-3 * time.Second); !got.Equal(want) {
			t.Fatalf("handler deadline = %v, want %v (the invocation's minus Reserve)", got, want)
		}
	})

	t.Run("NoDeadlineNoLimit", func(t *testing.T) {
		t.Parallel()
		var h handled
		c := &consumer.Consumer{
			Visibility: &recordingVisibility{}, MinStart: 24 * time.Hour,
			Handle: func(_ context.Context, r consumer.Record) error { h.add(r.MessageId); return nil },
		}
		resp := run(t, context.Background(), c, batch(rec("a1", "A", 1), rec("a2", "A", 1)))
		if len(resp.BatchItemFailures) != 0 || len(h.list()) != 2 {
			t.Fatalf("failures %v, handled %v; without a deadline every record runs", failedIDs(resp), h.list())
		}
	})
}

func TestHandleSQSConcurrency(t *testing.T) {
	t.Parallel()

	t.Run("GroupsRunSideBySide", func(t *testing.T) {
		t.Parallel()
		bStarted := make(chan struct{})
		c := &consumer.Consumer{Visibility: &recordingVisibility{}, Handle: func(ctx context.Context, r consumer.Record) error {
			switch r.Group {
			case "A":
				// A waits for B: only concurrent groups get past this.
				select {
				case <-bStarted:
					return nil
				case <-time.After(10 * time.Second):
					return errors.New("group B never ran while group A was busy")
				}
			default:
				close(bStarted)
				return nil
			}
		}}
		resp := run(t, t.Context(), c, batch(rec("a1", "A", 1), rec("b1", "B", 1)))
		if len(resp.BatchItemFailures) != 0 {
			t.Fatalf("failures = %v: groups did not run concurrently", failedIDs(resp))
		}
	})

	t.Run("GroupRecordsRunStrictlyInOrder", func(t *testing.T) {
		t.Parallel()
		var (
			mu       sync.Mutex
			order    = map[string][]string{}
			inFlight = map[string]int{}
			overlap  []string
		)
		c := &consumer.Consumer{Visibility: &recordingVisibility{}, Handle: func(_ context.Context, r consumer.Record) error {
			mu.Lock()
			inFlight[r.Group]++
			if inFlight[r.Group] > 1 {
				overlap = append(overlap, r.MessageId)
			}
			order[r.Group] = append(order[r.Group], r.MessageId)
			mu.Unlock()
			time.Sleep(time.Millisecond) // give an overlap the chance to show
			mu.Lock()
			inFlight[r.Group]--
			mu.Unlock()
			return nil
		}}
		var recs []events.SQSMessage
		want := map[string][]string{}
		for i := range 8 {
			for _, g := range []string{"A", "B", "C"} {
				id := fmt.Sprintf("%s%d", g, i)
				recs = append(recs, rec(id, g, 1))
				want[g] = append(want[g], id)
			}
		}
		run(t, t.Context(), c, batch(recs...))
		if len(overlap) > 0 {
			t.Fatalf("records %v ran while another record of their group was running", overlap)
		}
		for g, ids := range want {
			if !slices.Equal(order[g], ids) {
				t.Errorf("group %s ran %v, want batch order %v", g, order[g], ids)
			}
		}
	})

	t.Run("GroupsBoundsConcurrentGroups", func(t *testing.T) {
		t.Parallel()
		var running, peak atomic.Int32
		c := &consumer.Consumer{Visibility: &recordingVisibility{}, Groups: 2, Handle: func(context.Context, consumer.Record) error {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
			running.Add(-1)
			return nil
		}}
		var recs []events.SQSMessage
		for i := range 8 {
			recs = append(recs, rec(fmt.Sprint(i), fmt.Sprint("g", i), 1))
		}
		run(t, t.Context(), c, batch(recs...))
		if p := peak.Load(); p > 2 {
			t.Fatalf("%d groups ran at once, want at most Groups = 2", p)
		}
	})
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	// The upper bound per receive count: 2 s doubling, capped at 5 minutes.
	cases := []struct {
		receiveCount int
		max          time.Duration
	}{
		{0, 2 * time.Second},
		{1, 2 * time.Second},
		{2, 4 * time.Second},
		{3, 8 * time.Second},
		{4, 16 * time.Second},
		{5, 32 * time.Second},
		{6, 64 * time.Second},
		{7, 128 * time.Second},
		{8, 256 * time.Second},
		{9, 5 * time.Minute},
		{10, 5 * time.Minute},
		{1000, 5 * time.Minute},
		{1 << 40, 5 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint("ReceiveCount", tc.receiveCount), func(t *testing.T) {
			t.Parallel()
			lo, hi := tc.max, time.Duration(0)
			for range 400 {
				d := consumer.Backoff(tc.receiveCount)
				if d < tc.max/2 || d > tc.max {
					t.Fatalf("Backoff(%d) = %v, want within the upper half [%v, %v]", tc.receiveCount, d, tc.max/2, tc.max)
				}
				lo, hi = min(lo, d), max(hi, d)
			}
			// Jitter: 400 draws spread over the half (the chance of all
			// landing in one quarter is 2^-400).
			if q := tc.max / 2 / 4; lo > tc.max/2+q || hi < tc.max-q {
				t.Fatalf("Backoff(%d) drew only [%v, %v]: no jitter over [%v, %v]", tc.receiveCount, lo, hi, tc.max/2, tc.max)
			}
		})
	}
}

func TestRetryError(t *testing.T) {
	t.Parallel()
	cause := errors.New("429 from telegram")
	err := fmt.Errorf("send: %w", consumer.Retry(cause, 3*time.Second))
	var re *consumer.RetryError
	if !errors.As(err, &re) || re.After != 3*time.Second {
		t.Fatalf("errors.As(%v) = %v, want a RetryError after 3s", err, re)
	}
	if !errors.Is(err, cause) {
		t.Fatalf("%v does not unwrap to its cause", err)
	}
	if got := consumer.Retry(nil, time.Second).Error(); got != "retry after 1s" {
		t.Fatalf("Retry(nil).Error() = %q", got)
	}
}

// deadLetters records what the consumer moves to the dead-letter queue.
type deadLetters struct {
	mu   sync.Mutex
	msgs []queue.Message
	err  error
}

func (d *deadLetters) Send(_ context.Context, m queue.Message) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return d.err
	}
	d.msgs = append(d.msgs, m)
	return nil
}

func (d *deadLetters) bodies() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, m := range d.msgs {
		out = append(out, string(m.Body))
	}
	return out
}

// TestHandleSQSDeadLetters (finding 8.2): a poison record used to be returned
// until its receive count reached maxReceiveCount, and each return counted a
// receive for every later record of its group in the batch, which reached the
// DLQ with it. Now it goes alone, at once, and its group goes on.
func TestHandleSQSDeadLetters(t *testing.T) {
	t.Parallel()

	t.Run("PoisonGoesAloneAndItsGroupGoesOn", func(t *testing.T) {
		t.Parallel()
		vis, dl := &recordingVisibility{}, &deadLetters{}
		var h handled
		c := &consumer.Consumer{Visibility: vis, DeadLetters: dl, Handle: func(_ context.Context, r consumer.Record) error {
			h.add(r.MessageId)
			if r.MessageId == "a1" {
				return consumer.DeadLetter(errors.New("does not decode"))
			}
			return nil
		}}
		resp := run(t, t.Context(), c, batch(rec("a1", "A", 1), rec("a2", "A", 1), rec("a3", "A", 1)))
		if len(resp.BatchItemFailures) != 0 || len(vis.calls) != 0 {
			t.Fatalf("failures %v, visibility calls %v; want none: the poison left, the rest was done", failedIDs(resp), vis.calls)
		}
		if got := h.list(); !slices.Equal(got, []string{"a1", "a2", "a3"}) {
			t.Fatalf("handled %v, want a1 a2 a3 in order", got)
		}
		if got := dl.bodies(); !slices.Equal(got, []string{"body-a1"}) {
			t.Fatalf("dead-lettered %v, want only a1's body", got)
		}
		if m := dl.msgs[0]; m.Group != "A" || m.Dedup != "dlq#a1" {
			t.Fatalf("dead letter in group %q with dedup %q; want its own group, deduplicated on its message id", m.Group, m.Dedup)
		}
	})

	t.Run("PanicIsADeadLetter", func(t *testing.T) {
		t.Parallel()
		vis, dl := &recordingVisibility{}, &deadLetters{}
		c := &consumer.Consumer{Visibility: vis, DeadLetters: dl, Handle: func(_ context.Context, r consumer.Record) error {
			if r.MessageId == "b1" {
				panic("nil map")
			}
			return nil
		}}
		resp := run(t, t.Context(), c, batch(rec("b1", "B", 1), rec("b2", "B", 1)))
		if len(resp.BatchItemFailures) != 0 || !slices.Equal(dl.bodies(), []string{"body-b1"}) {
			t.Fatalf("failures %v, dead letters %v; want b1 moved and b2 done", failedIDs(resp), dl.bodies())
		}
	})

	t.Run("FailedMoveRetriesTheRecordAndItsGroup", func(t *testing.T) {
		t.Parallel()
		vis, dl := &recordingVisibility{}, &deadLetters{err: errors.New("sqs down")}
		c := &consumer.Consumer{Visibility: vis, DeadLetters: dl, Backoff: func(int) time.Duration { return 7 * time.Second },
			Handle: func(_ context.Context, r consumer.Record) error { return consumer.DeadLetter(errors.New("poison")) }}
		resp := run(t, t.Context(), c, batch(rec("c1", "C", 3), rec("c2", "C", 3)))
		if got := failedIDs(resp); !slices.Equal(got, []string{"c1", "c2"}) {
			t.Fatalf("failures %v, want c1 and c2: a record is never dropped", got)
		}
		if vis.byHandle()["rh-c1"] != 7*time.Second {
			t.Fatalf("visibility %v, want the backoff", vis.byHandle())
		}
	})

	t.Run("WithoutADeadLetterQueueItIsReturnedAtOnce", func(t *testing.T) {
		t.Parallel()
		vis := &recordingVisibility{}
		c := &consumer.Consumer{Visibility: vis, Handle: func(context.Context, consumer.Record) error {
			return consumer.DeadLetter(errors.New("poison"))
		}}
		resp := run(t, t.Context(), c, batch(rec("d1", "D", 1)))
		if got := vis.byHandle(); len(resp.BatchItemFailures) != 1 || got["rh-d1"] != 0 {
			t.Fatalf("failures %v, visibility %v; want d1 returned with visibility 0", failedIDs(resp), got)
		}
	})
}

// TestHandleSQSVisibilityLimit (finding 8.4): SQS refuses a visibility change
// that reaches past 12 hours from the receive, so min(d, 12h) was always
// refused and the message came back every visibility timeout. A long wait is
// parked as long as SQS allows, measured from the invocation's start.
func TestHandleSQSVisibilityLimit(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	vis := &recordingVisibility{}
	c := &consumer.Consumer{Visibility: vis, Now: now, Handle: func(_ context.Context, r consumer.Record) error {
		mu.Lock()
		clock = clock.Add(3 * time.Second) // the handler takes a while
		mu.Unlock()
		switch r.MessageId {
		case "long":
			return consumer.Retry(errors.New("deferred"), 14*time.Hour)
		default:
			return consumer.Retry(errors.New("rate limited"), 90*time.Minute)
		}
	}}
	run(t, t.Context(), c, batch(rec("long", "L", 1), rec("short", "S", 1)))
	got := vis.byHandle()
	if d := got["rh-long"]; d <= 11*time.Hour || d+3*time.Second > consumer.MaxVisibility-5*time.Minute+time.Second {
		t.Fatalf("a 14h wait parked for %v; want just under 12h less the receive margin and the time spent", d)
	}
	if d := got["rh-short"]; d != 90*time.Minute {
		t.Fatalf("a 90m wait parked for %v, want exactly 90m", d)
	}
}

// TestHandleSQSParked: a record whose handler parked its message itself is
// reported failed (not deleted) and its visibility left alone, so a wake
// after the handler's park stands; the rest of its group goes back at once
// (nothing of the group is served while it is in flight); other groups go
// on as ever.
func TestHandleSQSParked(t *testing.T) {
	t.Parallel()
	vis := &recordingVisibility{}
	h := &handled{}
	c := &consumer.Consumer{Visibility: vis, Handle: func(_ context.Context, r consumer.Record) error {
		h.add(r.MessageId)
		if r.MessageId == "a1" {
			return consumer.Parked(errors.New("waiting for the agent"))
		}
		return nil
	}}
	resp := run(t, t.Context(), c, batch(rec("a1", "A", 3), rec("a2", "A", 3), rec("b1", "B", 1)))
	if got := failedIDs(resp); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Fatalf("failed %v, want the parked record and the rest of its group", got)
	}
	if got := h.list(); slices.Contains(got, "a2") {
		t.Fatalf("handled %v: a record behind a parked one ran", got)
	}
	got := vis.byHandle()
	if _, ok := got["rh-a1"]; ok {
		t.Fatalf("the parked record's visibility was changed to %v; its handler's stands", got["rh-a1"])
	}
	if d, ok := got["rh-a2"]; !ok || d != 0 {
		t.Fatalf("the record behind it went back after %v (changed: %v), want at once", d, ok)
	}
}
