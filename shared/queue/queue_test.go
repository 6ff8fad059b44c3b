package queue_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// received is one received message.
type received struct {
	body, group, dedup, handle string
	receiveCount               int
}

// receiveOne takes at most one message off url within wait seconds.
func receiveOne(t *testing.T, c *sqs.Client, url string, wait int32) (received, bool) {
	t.Helper()
	out, err := c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(url), MaxNumberOfMessages: 1, WaitTimeSeconds: wait,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	})
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	if len(out.Messages) == 0 {
		return received{}, false
	}
	m := out.Messages[0]
	n, _ := strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
	return received{
		body: aws.ToString(m.Body), handle: aws.ToString(m.ReceiptHandle), receiveCount: n,
		group: m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)],
		dedup: m.Attributes[string(types.MessageSystemAttributeNameMessageDeduplicationId)],
	}, true
}

// drain receives and deletes every message of url until it is empty for a
// second, and returns the bodies in receive order.
func drain(t *testing.T, c *sqs.Client, url string) []received {
	t.Helper()
	var got []received
	for {
		m, ok := receiveOne(t, c, url, 1)
		if !ok {
			return got
		}
		got = append(got, m)
		if _, err := c.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(m.handle)}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
}

func bodies(ms []received, group string) []string {
	var out []string
	for _, m := range ms {
		if group == "" || m.group == group {
			out = append(out, m.body)
		}
	}
	return out
}

func TestSend(t *testing.T) {
	t.Parallel()

	t.Run("SendKeepsOrderWithinAGroup", func(t *testing.T) {
		t.Parallel()
		env := emulatortest.New(t)
		q := queue.New(env.SQS, env.Resources.InboundURL)
		var want []string
		for i := range 6 {
			body := fmt.Sprint("turn ", i)
			want = append(want, body)
			if err := q.Send(t.Context(), queue.Message{Group: "telegram:1:42", Dedup: fmt.Sprint("evt#", i), Body: []byte(body)}); err != nil {
				t.Fatal(err)
			}
		}
		got := drain(t, env.SQS, env.Resources.InboundURL)
		if !slices.Equal(bodies(got, ""), want) {
			t.Fatalf("received %v, want %v", bodies(got, ""), want)
		}
		if got[0].group != "telegram:1:42" || got[0].dedup != message.DedupID("evt#0") {
			t.Fatalf("group %q, dedup %q; want the thread key and DedupID(evt#0)", got[0].group, got[0].dedup)
		}
	})

	t.Run("SendBatchKeepsOrderAcrossRequests", func(t *testing.T) {
		t.Parallel()
		env := emulatortest.New(t)
		q := queue.New(env.SQS, env.Resources.OutboundURL)
		// 25 messages, three SendMessageBatch requests, two interleaved
		// groups: each group must come out in its own order.
		var msgs []queue.Message
		want := map[string][]string{}
		for i := range 25 {
			g := []string{"slack:T1:C1", "slack:T1:C2"}[i%3/2]
			body := fmt.Sprintf("%s unit %02d", g, i)
			msgs = append(msgs, queue.Message{Group: g, Dedup: fmt.Sprint("int#", i), Body: []byte(body)})
			want[g] = append(want[g], body)
		}
		if err := q.SendBatch(t.Context(), msgs); err != nil {
			t.Fatal(err)
		}
		got := drain(t, env.SQS, env.Resources.OutboundURL)
		if len(got) != 25 {
			t.Fatalf("received %d messages, want 25", len(got))
		}
		for g, w := range want {
			if b := bodies(got, g); !slices.Equal(b, w) {
				t.Errorf("group %s received %v, want %v", g, b, w)
			}
		}
	})

	t.Run("SendBatchStopsAtARefusedEntry", func(t *testing.T) {
		t.Parallel()
		env := emulatortest.New(t)
		q := queue.New(env.SQS, env.Resources.OutboundURL)
		var msgs []queue.Message
		for i := range 25 {
			body := fmt.Sprint(i)
			if i == 12 {
				body = "nul \x00 is not allowed in SQS" // refused per entry
			}
			msgs = append(msgs, queue.Message{Group: fmt.Sprint("g", i), Dedup: fmt.Sprint("d", i), Body: []byte(body)})
		}
		err := q.SendBatch(t.Context(), msgs)
		var be *queue.BatchError
		if !errors.As(err, &be) || be.Failed != 1 || be.Code != "InvalidMessageContents" || !be.SenderFault {
			t.Fatalf("SendBatch = %v (%+v), want a BatchError for the one refused entry", err, be)
		}
		got := map[string]bool{}
		for _, m := range drain(t, env.SQS, env.Resources.OutboundURL) {
			got[m.body] = true
		}
		for i := range 10 {
			if !got[fmt.Sprint(i)] {
				t.Errorf("message %d of the first request missing", i)
			}
		}
		for i := 20; i < 25; i++ {
			if got[fmt.Sprint(i)] {
				t.Errorf("message %d sent after a request with a refused entry", i)
			}
		}
	})

	t.Run("SendBatchOfNothingSendsNothing", func(t *testing.T) {
		t.Parallel()
		env := emulatortest.New(t)
		if err := queue.New(env.SQS, env.Resources.OutboundURL).SendBatch(t.Context(), nil); err != nil {
			t.Fatalf("SendBatch(nil) = %v", err)
		}
	})

	t.Run("DedupIDDropsARepeat", func(t *testing.T) {
		t.Parallel()
		env := emulatortest.New(t)
		q := queue.New(env.SQS, env.Resources.InboundURL)
		ctx := t.Context()
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(q.Send(ctx, queue.Message{Group: "g", Dedup: "evt#telegram#1#100", Body: []byte("first")}))
		must(q.Send(ctx, queue.Message{Group: "g", Dedup: "evt#telegram#1#100", Body: []byte("repeat")}))
		// A batch repeating it, and repeating itself, within the window.
		must(q.SendBatch(ctx, []queue.Message{
			{Group: "g", Dedup: "evt#telegram#1#100", Body: []byte("batched repeat")},
			{Group: "g", Dedup: "evt#telegram#1#101", Body: []byte("second")},
			{Group: "g", Dedup: "evt#telegram#1#101", Body: []byte("second repeat")},
		}))
		if got := bodies(drain(t, env.SQS, env.Resources.InboundURL), ""); !slices.Equal(got, []string{"first", "second"}) {
			t.Fatalf("received %v, want [first second]: repeats of a dedup id are dropped", got)
		}
	})

	t.Run("GroupAndDedupKeysAreShaped", func(t *testing.T) {
		t.Parallel()
		env := emulatortest.New(t)
		q := queue.New(env.SQS, env.Resources.InboundURL)
		long := "slack:T0TEAM0001:C0CHANNEL1:" + strings.Repeat("1764432000.000100", 8) // > 128 chars
		keys := []string{
			long,
			"whatsapp:acct one:chat with spaces",
			"telegram:1:чат",
			long + "x", // differs from long only past its 128th character
		}
		for i, k := range keys {
			if err := q.Send(t.Context(), queue.Message{Group: k, Dedup: k + "#" + strings.Repeat("é", 200), Body: []byte(strconv.Itoa(i))}); err != nil {
				t.Fatalf("send with group key %q: %v", k, err)
			}
		}
		got := drain(t, env.SQS, env.Resources.InboundURL)
		if len(got) != len(keys) {
			t.Fatalf("received %d messages, want %d (one per key: shaped keys must not collide)", len(got), len(keys))
		}
		for _, m := range got {
			i, _ := strconv.Atoi(m.body)
			if m.group != message.GroupID(keys[i]) {
				t.Errorf("key %q: group %q, want %q", keys[i], m.group, message.GroupID(keys[i]))
			}
			if m.dedup != message.DedupID(keys[i]+"#"+strings.Repeat("é", 200)) {
				t.Errorf("key %q: dedup id %q is not DedupID of the key", keys[i], m.dedup)
			}
		}
	})
}

// visibilityRecorder records the VisibilityTimeout of every
// ChangeMessageVisibility request a client sends, as it goes on the wire.
type visibilityRecorder struct {
	mu   sync.Mutex
	secs []int32
	next aws.HTTPClient
}

func (r *visibilityRecorder) last() int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.secs) == 0 {
		return -1
	}
	return r.secs[len(r.secs)-1]
}

func (r *visibilityRecorder) Do(req *http.Request) (*http.Response, error) {
	if req.Header.Get("X-Amz-Target") == "AmazonSQS.ChangeMessageVisibility" {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		var in struct{ VisibilityTimeout int32 }
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, err
		}
		r.mu.Lock()
		r.secs = append(r.secs, in.VisibilityTimeout)
		r.mu.Unlock()
	}
	return r.next.Do(req)
}

// client returns an SQS client on env whose ChangeMessageVisibility requests
// are recorded as they are sent.
func (r *visibilityRecorder) client(env *emulatortest.Env) *sqs.Client {
	cfg := env.AWS.Copy()
	r.next = cfg.HTTPClient
	cfg.HTTPClient = r
	return sqs.NewFromConfig(cfg)
}

func TestChangeVisibility(t *testing.T) {
	t.Parallel()

	setup := func(t *testing.T) (*emulatortest.Env, *queue.Queue, *visibilityRecorder, received) {
		env := emulatortest.New(t)
		rec := &visibilityRecorder{}
		q := queue.New(rec.client(env), env.Resources.OutboundURL)
		if err := q.Send(t.Context(), queue.Message{Group: "g", Dedup: "d", Body: []byte("unit")}); err != nil {
			t.Fatal(err)
		}
		m, ok := receiveOne(t, env.SQS, env.Resources.OutboundURL, 5)
		if !ok {
			t.Fatal("sent message not received")
		}
		return env, q, rec, m
	}

	t.Run("ZeroMakesTheMessageVisibleAtOnce", func(t *testing.T) {
		t.Parallel()
		env, q, rec, m := setup(t)
		if err := q.ChangeVisibility(t.Context(), m.handle, 0); err != nil {
			t.Fatal(err)
		}
		// The queue's own visibility timeout is minutes: only the change
		// brings it back this soon.
		again, ok := receiveOne(t, env.SQS, env.Resources.OutboundURL, 2)
		if !ok || again.body != "unit" || again.receiveCount != 2 {
			t.Fatalf("after ChangeVisibility(0): received %+v (ok %v), want the message on its second receive", again, ok)
		}
		if rec.last() != 0 {
			t.Fatalf("VisibilityTimeout sent = %d, want 0", rec.last())
		}
	})

	t.Run("ThreeSecondsHidesThenReturns", func(t *testing.T) {
		t.Parallel()
		env, q, rec, m := setup(t)
		if err := q.ChangeVisibility(t.Context(), m.handle, 3*time.Second); err != nil {
			t.Fatal(err)
		}
		parked := time.Now()
		if rec.last() != 3 {
			t.Fatalf("VisibilityTimeout sent = %d, want 3", rec.last())
		}
		if _, ok := receiveOne(t, env.SQS, env.Resources.OutboundURL, 1); ok {
			t.Fatal("message visible within a second of being hidden for 3 s")
		}
		for {
			if again, ok := receiveOne(t, env.SQS, env.Resources.OutboundURL, 1); ok {
				if waited := time.Since(parked); waited < 2*time.Second {
					t.Fatalf("message back after %v, before its 3 s", waited)
				}
				if again.receiveCount != 2 {
					t.Fatalf("receive count %d, want 2", again.receiveCount)
				}
				return
			}
			if time.Since(parked) > 15*time.Second {
				t.Fatal("message still hidden 15 s after a 3 s visibility change")
			}
		}
	})

	t.Run("FractionalSecondsRoundUp", func(t *testing.T) {
		t.Parallel()
		env, q, rec, m := setup(t)
		// Ordered so the message stays in flight throughout; a platform's
		// retry_after is a minimum, so a fraction rounds up.
		for _, tc := range []struct {
			d    time.Duration
			want int32
		}{
			{time.Nanosecond, 1},
			{time.Millisecond, 1},
			{time.Second, 1},
			{1500 * time.Millisecond, 2},
			{2999 * time.Millisecond, 3},
			{3 * time.Second, 3},
			{3*time.Second + time.Nanosecond, 4},
			{13 * time.Hour, 12 * 60 * 60}, // SQS's maximum
			{20 * time.Minute, 1200},
		} {
			if err := q.ChangeVisibility(t.Context(), m.handle, tc.d); err != nil {
				t.Fatalf("ChangeVisibility(%v): %v", tc.d, err)
			}
			if got := rec.last(); got != tc.want {
				t.Errorf("ChangeVisibility(%v) sent %d s, want %d", tc.d, got, tc.want)
			}
		}
		// A negative delay is "now".
		if err := q.ChangeVisibility(t.Context(), m.handle, -5*time.Second); err != nil {
			t.Fatal(err)
		}
		if rec.last() != 0 {
			t.Fatalf("ChangeVisibility(-5s) sent %d s, want 0", rec.last())
		}
		if _, ok := receiveOne(t, env.SQS, env.Resources.OutboundURL, 2); !ok {
			t.Fatal("message not visible after ChangeVisibility(-5s)")
		}
	})

	t.Run("DeletedMessageIsReceiptGone", func(t *testing.T) {
		t.Parallel()
		env, q, _, m := setup(t)
		if _, err := env.SQS.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(env.Resources.OutboundURL), ReceiptHandle: aws.String(m.handle)}); err != nil {
			t.Fatal(err)
		}
		err := q.ChangeVisibility(t.Context(), m.handle, time.Second)
		if !errors.Is(err, queue.ErrReceiptGone) {
			t.Fatalf("ChangeVisibility of a deleted message = %v, want ErrReceiptGone", err)
		}
	})

	t.Run("HandleOfAnEarlierReceiveIsReceiptGone", func(t *testing.T) {
		t.Parallel()
		env, q, _, m := setup(t)
		if err := q.ChangeVisibility(t.Context(), m.handle, 0); err != nil {
			t.Fatal(err)
		}
		if _, ok := receiveOne(t, env.SQS, env.Resources.OutboundURL, 2); !ok {
			t.Fatal("message not received again")
		}
		err := q.ChangeVisibility(t.Context(), m.handle, time.Second)
		if !errors.Is(err, queue.ErrReceiptGone) {
			t.Fatalf("ChangeVisibility with the first receive's handle = %v, want ErrReceiptGone", err)
		}
	})

	t.Run("HandleNeverIssuedIsReceiptGone", func(t *testing.T) {
		t.Parallel()
		env := emulatortest.New(t)
		err := queue.New(env.SQS, env.Resources.OutboundURL).ChangeVisibility(t.Context(), "never-issued", time.Second)
		if !errors.Is(err, queue.ErrReceiptGone) {
			t.Fatalf("ChangeVisibility with a handle never issued = %v, want ErrReceiptGone", err)
		}
	})

	t.Run("OtherFailuresAreNotReceiptGone", func(t *testing.T) {
		t.Parallel()
		env := emulatortest.New(t)
		q := queue.New(env.SQS, env.Resources.OutboundURL+"-missing")
		err := q.ChangeVisibility(t.Context(), "handle", time.Second)
		if err == nil || errors.Is(err, queue.ErrReceiptGone) {
			t.Fatalf("ChangeVisibility on a missing queue = %v, want an error other than ErrReceiptGone", err)
		}
	})
}

func TestURL(t *testing.T) {
	t.Parallel()
	if got := queue.New(nil, "https://sqs.example/q.fifo").URL(); got != "https://sqs.example/q.fifo" {
		t.Fatalf("URL() = %q", got)
	}
}
