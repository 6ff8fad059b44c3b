package queuetest_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"go.uber.org/goleak"

	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/queue/queuetest"
	"github.com/parleyhq/parley/shared/turn"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The model stands in for the real queue behind Parley's ports.
var (
	_ ingress.Enqueuer    = (*queuetest.FIFO)(nil)
	_ turn.Outbox         = (*queuetest.FIFO)(nil)
	_ consumer.Visibility = (*queuetest.FIFO)(nil)
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// bundle is one test's clock and queue.
type bundle struct {
	clock *queuetest.Clock
	q     *queuetest.FIFO
}

// setup returns a queue on a fresh clock reading t0; o.Now is overwritten.
func setup(t *testing.T, o queuetest.Options) bundle {
	t.Helper()
	clock := queuetest.NewClock(t0)
	o.Now = clock.Now
	return bundle{clock: clock, q: queuetest.New(o)}
}

// send enqueues body on group, with body as its deduplication key.
func send(t *testing.T, q *queuetest.FIFO, group, body string) {
	t.Helper()
	if err := q.Send(t.Context(), queue.Message{Group: group, Dedup: body, Body: []byte(body)}); err != nil {
		t.Fatalf("send %s: %v", body, err)
	}
}

func bodies(recs []events.SQSMessage) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Body)
	}
	return out
}

func heldBodies(ms []queuetest.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, string(m.Body))
	}
	return out
}

func receiveCount(t *testing.T, r events.SQSMessage) int {
	t.Helper()
	n, err := strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
	if err != nil {
		t.Fatalf("ApproximateReceiveCount %q: %v", r.Attributes["ApproximateReceiveCount"], err)
	}
	return n
}

func counts(t *testing.T, recs []events.SQSMessage) []int {
	t.Helper()
	var out []int
	for _, r := range recs {
		out = append(out, receiveCount(t, r))
	}
	return out
}

func TestReceiveServesGroupsTogether(t *testing.T) {
	t.Parallel()
	twelve := make([][2]string, 12)
	var firstTen []string
	for i := range twelve {
		twelve[i] = [2]string{"a", fmt.Sprintf("a%d", i+1)}
		if i < 10 {
			firstTen = append(firstTen, twelve[i][1])
		}
	}
	tests := []struct {
		name  string
		sends [][2]string // group, body
		// receives are successive Receive calls' max; nothing is deleted.
		receives []int
		want     [][]string
	}{
		{
			name:     "SeveralOfOneGroupInOneBatch",
			sends:    [][2]string{{"a", "a1"}, {"a", "a2"}, {"a", "a3"}},
			receives: []int{10},
			want:     [][]string{{"a1", "a2", "a3"}},
		},
		{
			name:     "GroupByGroupOldestFirst",
			sends:    [][2]string{{"b", "b1"}, {"c", "c1"}, {"a", "a1"}, {"b", "b2"}, {"c", "c2"}, {"a", "a2"}},
			receives: []int{10},
			want:     [][]string{{"b1", "b2", "c1", "c2", "a1", "a2"}},
		},
		{
			name:     "MaxCutsAGroupWhoseRestWaits",
			sends:    [][2]string{{"a", "a1"}, {"a", "a2"}, {"a", "a3"}, {"b", "b1"}},
			receives: []int{2, 10, 10},
			want:     [][]string{{"a1", "a2"}, {"b1"}, nil},
		},
		{
			name:     "MaxFilledFromTheNextGroup",
			sends:    [][2]string{{"a", "a1"}, {"a", "a2"}, {"b", "b1"}, {"b", "b2"}, {"b", "b3"}, {"c", "c1"}},
			receives: []int{4, 10},
			want:     [][]string{{"a1", "a2", "b1", "b2"}, {"c1"}},
		},
		{
			name:     "MaxClampedToTen",
			sends:    twelve,
			receives: []int{50, 10},
			want:     [][]string{firstTen, nil},
		},
		{
			name:     "MaxClampedToOne",
			sends:    [][2]string{{"a", "a1"}, {"a", "a2"}, {"b", "b1"}},
			receives: []int{0, -3, 5},
			want:     [][]string{{"a1"}, {"b1"}, nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, queuetest.Options{})
			for _, s := range tt.sends {
				send(t, b.q, s[0], s[1])
			}
			for i, n := range tt.receives {
				if got := bodies(b.q.Receive(n)); !slices.Equal(got, tt.want[i]) {
					t.Errorf("receive %d (max %d) = %q, want %q", i+1, n, got, tt.want[i])
				}
			}
		})
	}
}

func TestReceiveSkipsGroupInFlight(t *testing.T) {
	t.Parallel()
	b := setup(t, queuetest.Options{})
	send(t, b.q, "a", "a1")
	send(t, b.q, "a", "a2")
	send(t, b.q, "b", "b1")

	first := b.q.Receive(1)
	if got := bodies(first); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("first receive = %q, want [a1]", got)
	}
	// a1 is in flight: a2 must wait although it is visible and older than b1.
	if got := bodies(b.q.Receive(10)); !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("second receive = %q, want [b1]", got)
	}
	send(t, b.q, "b", "b2")
	if got := b.q.Receive(10); len(got) != 0 {
		t.Fatalf("receive with both groups in flight = %q, want none", bodies(got))
	}
	if got := b.q.InFlight(); got != 2 {
		t.Errorf("InFlight = %d, want 2", got)
	}

	if err := b.q.Delete(first[0].ReceiptHandle); err != nil {
		t.Fatalf("delete a1: %v", err)
	}
	if got := bodies(b.q.Receive(10)); !slices.Equal(got, []string{"a2"}) {
		t.Fatalf("receive after deleting a1 = %q, want [a2]", got)
	}

	// Everything in flight was received at t0 with the 30 s default.
	b.clock.Advance(29 * time.Second)
	if got := b.q.Receive(10); len(got) != 0 {
		t.Fatalf("receive at 29s = %q, want none", bodies(got))
	}
	b.clock.Advance(time.Second)
	got := b.q.Receive(10)
	if !slices.Equal(bodies(got), []string{"a2", "b1", "b2"}) || !slices.Equal(counts(t, got), []int{2, 2, 1}) {
		t.Fatalf("receive at 30s = %q counts %v, want [a2 b1 b2] counts [2 2 1]", bodies(got), counts(t, got))
	}
}

func TestRecordAttributes(t *testing.T) {
	t.Parallel()
	b := setup(t, queuetest.Options{})
	long := "slack:T1:C1:" + strings.Repeat("1712345678.000100", 10) // over 128 characters
	if err := b.q.Send(t.Context(), queue.Message{Group: long, Dedup: "evt#slack#T1#E1", Body: []byte(`{"n":1}`)}); err != nil {
		t.Fatalf("send: %v", err)
	}
	b.clock.Advance(5 * time.Second)
	recs := b.q.Receive(10)
	if len(recs) != 1 {
		t.Fatalf("received %d, want 1", len(recs))
	}
	r := recs[0]
	sum := md5.Sum([]byte(`{"n":1}`))
	if r.MessageId == "" || r.ReceiptHandle == "" || r.Body != `{"n":1}` || r.EventSource != "aws:sqs" || r.Md5OfBody != hex.EncodeToString(sum[:]) {
		t.Errorf("record = %+v", r)
	}
	group := message.GroupID(long)
	if !strings.HasPrefix(group, "h-") {
		t.Fatalf("test key not long enough to be hashed: %q", group)
	}
	want := map[string]string{
		"MessageGroupId":                   group,
		"MessageDeduplicationId":           message.DedupID("evt#slack#T1#E1"),
		"SequenceNumber":                   "00000000000000000001",
		"ApproximateReceiveCount":          "1",
		"SentTimestamp":                    strconv.FormatInt(t0.UnixMilli(), 10),
		"ApproximateFirstReceiveTimestamp": strconv.FormatInt(t0.Add(5*time.Second).UnixMilli(), 10),
	}
	if !maps.Equal(r.Attributes, want) {
		t.Errorf("attributes = %v, want %v", r.Attributes, want)
	}

	if err := b.q.ChangeVisibility(t.Context(), r.ReceiptHandle, 0); err != nil {
		t.Fatalf("change visibility: %v", err)
	}
	b.clock.Advance(10 * time.Second)
	again := b.q.Receive(10)
	if len(again) != 1 {
		t.Fatalf("received again %d, want 1", len(again))
	}
	want["ApproximateReceiveCount"] = "2" // the first receive's timestamp stays
	if !maps.Equal(again[0].Attributes, want) {
		t.Errorf("attributes on second receive = %v, want %v", again[0].Attributes, want)
	}
	if again[0].MessageId != r.MessageId || again[0].ReceiptHandle == r.ReceiptHandle {
		t.Errorf("second receive id %q handle %q; want the same id %q and a new handle", again[0].MessageId, again[0].ReceiptHandle, r.MessageId)
	}
}

func TestRedrive(t *testing.T) {
	t.Parallel()

	t.Run("PoisonMessageAloneThenItsGroupServed", func(t *testing.T) {
		t.Parallel()
		clock := queuetest.NewClock(t0)
		dlq := queuetest.New(queuetest.Options{Now: clock.Now})
		q := queuetest.New(queuetest.Options{Now: clock.Now, MaxReceiveCount: 3, DLQ: dlq})
		send(t, q, "a", "a1")
		send(t, q, "b", "b1")
		var id string
		for round := 1; round <= 3; round++ {
			recs := q.Receive(1)
			if !slices.Equal(bodies(recs), []string{"a1"}) || receiveCount(t, recs[0]) != round {
				t.Fatalf("round %d: %q counts %v, want [a1] count %d", round, bodies(recs), counts(t, recs), round)
			}
			id = recs[0].MessageId
			if err := q.ChangeVisibility(t.Context(), recs[0].ReceiptHandle, 0); err != nil {
				t.Fatalf("round %d: change visibility: %v", round, err)
			}
			if round == 1 {
				send(t, q, "a", "a2")
			}
			clock.Advance(time.Second)
		}
		moved := clock.Now()

		// a1 has been received 3 times: the 4th receive moves it and serves
		// the rest of its group.
		recs := q.Receive(1)
		if !slices.Equal(bodies(recs), []string{"a2"}) || receiveCount(t, recs[0]) != 1 {
			t.Fatalf("4th receive = %q counts %v, want [a2] count 1", bodies(recs), counts(t, recs))
		}
		wantDead := []queuetest.Message{{
			ID: id, Group: "a", DedupID: message.DedupID("a1"), Body: []byte("a1"),
			ReceiveCount: 3, SentAt: t0, VisibleAt: moved,
		}}
		if got := q.DeadLettered(); !equalMessages(got, wantDead) {
			t.Errorf("DeadLettered = %+v, want %+v", got, wantDead)
		}
		if got := heldBodies(q.Messages()); !slices.Equal(got, []string{"b1", "a2"}) {
			t.Errorf("held = %q, want [b1 a2]", got)
		}
		wantDLQ := []queuetest.Message{{
			ID: id, Group: "a", DedupID: id, Body: []byte("a1"), SentAt: moved, VisibleAt: moved,
		}}
		if got := dlq.Messages(); !equalMessages(got, wantDLQ) {
			t.Errorf("DLQ messages = %+v, want %+v", got, wantDLQ)
		}
		if got := dlq.DeadLettered(); len(got) != 0 {
			t.Errorf("DLQ's own DeadLettered = %+v, want none", got)
		}
		dead := dlq.Receive(10)
		if len(dead) != 1 || dead[0].Body != "a1" || dead[0].Attributes["MessageGroupId"] != "a" || receiveCount(t, dead[0]) != 1 {
			t.Errorf("DLQ receive = %+v, want a1 of group a, count 1", dead)
		}
	})

	t.Run("GroupFailingTogetherMovesTogether", func(t *testing.T) {
		t.Parallel()
		// The consumer returns a failed record's whole group, so the whole
		// group's counts grow and it is dead-lettered together, as in SQS.
		b := setup(t, queuetest.Options{MaxReceiveCount: 2})
		send(t, b.q, "a", "a1")
		send(t, b.q, "a", "a2")
		for round := 1; round <= 2; round++ {
			recs := b.q.Receive(10)
			if !slices.Equal(bodies(recs), []string{"a1", "a2"}) || !slices.Equal(counts(t, recs), []int{round, round}) {
				t.Fatalf("round %d: %q counts %v", round, bodies(recs), counts(t, recs))
			}
			for _, r := range recs {
				if err := b.q.ChangeVisibility(t.Context(), r.ReceiptHandle, 0); err != nil {
					t.Fatalf("change visibility: %v", err)
				}
			}
		}
		send(t, b.q, "c", "c1")
		if got := bodies(b.q.Receive(10)); !slices.Equal(got, []string{"c1"}) {
			t.Errorf("3rd receive = %q, want [c1]", got)
		}
		if got := heldBodies(b.q.DeadLettered()); !slices.Equal(got, []string{"a1", "a2"}) {
			t.Errorf("DeadLettered = %q, want [a1 a2]", got)
		}
		if got := b.q.Len(); got != 1 {
			t.Errorf("Len = %d, want 1", got)
		}
	})

	t.Run("VisibilityExpiryCounts", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{MaxReceiveCount: 1})
		send(t, b.q, "a", "a1")
		if got := len(b.q.Receive(10)); got != 1 {
			t.Fatalf("received %d, want 1", got)
		}
		b.clock.Advance(30 * time.Second)
		if got := b.q.Receive(10); len(got) != 0 {
			t.Fatalf("receive after expiry = %q, want none", bodies(got))
		}
		if got := heldBodies(b.q.DeadLettered()); !slices.Equal(got, []string{"a1"}) || b.q.Len() != 0 {
			t.Errorf("DeadLettered = %q, Len %d; want [a1], 0", got, b.q.Len())
		}
	})

	t.Run("ZeroMeansNoRedrive", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{})
		send(t, b.q, "a", "a1")
		for round := 1; round <= 20; round++ {
			recs := b.q.Receive(10)
			if len(recs) != 1 || receiveCount(t, recs[0]) != round {
				t.Fatalf("round %d: %q counts %v", round, bodies(recs), counts(t, recs))
			}
			if err := b.q.ChangeVisibility(t.Context(), recs[0].ReceiptHandle, 0); err != nil {
				t.Fatalf("change visibility: %v", err)
			}
		}
		if got := b.q.DeadLettered(); len(got) != 0 {
			t.Errorf("DeadLettered = %+v, want none", got)
		}
	})
}

func equalMessages(a, b []queuetest.Message) bool {
	return slices.EqualFunc(a, b, func(x, y queuetest.Message) bool {
		return x.ID == y.ID && x.Group == y.Group && x.DedupID == y.DedupID && string(x.Body) == string(y.Body) &&
			x.ReceiveCount == y.ReceiveCount && x.SentAt.Equal(y.SentAt) && x.VisibleAt.Equal(y.VisibleAt)
	})
}

func TestChangeVisibility(t *testing.T) {
	t.Parallel()
	// The queue's own timeout is 3 h, so the message is still in flight
	// when a case first advances 2 h.
	const queueTimeout = 3 * time.Hour
	tests := []struct {
		name    string
		advance time.Duration // after the receive, before the change
		d       time.Duration
		wantErr error
		// wantVisible is when the message is visible after the call, from t0.
		wantVisible time.Duration
	}{
		{"ElevenHoursRightAfterReceive", 0, 11 * time.Hour, nil, 11 * time.Hour},
		{"ElevenHoursAfterTwoRefused", 2 * time.Hour, 11 * time.Hour, queuetest.ErrVisibilityLimit, queueTimeout},
		{"TenHoursAfterTwoReachesTheLimit", 2 * time.Hour, 10 * time.Hour, nil, 12 * time.Hour},
		{"TwelveHoursRightAfterReceive", 0, 43200 * time.Second, nil, 12 * time.Hour},
		{"Over43200sRefused", 0, 43201 * time.Second, queuetest.ErrVisibilityLimit, queueTimeout},
		{"Over43200sOnceRoundedUp", 0, 12*time.Hour + time.Nanosecond, queuetest.ErrVisibilityLimit, queueTimeout},
		{"RoundedUpToWholeSeconds", 0, 1500 * time.Millisecond, nil, 2 * time.Second},
		{"ZeroIsVisibleNow", time.Minute, 0, nil, time.Minute},
		{"NegativeIsVisibleNow", time.Minute, -5 * time.Second, nil, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, queuetest.Options{VisibilityTimeout: queueTimeout})
			send(t, b.q, "a", "a1")
			recs := b.q.Receive(10)
			b.clock.Advance(tt.advance)
			err := b.q.ChangeVisibility(t.Context(), recs[0].ReceiptHandle, tt.d)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ChangeVisibility(%v) after %v = %v, want %v", tt.d, tt.advance, err, tt.wantErr)
			}
			if got := b.q.Messages()[0].VisibleAt; !got.Equal(t0.Add(tt.wantVisible)) {
				t.Errorf("VisibleAt = +%v, want +%v", got.Sub(t0), tt.wantVisible)
			}
			wantInFlight := 0
			if tt.wantVisible > tt.advance {
				wantInFlight = 1
			}
			if got := b.q.InFlight(); got != wantInFlight {
				t.Errorf("InFlight = %d, want %d", got, wantInFlight)
			}
		})
	}

	t.Run("LimitCountsFromTheLatestReceive", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{})
		send(t, b.q, "a", "a1")
		b.q.Receive(10)
		b.clock.Advance(2 * time.Hour) // visible again since 30 s
		recs := b.q.Receive(10)
		if err := b.q.ChangeVisibility(t.Context(), recs[0].ReceiptHandle, 12*time.Hour); err != nil {
			t.Fatalf("12 h right after the second receive: %v", err)
		}
	})

	t.Run("ZeroServesTheMessageAgainInOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{})
		send(t, b.q, "a", "a1")
		send(t, b.q, "a", "a2")
		recs := b.q.Receive(10)
		for _, r := range recs {
			if err := b.q.ChangeVisibility(t.Context(), r.ReceiptHandle, 0); err != nil {
				t.Fatalf("change visibility: %v", err)
			}
		}
		again := b.q.Receive(10)
		if !slices.Equal(bodies(again), []string{"a1", "a2"}) || !slices.Equal(counts(t, again), []int{2, 2}) {
			t.Errorf("receive = %q counts %v, want [a1 a2] counts [2 2]", bodies(again), counts(t, again))
		}
	})
}

func TestStaleReceiptHandles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// handle receives a1 and makes its handle stale.
		handle  func(t *testing.T, b bundle) string
		wantLen int
	}{
		{"Unknown", func(t *testing.T, b bundle) string { return "rh-bogus" }, 1},
		{"Deleted", func(t *testing.T, b bundle) string {
			h := b.q.Receive(10)[0].ReceiptHandle
			if err := b.q.Delete(h); err != nil {
				t.Fatalf("delete: %v", err)
			}
			return h
		}, 0},
		{"VisibilityRanOut", func(t *testing.T, b bundle) string {
			h := b.q.Receive(10)[0].ReceiptHandle
			b.clock.Advance(30 * time.Second)
			return h
		}, 1},
		{"MadeVisibleByChange", func(t *testing.T, b bundle) string {
			h := b.q.Receive(10)[0].ReceiptHandle
			if err := b.q.ChangeVisibility(t.Context(), h, 0); err != nil {
				t.Fatalf("change visibility: %v", err)
			}
			return h
		}, 1},
		{"SupersededByALaterReceive", func(t *testing.T, b bundle) string {
			h := b.q.Receive(10)[0].ReceiptHandle
			b.clock.Advance(30 * time.Second)
			if got := len(b.q.Receive(10)); got != 1 {
				t.Fatalf("received again %d, want 1", got)
			}
			return h
		}, 1},
		{"OfAnotherQueue", func(t *testing.T, b bundle) string {
			other := queuetest.New(queuetest.Options{Now: b.clock.Now})
			send(t, other, "a", "a1")
			return other.Receive(10)[0].ReceiptHandle
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, queuetest.Options{})
			send(t, b.q, "a", "a1")
			h := tt.handle(t, b)
			if err := b.q.ChangeVisibility(t.Context(), h, time.Minute); !errors.Is(err, queue.ErrReceiptGone) {
				t.Errorf("ChangeVisibility = %v, want ErrReceiptGone", err)
			}
			if err := b.q.Delete(h); !errors.Is(err, queue.ErrReceiptGone) {
				t.Errorf("Delete = %v, want ErrReceiptGone", err)
			}
			if got := b.q.Len(); got != tt.wantLen {
				t.Errorf("Len = %d, want %d", got, tt.wantLen)
			}
		})
	}

	t.Run("LatestHandleStillWorks", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{})
		send(t, b.q, "a", "a1")
		b.q.Receive(10)
		b.clock.Advance(30 * time.Second)
		h := b.q.Receive(10)[0].ReceiptHandle
		if err := b.q.ChangeVisibility(t.Context(), h, time.Minute); err != nil {
			t.Fatalf("change visibility: %v", err)
		}
		if err := b.q.Delete(h); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if got := b.q.Len(); got != 0 {
			t.Errorf("Len = %d, want 0", got)
		}
	})
}

// sendStep is one send of a deduplication test, after advancing the clock.
type sendStep struct {
	advance     time.Duration
	dedup, body string
}

func TestDeduplication(t *testing.T) {
	t.Parallel()
	msg := func(dedup, body string) queue.Message {
		return queue.Message{Group: "a", Dedup: dedup, Body: []byte(body)}
	}
	tests := []struct {
		name   string
		window time.Duration
		steps  []sendStep
		// deleteFirst receives and deletes the first message before the
		// other sends.
		deleteFirst bool
		want        []string
	}{
		{
			name:  "DuplicateWithinWindowDropped",
			steps: []sendStep{{0, "k", "x"}, {4*time.Minute + 59*time.Second, "k", "y"}},
			want:  []string{"x"},
		},
		{
			name:        "DuplicateAfterDeleteStillDropped",
			deleteFirst: true,
			steps:       []sendStep{{0, "k", "x"}, {time.Minute, "k", "y"}},
			want:        nil,
		},
		{
			name:  "AcceptedOnceTheWindowEnds",
			steps: []sendStep{{0, "k", "x"}, {5 * time.Minute, "k", "y"}},
			want:  []string{"x", "y"},
		},
		{
			name: "DuplicatesDoNotExtendTheWindow",
			steps: []sendStep{
				{0, "k", "x"}, {4 * time.Minute, "k", "y"}, // dropped: x's window
				{time.Minute, "k", "z"}, {4 * time.Minute, "k", "w"}, // w dropped: z's window
			},
			want: []string{"x", "z"},
		},
		{
			name:  "OtherKeysUnaffected",
			steps: []sendStep{{0, "k", "x"}, {0, "j", "y"}},
			want:  []string{"x", "y"},
		},
		{
			name:   "WindowIsConfigurable",
			window: time.Minute,
			steps:  []sendStep{{0, "k", "x"}, {time.Minute, "k", "y"}},
			want:   []string{"x", "y"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, queuetest.Options{DedupWindow: tt.window})
			for i, s := range tt.steps {
				b.clock.Advance(s.advance)
				if err := b.q.Send(t.Context(), msg(s.dedup, s.body)); err != nil {
					t.Fatalf("send %s: %v", s.body, err)
				}
				if i == 0 && tt.deleteFirst {
					if err := b.q.Delete(b.q.Receive(10)[0].ReceiptHandle); err != nil {
						t.Fatalf("delete: %v", err)
					}
				}
			}
			if got := heldBodies(b.q.Messages()); !slices.Equal(got, tt.want) {
				t.Errorf("held = %q, want %q", got, tt.want)
			}
		})
	}

	t.Run("WithinOneBatch", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{})
		if err := b.q.SendBatch(t.Context(), []queue.Message{msg("k", "x"), msg("k", "y"), msg("j", "z")}); err != nil {
			t.Fatalf("send batch: %v", err)
		}
		if got := heldBodies(b.q.Messages()); !slices.Equal(got, []string{"x", "z"}) {
			t.Errorf("held = %q, want [x z]", got)
		}
	})

	t.Run("IDsShapedLikeTheRealQueue", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{})
		group := "telegram:42:" + strings.Repeat("9", 200)
		if err := b.q.Send(t.Context(), queue.Message{Group: group, Dedup: "evt#telegram#42#7", Body: []byte("x")}); err != nil {
			t.Fatalf("send: %v", err)
		}
		m := b.q.Messages()[0]
		if m.Group != message.GroupID(group) || len(m.Group) > 128 || m.DedupID != message.DedupID("evt#telegram#42#7") {
			t.Errorf("group %q dedup %q, want %q and %q", m.Group, m.DedupID, message.GroupID(group), message.DedupID("evt#telegram#42#7"))
		}
	})
}

func TestSizeLimit(t *testing.T) {
	t.Parallel()
	body := func(n int, c byte) []byte { return []byte(strings.Repeat(string(c), n)) }

	t.Run("Send", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{MaxMessageBytes: 100})
		if err := b.q.Send(t.Context(), queue.Message{Group: "a", Dedup: "1", Body: body(100, 'x')}); err != nil {
			t.Fatalf("100 bytes: %v", err)
		}
		if err := b.q.Send(t.Context(), queue.Message{Group: "a", Dedup: "2", Body: body(101, 'x')}); !errors.Is(err, queuetest.ErrTooLarge) {
			t.Fatalf("101 bytes: %v, want ErrTooLarge", err)
		}
		if got := b.q.Len(); got != 1 {
			t.Errorf("Len = %d, want 1", got)
		}
	})

	t.Run("DefaultIs256KiB", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{})
		if err := b.q.Send(t.Context(), queue.Message{Group: "a", Dedup: "1", Body: body(262144, 'x')}); err != nil {
			t.Fatalf("262144 bytes: %v", err)
		}
		if err := b.q.Send(t.Context(), queue.Message{Group: "a", Dedup: "2", Body: body(262145, 'x')}); !errors.Is(err, queuetest.ErrTooLarge) {
			t.Fatalf("262145 bytes: %v, want ErrTooLarge", err)
		}
	})

	t.Run("BatchEntryFailsItsChunkFromThere", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{MaxMessageBytes: 100})
		var msgs []queue.Message
		var want []string
		for i := range 14 {
			m := queue.Message{Group: "a", Dedup: strconv.Itoa(i), Body: []byte(strconv.Itoa(i))}
			if i == 11 {
				m.Body = body(101, 'x')
			}
			if i <= 10 {
				want = append(want, string(m.Body))
			}
			msgs = append(msgs, m)
		}
		err := b.q.SendBatch(t.Context(), msgs)
		var be *queue.BatchError
		if !errors.As(err, &be) {
			t.Fatalf("SendBatch = %v, want a *queue.BatchError", err)
		}
		// The second chunk is entries 10..13: 10 went in; 11, 12, 13 did not.
		if *be != (queue.BatchError{Failed: 3, Code: "InvalidParameterValue", SenderFault: true}) {
			t.Errorf("BatchError = %+v", *be)
		}
		if got := heldBodies(b.q.Messages()); !slices.Equal(got, want) {
			t.Errorf("held = %q, want %q", got, want)
		}
		// The caller's retry of the whole call completes the group in order.
		msgs[11].Body = []byte("11")
		if err := b.q.SendBatch(t.Context(), msgs); err != nil {
			t.Fatalf("retry: %v", err)
		}
		if got := b.q.Len(); got != 14 {
			t.Errorf("Len after retry = %d, want 14", got)
		}
	})

	t.Run("BatchOverTheLimitTogether", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{MaxMessageBytes: 100})
		var msgs []queue.Message
		for i := range 13 {
			n := 10 // the first chunk: 100 bytes together
			if i >= 10 {
				n = 40 // the second: 120 bytes together
			}
			msgs = append(msgs, queue.Message{Group: "a", Dedup: strconv.Itoa(i), Body: body(n, byte('a'+i))})
		}
		err := b.q.SendBatch(t.Context(), msgs)
		var be *queue.BatchError
		if !errors.Is(err, queuetest.ErrTooLarge) || errors.As(err, &be) {
			t.Fatalf("SendBatch = %v, want ErrTooLarge for the whole request", err)
		}
		if got := b.q.Len(); got != 10 {
			t.Errorf("Len = %d, want the first chunk's 10", got)
		}
	})
}

// TestCharacterRule_Finding1: SQS refuses a whole message whose body holds
// a character outside its set. The model checks the body as queue.Queue
// sends it: what queue.Body escapes (U+FFFE, U+FFFF, everything above
// U+FFFF) goes through and decodes to the same text; what no JSON body
// holds raw (a NUL) is refused, as SQS and fauxqs refuse it.
func TestCharacterRule_Finding1(t *testing.T) {
	t.Parallel()
	b := setup(t, queuetest.Options{})
	texts := []string{"😀 \uffff \ufffe", "\U0010ffff", "é 你好"}
	for i, s := range texts {
		body, _ := json.Marshal(map[string]string{"text": s})
		if err := b.q.Send(t.Context(), queue.Message{Group: "a", Dedup: strconv.Itoa(i), Body: body}); err != nil {
			t.Fatalf("send %q: %v", s, err)
		}
	}
	for i, r := range b.q.Receive(10) {
		var got struct{ Text string }
		if err := json.Unmarshal([]byte(r.Body), &got); err != nil || got.Text != texts[i] {
			t.Errorf("received %q, decoding to %q (%v); want %q", r.Body, got.Text, err, texts[i])
		}
		if strings.ContainsFunc(r.Body, func(r rune) bool { return r > 0xFFFD }) {
			t.Errorf("received %q: a character above U+FFFD was not escaped", r.Body)
		}
	}

	nul := []byte("{\"text\":\"nul \x00\"}")
	if err := b.q.Send(t.Context(), queue.Message{Group: "b", Dedup: "nul", Body: nul}); !errors.Is(err, queuetest.ErrInvalidContents) {
		t.Fatalf("send with a NUL: %v, want ErrInvalidContents", err)
	}
	err := b.q.SendBatch(t.Context(), []queue.Message{
		{Group: "b", Dedup: "ok", Body: []byte(`{"text":"ok"}`)},
		{Group: "b", Dedup: "nul", Body: nul},
		{Group: "b", Dedup: "after", Body: []byte(`{"text":"after"}`)},
	})
	var be *queue.BatchError
	if !errors.As(err, &be) || *be != (queue.BatchError{Failed: 2, Code: "InvalidMessageContents", SenderFault: true}) {
		t.Fatalf("SendBatch with a NUL = %v, want a BatchError InvalidMessageContents for it and the entry after", err)
	}
	if got := b.q.Len(); got != len(texts)+1 {
		t.Errorf("Len = %d, want %d: the entry before the refused one went in", got, len(texts)+1)
	}
}

func TestSendWithDoneContext(t *testing.T) {
	t.Parallel()
	b := setup(t, queuetest.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	m := queue.Message{Group: "a", Dedup: "1", Body: []byte("x")}
	if err := b.q.Send(ctx, m); !errors.Is(err, context.Canceled) {
		t.Errorf("Send = %v, want context.Canceled", err)
	}
	if err := b.q.SendBatch(ctx, []queue.Message{m}); !errors.Is(err, context.Canceled) {
		t.Errorf("SendBatch = %v, want context.Canceled", err)
	}
	if got := b.q.Len(); got != 0 {
		t.Errorf("Len = %d, want 0", got)
	}
}

type handlerFunc = func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// failing reports the records with these bodies as failed.
func failing(bodies ...string) handlerFunc {
	return func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, r := range ev.Records {
			if slices.Contains(bodies, r.Body) {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			}
		}
		return resp, nil
	}
}

var errBoom = errors.New("boom")

func TestPoll(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler func(b bundle) handlerFunc
		timeout time.Duration
		// wantErr is a sentinel, or a substring of the error.
		wantErr      error
		wantErrText  string
		wantLeft     []string
		wantInFlight int
	}{
		{
			name:     "DeletesAllOnSuccess",
			handler:  func(bundle) handlerFunc { return failing() },
			wantLeft: nil,
		},
		{
			name:         "DeletesOnlySuccesses",
			handler:      func(bundle) handlerFunc { return failing("b1") },
			wantLeft:     []string{"b1"},
			wantInFlight: 1,
		},
		{
			name: "HandlerErrorLeavesTheBatch",
			handler: func(bundle) handlerFunc {
				return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
					resp, _ := failing("b1")(ctx, ev)
					return resp, errBoom // the response is ignored
				}
			},
			wantErr:      errBoom,
			wantLeft:     []string{"a1", "b1", "c1"},
			wantInFlight: 3,
		},
		{
			name: "PanicLeavesTheBatch",
			handler: func(bundle) handlerFunc {
				return func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) { panic("kaboom") }
			},
			wantErrText:  "handler panicked: kaboom",
			wantLeft:     []string{"a1", "b1", "c1"},
			wantInFlight: 3,
		},
		{
			name: "UnknownItemIdentifierLeavesTheBatch",
			handler: func(bundle) handlerFunc {
				return func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
					return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "nope"}}}, nil
				}
			},
			wantErrText:  `"nope" is not in the batch`,
			wantLeft:     []string{"a1", "b1", "c1"},
			wantInFlight: 3,
		},
		{
			name: "ReturnAfterTheDeadlineLeavesTheBatch",
			handler: func(bundle) handlerFunc {
				return func(ctx context.Context, _ events.SQSEvent) (events.SQSEventResponse, error) {
					<-ctx.Done()
					return events.SQSEventResponse{}, nil
				}
			},
			timeout:      time.Millisecond,
			wantErrText:  "after its deadline",
			wantLeft:     []string{"a1", "b1", "c1"},
			wantInFlight: 3,
		},
		{
			name: "VisibilityRunOutDuringTheInvocation",
			handler: func(b bundle) handlerFunc {
				return func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
					b.clock.Advance(30 * time.Second)
					return events.SQSEventResponse{}, nil
				}
			},
			wantErr:  queue.ErrReceiptGone,
			wantLeft: []string{"a1", "b1", "c1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, queuetest.Options{})
			send(t, b.q, "a", "a1")
			send(t, b.q, "b", "b1")
			send(t, b.q, "c", "c1")
			n, err := b.q.Poll(t.Context(), tt.handler(b), 10, tt.timeout)
			if n != 3 {
				t.Errorf("Poll received %d, want 3", n)
			}
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("Poll = %v, want %v", err, tt.wantErr)
				}
			case tt.wantErrText != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErrText) {
					t.Errorf("Poll = %v, want an error containing %q", err, tt.wantErrText)
				}
			case err != nil:
				t.Errorf("Poll = %v, want nil", err)
			}
			if got := heldBodies(b.q.Messages()); !slices.Equal(got, tt.wantLeft) {
				t.Errorf("left = %q, want %q", got, tt.wantLeft)
			}
			if got := b.q.InFlight(); got != tt.wantInFlight {
				t.Errorf("InFlight = %d, want %d", got, tt.wantInFlight)
			}
			// What was left is served again once its visibility runs out.
			b.clock.Advance(30 * time.Second)
			again := b.q.Receive(10)
			if !slices.Equal(bodies(again), tt.wantLeft) {
				t.Errorf("received later = %q, want %q", bodies(again), tt.wantLeft)
			}
		})
	}

	t.Run("EmptyQueueDoesNotInvoke", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{})
		n, err := b.q.Poll(t.Context(), func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			t.Error("handler invoked on an empty queue")
			return events.SQSEventResponse{}, nil
		}, 10, 0)
		if n != 0 || err != nil {
			t.Errorf("Poll = %d, %v; want 0, nil", n, err)
		}
	})

	t.Run("AtMostMax", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{})
		for i := range 5 {
			send(t, b.q, "a", fmt.Sprintf("a%d", i))
		}
		var got int
		n, err := b.q.Poll(t.Context(), func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			got = len(ev.Records)
			return events.SQSEventResponse{}, nil
		}, 2, 0)
		if n != 2 || got != 2 || err != nil || b.q.Len() != 3 {
			t.Errorf("Poll = %d, %v; handler saw %d, Len %d; want 2, nil, 2, 3", n, err, got, b.q.Len())
		}
	})

	t.Run("DeadlineLikeLambda", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			timeout, want time.Duration
		}{{0, 30 * time.Second}, {2 * time.Minute, 2 * time.Minute}} {
			b := setup(t, queuetest.Options{})
			send(t, b.q, "a", "a1")
			var deadline time.Time
			var ok bool
			before := time.Now()
			_, err := b.q.Poll(t.Context(), func(ctx context.Context, _ events.SQSEvent) (events.SQSEventResponse, error) {
				deadline, ok = ctx.Deadline()
				return events.SQSEventResponse{}, nil
			}, 10, tc.timeout)
			after := time.Now()
			if err != nil || !ok || deadline.Before(before.Add(tc.want)) || deadline.After(after.Add(tc.want)) {
				t.Errorf("timeout %v: err %v, deadline %v (ok %v), want between %v and %v", tc.timeout, err, deadline, ok, before.Add(tc.want), after.Add(tc.want))
			}
		}
	})

	t.Run("DoneContext", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{})
		send(t, b.q, "a", "a1")
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		n, err := b.q.Poll(ctx, failing(), 10, 0)
		if n != 0 || !errors.Is(err, context.Canceled) || b.q.InFlight() != 0 {
			t.Errorf("Poll = %d, %v, InFlight %d; want 0, context.Canceled, 0", n, err, b.q.InFlight())
		}
	})
}

// TestConsumer runs Parley's consumer on the model: several records of one
// group arrive in one batch, which fauxqs never produces.
func TestConsumer(t *testing.T) {
	t.Parallel()
	b := setup(t, queuetest.Options{})
	var (
		mu   sync.Mutex
		seen []string // body@receiveCount, per group in order
	)
	c := &consumer.Consumer{
		Visibility: b.q,
		Log:        slog.New(slog.DiscardHandler),
		Handle: func(_ context.Context, r consumer.Record) error {
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s@%d", r.Body, r.ReceiveCount))
			mu.Unlock()
			if r.Body == "a2" && r.ReceiveCount == 1 {
				return consumer.Retry(errBoom, 10*time.Second)
			}
			return nil
		},
	}
	for _, m := range [][2]string{{"a", "a1"}, {"a", "a2"}, {"b", "b1"}, {"a", "a3"}} {
		send(t, b.q, m[0], m[1])
	}

	n, err := b.q.Poll(t.Context(), c.HandleSQS, 10, 30*time.Second)
	if n != 4 || err != nil {
		t.Fatalf("Poll = %d, %v; want 4, nil", n, err)
	}
	// a2 failed: it and a3 (never started) come back together in 10 s.
	held := b.q.Messages()
	if got := heldBodies(held); !slices.Equal(got, []string{"a2", "a3"}) {
		t.Fatalf("left = %q, want [a2 a3]", got)
	}
	for _, m := range held {
		if !m.VisibleAt.Equal(t0.Add(10 * time.Second)) {
			t.Errorf("%s visible at +%v, want +10s", m.Body, m.VisibleAt.Sub(t0))
		}
	}

	if err := b.q.Drain(t.Context(), b.clock, c.HandleSQS, 10, 30*time.Second); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	if got := b.clock.Now().Sub(t0); got != 10*time.Second {
		t.Errorf("Drain advanced the clock %v, want 10s", got)
	}
	var ofA []string
	for _, s := range seen {
		if strings.HasPrefix(s, "a") {
			ofA = append(ofA, s)
		}
	}
	if want := []string{"a1@1", "a2@1", "a2@2", "a3@2"}; !slices.Equal(ofA, want) {
		t.Errorf("group a handled %q, want %q", ofA, want)
	}
	if !slices.Contains(seen, "b1@1") || len(seen) != 5 {
		t.Errorf("handled %q, want b1@1 once besides group a", seen)
	}
}

func TestDrain(t *testing.T) {
	t.Parallel()

	t.Run("PlaysRedriveOutOnTheClock", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{MaxReceiveCount: 3})
		send(t, b.q, "a", "a1")
		if err := b.q.Drain(t.Context(), b.clock, failing("a1"), 10, 0); err != nil {
			t.Fatalf("Drain: %v", err)
		}
		// Received at 0, 30 and 60 s; moved when visible again at 90 s.
		if got := b.clock.Now().Sub(t0); got != 90*time.Second {
			t.Errorf("clock advanced %v, want 90s", got)
		}
		if got := b.q.DeadLettered(); len(got) != 1 || got[0].ReceiveCount != 3 || b.q.Len() != 0 {
			t.Errorf("DeadLettered = %+v, Len %d; want a1 after 3 receives, 0", got, b.q.Len())
		}
	})

	t.Run("GivesUpOnAHandlerThatNeverSucceeds", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{})
		send(t, b.q, "a", "a1")
		err := b.q.Drain(t.Context(), b.clock, failing("a1"), 10, 0)
		if err == nil || !strings.Contains(err.Error(), "1 messages left after 1000 polls") {
			t.Fatalf("Drain = %v, want it to give up", err)
		}
		// Polls alternate between a receive and an empty wait.
		if got := b.q.Messages()[0].ReceiveCount; got != 500 {
			t.Errorf("ReceiveCount = %d, want 500", got)
		}
	})

	t.Run("StopsAtAPollError", func(t *testing.T) {
		t.Parallel()
		b := setup(t, queuetest.Options{})
		send(t, b.q, "a", "a1")
		err := b.q.Drain(t.Context(), b.clock, func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{}, errBoom
		}, 10, 0)
		if !errors.Is(err, errBoom) || b.q.Messages()[0].ReceiveCount != 1 {
			t.Errorf("Drain = %v after %d receives, want errBoom after 1", err, b.q.Messages()[0].ReceiveCount)
		}
	})
}

func TestIntrospection(t *testing.T) {
	t.Parallel()
	b := setup(t, queuetest.Options{})
	if _, ok := b.q.NextVisible(); ok {
		t.Error("NextVisible on an empty queue reports a time")
	}
	send(t, b.q, "a", "a1")
	b.clock.Advance(time.Second)
	send(t, b.q, "b", "b1")
	m := b.q.Messages()
	if len(m) != 2 || !m[0].SentAt.Equal(t0) || !m[0].VisibleAt.Equal(t0) || m[0].ReceiveCount != 0 || m[0].ID == "" || m[0].ID == m[1].ID {
		t.Fatalf("Messages = %+v", m)
	}
	m[0].Body[0] = 'X' // a snapshot, not the queue's copy
	if got := string(b.q.Messages()[0].Body); got != "a1" {
		t.Errorf("body after changing a snapshot = %q, want a1", got)
	}

	b.q.Receive(1)
	b.clock.Advance(10 * time.Second)
	b.q.Receive(1)
	if got := b.q.InFlight(); got != 2 || b.q.Len() != 2 {
		t.Errorf("InFlight %d, Len %d; want 2, 2", got, b.q.Len())
	}
	if at, ok := b.q.NextVisible(); !ok || !at.Equal(t0.Add(31*time.Second)) {
		t.Errorf("NextVisible = +%v, %v; want +31s, true", at.Sub(t0), ok)
	}
}

// TestConcurrentUse runs producers and consumers at once (under -race): every
// message is handled exactly once and each group in send order.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	b := setup(t, queuetest.Options{})
	const groups, perGroup = 4, 50
	var (
		mu      sync.Mutex
		handled = map[string][]int{}
		total   int
	)
	var wg sync.WaitGroup
	for g := range groups {
		wg.Go(func() {
			for i := range perGroup {
				m := queue.Message{Group: strconv.Itoa(g), Dedup: fmt.Sprintf("%d-%d", g, i), Body: []byte(strconv.Itoa(i))}
				if err := b.q.Send(t.Context(), m); err != nil {
					t.Errorf("send: %v", err)
				}
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for {
				mu.Lock()
				done := total == groups*perGroup
				mu.Unlock()
				if done {
					return
				}
				for _, r := range b.q.Receive(3) {
					n, _ := strconv.Atoi(r.Body)
					mu.Lock()
					g := r.Attributes["MessageGroupId"]
					handled[g] = append(handled[g], n)
					total++
					mu.Unlock()
					if err := b.q.Delete(r.ReceiptHandle); err != nil {
						t.Errorf("delete: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	want := make([]int, perGroup)
	for i := range want {
		want[i] = i
	}
	for g := range groups {
		if got := handled[strconv.Itoa(g)]; !slices.Equal(got, want) {
			t.Errorf("group %d handled %v, want 0..%d in order", g, got, perGroup-1)
		}
	}
	if got := b.q.Len(); got != 0 {
		t.Errorf("Len = %d, want 0", got)
	}
}

func TestNewRefusesInvalidOptions(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return t0 }
	for name, o := range map[string]queuetest.Options{
		"NoNow":                 {},
		"NegativeReceiveCount":  {Now: now, MaxReceiveCount: -1},
		"VisibilityOver12Hours": {Now: now, VisibilityTimeout: 13 * time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				if recover() == nil {
					t.Error("New did not panic")
				}
			}()
			queuetest.New(o)
		})
	}
}
