package ingress_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/syncbuf"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/localstack/callcount"
	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/triage"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// script is what a test request asks scriptReceiver to parse: the Parsed
// value itself, as JSON.
type script struct {
	Reply       *platform.Reply    `json:"reply,omitempty"`
	Events      []message.Event    `json:"events,omitempty"`
	Ignored     []platform.Ignored `json:"ignored,omitempty"`
	Ack         *platform.Reply    `json:"ack,omitempty"`
	Unavailable *platform.Reply    `json:"unavailable,omitempty"`
	Within      time.Duration      `json:"within,omitempty"`
}

// scriptReceiver is a platform whose requests carry their own parse result.
// A request verifies when its X-Test-Signature header is "valid".
type scriptReceiver struct {
	// verifyErr, parseErr replace Verify's and Parse's answers.
	verifyErr, parseErr error
	verified            atomic.Int32
}

func (*scriptReceiver) Platform() message.Platform { return "test" }

func (r *scriptReceiver) Verify(req *platform.Request) error {
	r.verified.Add(1)
	if r.verifyErr != nil {
		return r.verifyErr
	}
	if req.Header.Get("X-Test-Signature") != "valid" {
		return fmt.Errorf("%w: bad X-Test-Signature", platform.ErrUnauthorized)
	}
	return nil
}

func (r *scriptReceiver) Parse(req *platform.Request) (platform.Parsed, error) {
	if r.parseErr != nil {
		return platform.Parsed{}, r.parseErr
	}
	var s script
	if err := json.Unmarshal(req.Body, &s); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: %v", platform.ErrMalformed, err)
	}
	return platform.Parsed{Reply: s.Reply, Events: s.Events, Ignored: s.Ignored, Ack: s.Ack, Unavailable: s.Unavailable, Within: s.Within}, nil
}

// keyedReceiver verifies with keys it must fetch (platform.ContextVerifier):
// keysErr is what the fetch answers, and deadline what ctx allowed it.
type keyedReceiver struct {
	scriptReceiver
	keysErr  error
	deadline atomic.Int64 // ns from the call to ctx's deadline; -1: none
}

func (r *keyedReceiver) Verify(*platform.Request) error {
	return errors.New("the core called Verify on a ContextVerifier")
}

func (r *keyedReceiver) VerifyContext(ctx context.Context, req *platform.Request) error {
	r.deadline.Store(-1)
	if d, ok := ctx.Deadline(); ok {
		r.deadline.Store(int64(time.Until(d)))
	}
	if r.keysErr != nil {
		return r.keysErr
	}
	return r.scriptReceiver.Verify(req)
}

// handshakeReceiver answers a GET challenge before verification.
type handshakeReceiver struct{ scriptReceiver }

func (*handshakeReceiver) Handshake(req *platform.Request) (*platform.Reply, bool) {
	if req.Method != http.MethodGet {
		return nil, false
	}
	return &platform.Reply{Status: http.StatusOK, ContentType: "text/plain", Body: []byte(req.Query.Get("hub.challenge"))}, true
}

// rig is one test's pipeline on its own table and queue, with every AWS
// call counted and faults injectable.
type rig struct {
	t        *testing.T
	env      *emulatortest.Env
	pipeline *ingress.Pipeline
	store    *dynamostore.Store
	calls    *callcount.Counter
	faults   *awsfault.Injector
	logs     *syncbuf.Buffer
}

func newRig(t *testing.T, r platform.Receiver) *rig {
	t.Helper()
	env := emulatortest.New(t)
	b := &rig{t: t, env: env, faults: awsfault.New(), logs: &syncbuf.Buffer{}}
	cfg := b.faults.Attach(env.AWS)
	cfg, b.calls = callcount.Attach(cfg)
	b.store = dynamostore.New(env.DynamoDB, env.Resources.Table)
	b.pipeline = &ingress.Pipeline{
		Receiver: r,
		Claims:   dynamostore.New(dynamodb.NewFromConfig(cfg), env.Resources.Table),
		Queue:    queue.New(sqs.NewFromConfig(cfg), env.Resources.InboundURL),
		Now:      func() time.Time { return t0 },
		Log:      slog.New(slog.NewJSONHandler(b.logs, nil)),
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pipeline logs:\n%s", b.logText())
		}
	})
	return b
}

func (b *rig) logText() string { return b.logs.String() }

// post serves one request through the pipeline.
func (b *rig) post(body []byte, signed bool) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/test", bytes.NewReader(body))
	if signed {
		req.Header.Set("X-Test-Signature", "valid")
	}
	w := httptest.NewRecorder()
	b.pipeline.ServeHTTP(w, req)
	return w
}

func (b *rig) postScript(s script) *httptest.ResponseRecorder {
	body, err := json.Marshal(s)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.post(body, true)
}

// awsCalls is how many AWS calls the pipeline made.
func (b *rig) awsCalls() int {
	n := 0
	for _, c := range b.calls.Snapshot() {
		n += c
	}
	return n
}

// queued receives every message on the inbound queue (deleting them).
func (b *rig) queued() []queued {
	b.t.Helper()
	var out []queued
	for {
		res, err := b.env.SQS.ReceiveMessage(b.t.Context(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(b.env.Resources.InboundURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			b.t.Fatal(err)
		}
		if len(res.Messages) == 0 {
			return out
		}
		for _, m := range res.Messages {
			in, err := intent.DecodeInbound([]byte(aws.ToString(m.Body)))
			if err != nil {
				b.t.Fatalf("queued message does not decode: %v", err)
			}
			out = append(out, queued{in: in, group: m.Attributes["MessageGroupId"], dedup: m.Attributes["MessageDeduplicationId"]})
			if _, err := b.env.SQS.DeleteMessage(b.t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(b.env.Resources.InboundURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				b.t.Fatal(err)
			}
		}
	}
}

type queued struct {
	in           intent.Inbound
	group, dedup string
}

// claim reads an event's claim.
func (b *rig) claim(ev message.Event) (store.Claim, error) {
	return b.store.GetClaim(b.t.Context(), ev.Key(), t0)
}

// ack decodes a durable acknowledgement.
type ack struct {
	OK     bool `json:"ok"`
	Events []struct {
		EventID string `json:"event_id"`
		Result  string `json:"result"`
		Reason  string `json:"reason"`
	} `json:"events"`
}

func decodeAck(t *testing.T, w *httptest.ResponseRecorder) ack {
	t.Helper()
	if w.Code != http.StatusOK || w.Header().Get(ingress.HeaderAck) != ingress.AckDurable {
		t.Fatalf("status %d, %s %q: %s; want a durable 200", w.Code, ingress.HeaderAck, w.Header().Get(ingress.HeaderAck), w.Body)
	}
	var a ack
	dec := json.NewDecoder(bytes.NewReader(w.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("ack body %s: %v", w.Body, err)
	}
	return a
}

func (a ack) results() string {
	var parts []string
	for _, e := range a.Events {
		p := e.EventID + "=" + e.Result
		if e.Reason != "" {
			p += "(" + e.Reason + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

func TestPipelineAcknowledges(t *testing.T) {
	t.Parallel()

	t.Run("DurableAckAfterEnqueue", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		ev1, ev2 := humanEvent("101"), humanEvent("102")
		w := b.postScript(script{Events: []message.Event{ev1, ev2}, Ignored: []platform.Ignored{{Reason: "edited", ID: "100"}}})
		a := decodeAck(t, w)
		if w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("Content-Type %q", w.Header().Get("Content-Type"))
		}
		if !a.OK || a.results() != "100=ignored(edited) 101=enqueued 102=enqueued" {
			t.Fatalf("ack = %s (ok %v)", a.results(), a.OK)
		}
		// "reason" is left out when there is none.
		if strings.Count(w.Body.String(), `"reason"`) != 1 {
			t.Errorf("ack body %s: want reason only on the ignored event", w.Body)
		}
		got := b.queued()
		if len(got) != 2 {
			t.Fatalf("queued %d messages, want 2", len(got))
		}
		for i, ev := range []message.Event{ev1, ev2} {
			q := got[i]
			if q.in.Event.Key() != ev.Key() || q.in.Event.Text != ev.Text || !q.in.NotBefore.IsZero() {
				t.Errorf("message %d = %+v, want %s", i, q.in, ev.Key())
			}
			if q.group != ev.Thread.Key() || q.dedup != message.DedupID(ev.Key()) {
				t.Errorf("message %d group %q dedup %q; want the thread key and DedupID(event key)", i, q.group, q.dedup)
			}
			c, err := b.claim(ev)
			if err != nil || c.State != store.ClaimEnqueued || !c.ExpiresAt.Equal(t0.Add(store.DedupeTTL)) {
				t.Errorf("claim of %s = %+v, %v; want enqueued, remembered for store.DedupeTTL", ev.EventID, c, err)
			}
		}
	})

	t.Run("NoEventsIsAnEmptyList", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		w := b.postScript(script{})
		decodeAck(t, w)
		if strings.TrimSpace(w.Body.String()) != `{"ok":true,"events":[]}` {
			t.Fatalf("body = %s, want an empty events list, not null", w.Body)
		}
		if n := b.awsCalls(); n != 0 {
			t.Fatalf("%d AWS calls for a request without events", n)
		}
	})

	t.Run("RepeatIsADuplicate", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		ev := humanEvent("7")
		decodeAck(t, b.postScript(script{Events: []message.Event{ev}}))
		b.calls.Reset()
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "7=duplicate(duplicate)" {
			t.Fatalf("repeat ack = %s", a.results())
		}
		// Sent again, so an attempt that died between its key and its
		// enqueue loses nothing; the queue's deduplication drops the copy.
		if n := b.calls.Snapshot()["SQS.SendMessage"]; n != 1 {
			t.Fatalf("the repeat was sent %d times, want once more", n)
		}
		if n := b.calls.Total(callcount.Writes); n != 2 {
			t.Fatalf("the repeat made %d writes, want the refused key and the send", n)
		}
		if got := b.queued(); len(got) != 1 {
			t.Fatalf("queued %d messages, want 1", len(got))
		}
	})

	t.Run("HandshakeReplyWritesNothing", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		w := b.postScript(script{
			Reply:  &platform.Reply{Status: http.StatusOK, ContentType: "text/plain", Body: []byte("challenge-123")},
			Events: []message.Event{humanEvent("1")}, // a Reply wins: nothing is stored
		})
		if w.Code != http.StatusOK || w.Body.String() != "challenge-123" || w.Header().Get("Content-Type") != "text/plain" {
			t.Fatalf("handshake answer: %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body)
		}
		if w.Header().Get(ingress.HeaderAck) != ingress.AckHandshake {
			t.Fatalf("%s = %q, want %q", ingress.HeaderAck, w.Header().Get(ingress.HeaderAck), ingress.AckHandshake)
		}
		if n := b.awsCalls(); n != 0 {
			t.Fatalf("a handshake made %d AWS calls: %v", n, b.calls.Snapshot())
		}
	})

	t.Run("HandshakeBeforeVerification", func(t *testing.T) {
		t.Parallel()
		r := &handshakeReceiver{}
		b := newRig(t, r)
		req := httptest.NewRequest(http.MethodGet, "/test?hub.challenge=1158201444", nil)
		w := httptest.NewRecorder()
		b.pipeline.ServeHTTP(w, req)
		if w.Code != http.StatusOK || w.Body.String() != "1158201444" || w.Header().Get(ingress.HeaderAck) != ingress.AckHandshake {
			t.Fatalf("challenge answer: %d %q %q", w.Code, w.Header().Get(ingress.HeaderAck), w.Body)
		}
		if r.verified.Load() != 0 || b.awsCalls() != 0 {
			t.Fatalf("verified %d times, %d AWS calls; want neither", r.verified.Load(), b.awsCalls())
		}
	})

	t.Run("BotSenderIgnoredWithoutWrites", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		bot := humanEvent("9")
		bot.Sender.IsBot = true
		a := decodeAck(t, b.postScript(script{Events: []message.Event{bot}}))
		if a.results() != "9=ignored(bot)" {
			t.Fatalf("ack = %s, want the bot's message ignored", a.results())
		}
		if n := b.awsCalls(); n != 0 {
			t.Fatalf("a bot's message made %d AWS calls: %v", n, b.calls.Snapshot())
		}
	})

	t.Run("ProactiveEventFromABotIsAccepted", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		ev := proactiveEvent("ci-1")
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "ci-1=enqueued" {
			t.Fatalf("ack = %s: proactive events come from machines", a.results())
		}
	})
}

func TestPipelineFailures(t *testing.T) {
	t.Parallel()

	t.Run("SecondEnqueueFailsThenRetrySucceeds", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		sends := 0
		fired := b.faults.Add(awsfault.Fault{Op: "SQS.SendMessage", Match: func(any) bool { sends++; return sends == 2 }})
		ev1, ev2 := humanEvent("201"), humanEvent("202")
		body, _ := json.Marshal(script{Events: []message.Event{ev1, ev2}})

		w := b.post(body, true)
		if w.Code != http.StatusServiceUnavailable || fired() != 1 {
			t.Fatalf("status %d (fault fired %d times), want 503: the second event is not durable", w.Code, fired())
		}
		if w.Header().Get(ingress.HeaderAck) != "" {
			t.Fatalf("a failed request carries %s: %q", ingress.HeaderAck, w.Header().Get(ingress.HeaderAck))
		}
		if c, err := b.claim(ev1); err != nil || c.State != store.ClaimEnqueued {
			t.Fatalf("first event's claim = %+v, %v; want enqueued (durable)", c, err)
		}
		if _, err := b.claim(ev2); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("second event's claim: %v; want it forgotten", err)
		}

		// The platform retries the same request.
		a := decodeAck(t, b.post(body, true))
		if a.results() != "201=duplicate(duplicate) 202=enqueued" {
			t.Fatalf("retry ack = %s, want the first a duplicate and the second enqueued", a.results())
		}
		var keys []string
		for _, q := range b.queued() {
			keys = append(keys, q.in.Event.EventID)
		}
		if strings.Join(keys, ",") != "201,202" {
			t.Fatalf("queued %v, want each event once, in order", keys)
		}
		if c, err := b.claim(ev2); err != nil || c.State != store.ClaimEnqueued || c.Attempts != 1 {
			t.Fatalf("second event's claim = %+v, %v; want enqueued, claimed anew", c, err)
		}
	})

	// The key and the send are written at once. A key that cannot be
	// written does not undo a send that succeeded: the event is on the
	// queue, so the ack is true, and a redelivery is absorbed downstream.
	t.Run("KeyFailsSendSucceedsIsDurable", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		ev := humanEvent("1")
		fired := b.faults.Add(awsfault.Fault{Op: "DynamoDB.PutItem"}) // a person's event is claimed with one PutItem
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "1=enqueued" || fired() != 1 {
			t.Fatalf("ack = %s (fault fired %d times), want enqueued: the event is on the queue", a.results(), fired())
		}
		if got := b.queued(); len(got) != 1 || got[0].in.Event.EventID != "1" {
			t.Fatalf("queued %+v, want the event once", got)
		}
		if _, err := b.claim(ev); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("claim: %v; want none (its write failed)", err)
		}
		if n := strings.Count(b.logText(), `"msg":"event key not written; the event is queued`); n != 1 {
			t.Fatalf("the missing key is logged %d times, want once", n)
		}
	})

	t.Run("KeyAndSendFailIs503", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		ev := humanEvent("2")
		b.faults.Add(awsfault.Fault{Op: "DynamoDB.PutItem"})
		b.faults.Add(awsfault.Fault{Op: "SQS.SendMessage"})
		if w := b.postScript(script{Events: []message.Event{ev}}); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503: neither write happened", w.Code)
		}
		if got := b.queued(); len(got) != 0 {
			t.Fatalf("queued %d messages, want none", len(got))
		}
		if _, err := b.claim(ev); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("claim: %v; want none", err)
		}
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "2=enqueued" {
			t.Fatalf("retry ack = %s, want enqueued", a.results())
		}
	})

	// The ack waits for the slower of its two writes, not for their sum:
	// the key is written while the send is in flight.
	t.Run("KeyIsWrittenWhileTheSendIsInFlight", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		ev := humanEvent("3")
		started := make(chan struct{})
		b.pipeline.Queue = &startedQueue{next: b.pipeline.Queue, started: started}
		b.pipeline.Claims = claimsAfter{Claims: b.pipeline.Claims, started: started}
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "3=enqueued" {
			t.Fatalf("ack = %s", a.results())
		}
		if c, err := b.claim(ev); err != nil || c.State != store.ClaimEnqueued {
			t.Fatalf("claim = %+v, %v; want enqueued", c, err)
		}
	})

	// WhatsApp redelivers for up to about 7 days: its last copy still
	// finds the key.
	t.Run("RedeliveryAtTheEndOfTheRetryWindowIsADuplicate", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		ev := humanEvent("401")
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "401=enqueued" {
			t.Fatalf("first ack = %s", a.results())
		}
		b.pipeline.Now = func() time.Time { return t0.Add(7*24*time.Hour + 12*time.Hour) }
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "401=duplicate(duplicate)" {
			t.Fatalf("redelivery 7.5 days on: ack = %s, want a duplicate", a.results())
		}
	})

	t.Run("ConcurrentDuplicateWhileTheFirstHoldsTheClaim", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		gate := &gatedQueue{next: b.pipeline.Queue, entered: make(chan struct{}), release: make(chan struct{})}
		b.pipeline.Queue = gate
		ev := humanEvent("301")
		body, _ := json.Marshal(script{Events: []message.Event{ev}})

		first := make(chan *httptest.ResponseRecorder)
		go func() { first <- b.post(body, true) }()
		select {
		case <-gate.entered: // the first request is mid-enqueue
		case <-time.After(30 * time.Second):
			t.Fatal("first request never reached the queue")
		}
		// Its key is written beside the send: wait until it holds it.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := b.claim(ev); err == nil {
				break
			} else if time.Now().After(deadline) {
				close(gate.release)
				t.Fatalf("the first request never wrote its key: %v", err)
			}
		}
		// The key is taken: the duplicate sends its own copy (the first
		// may yet die before its enqueue) and is answered at once.
		if a := decodeAck(t, b.post(body, true)); a.results() != "301=duplicate(duplicate)" {
			t.Fatalf("concurrent duplicate ack = %s", a.results())
		}
		close(gate.release)
		if a := decodeAck(t, <-first); a.results() != "301=enqueued" {
			t.Fatalf("first request ack = %s", a.results())
		}
		if n := gate.sends.Load(); n != 2 {
			t.Fatalf("sent %d times, want twice", n)
		}
		if got := b.queued(); len(got) != 1 {
			t.Fatalf("queued %d messages, want 1: the queue deduplicates the copy", len(got))
		}
	})
}

// startedQueue closes started when its first Send begins.
type startedQueue struct {
	next    ingress.Enqueuer
	started chan struct{}
	once    sync.Once
}

func (q *startedQueue) Send(ctx context.Context, m queue.Message) error {
	q.once.Do(func() { close(q.started) })
	return q.next.Send(ctx, m)
}

// claimsAfter writes a claim only once started is closed, and fails it if
// that takes longer than a few seconds.
type claimsAfter struct {
	store.Claims
	started <-chan struct{}
}

func (c claimsAfter) Claim(ctx context.Context, key string, spec store.ClaimSpec) (store.Claim, error) {
	select {
	case <-c.started:
	case <-time.After(5 * time.Second):
		return store.Claim{}, errors.New("the send did not start while the key was being written")
	}
	return c.Claims.Claim(ctx, key, spec)
}

// gatedQueue holds the first Send until released.
type gatedQueue struct {
	next             ingress.Enqueuer
	entered, release chan struct{}
	sends            atomic.Int32
}

func (g *gatedQueue) Send(ctx context.Context, m queue.Message) error {
	if g.sends.Add(1) == 1 {
		close(g.entered)
		<-g.release
	}
	return g.next.Send(ctx, m)
}

func TestPipelineRefuses(t *testing.T) {
	t.Parallel()
	const marker = "BODY-MARKER-s3cret-text"
	body := []byte(`{"events":[{"platform":"test","event_id":"1","text":"` + marker + `"}]}`)
	cases := []struct {
		name      string
		verifyErr error
		parseErr  error
		unsigned  bool
		want      int
	}{
		{name: "Unauthorized", verifyErr: fmt.Errorf("%w: wrong secret token", platform.ErrUnauthorized), want: http.StatusUnauthorized},
		{name: "Unsigned", unsigned: true, want: http.StatusUnauthorized},
		{name: "Stale", verifyErr: fmt.Errorf("%w: timestamp 900 s old", platform.ErrStale), want: http.StatusUnauthorized},
		{name: "MalformedHeader", verifyErr: fmt.Errorf("%w: bad timestamp header", platform.ErrMalformed), want: http.StatusBadRequest},
		{name: "MalformedBody", parseErr: fmt.Errorf("%w: update is not a JSON object", platform.ErrMalformed), want: http.StatusBadRequest},
		{name: "Unprocessable", parseErr: fmt.Errorf("%w: unknown target", platform.ErrUnprocessable), want: http.StatusUnprocessableEntity},
		{name: "TooLarge", parseErr: fmt.Errorf("%w: nested", platform.ErrTooLarge), want: http.StatusRequestEntityTooLarge},
		{name: "UnclassifiedParseError", parseErr: errors.New("parser confused"), want: http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newRig(t, &scriptReceiver{verifyErr: tc.verifyErr, parseErr: tc.parseErr})
			w := b.post(body, !tc.unsigned)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d", w.Code, tc.want)
			}
			if strings.Contains(w.Body.String(), marker) || strings.Contains(b.logText(), marker) {
				t.Fatalf("the refusal echoes the request body: %q", w.Body)
			}
			if want := cmpOr(tc.verifyErr, tc.parseErr); want != nil && !strings.Contains(w.Body.String(), want.Error()) {
				t.Errorf("body %q does not give the reason %q", w.Body, want)
			}
			if (tc.want == http.StatusMethodNotAllowed) != (w.Header().Get("Allow") == http.MethodPost) {
				t.Errorf("Allow = %q", w.Header().Get("Allow"))
			}
			if w.Header().Get(ingress.HeaderAck) != "" {
				t.Errorf("a refusal carries %s", ingress.HeaderAck)
			}
			if n := b.awsCalls(); n != 0 {
				t.Fatalf("a refused request made %d AWS calls", n)
			}
		})
	}

	t.Run("BodyOverTheLimit", func(t *testing.T) {
		t.Parallel()
		r := &scriptReceiver{}
		b := newRig(t, r)
		b.pipeline.MaxBody = 64
		w := b.post([]byte(strings.Repeat("x", 65)), true)
		if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "64") {
			t.Fatalf("status %d %q, want 413 naming the limit", w.Code, w.Body)
		}
		if r.verified.Load() != 0 || b.awsCalls() != 0 {
			t.Fatal("an oversized body went on to verification or AWS")
		}
		if w := b.post([]byte(`{"events":[]}`+strings.Repeat(" ", 64-13)), true); w.Code != http.StatusOK {
			t.Fatalf("a body of exactly the limit: status %d", w.Code)
		}
	})

	// Unset, the limit is the receiver's own, else the core's default; set,
	// it is the operator's, either way.
	t.Run("BodyLimitOfTheReceiver", func(t *testing.T) {
		t.Parallel()
		body := func(n int) []byte { return []byte(`{"events":[]}` + strings.Repeat(" ", n-13)) }
		for _, tc := range []struct {
			name     string
			receiver platform.Receiver
			maxBody  int64
			limit    int
		}{
			{"Default", &scriptReceiver{}, 0, platform.DefaultMaxBody},
			{"Receivers", limitedReceiver{&scriptReceiver{}, 2 << 20}, 0, 2 << 20},
			{"Operators", limitedReceiver{&scriptReceiver{}, 2 << 20}, 4096, 4096},
		} {
			b := newRig(t, tc.receiver)
			b.pipeline.MaxBody = tc.maxBody
			if w := b.post(body(tc.limit), true); w.Code != http.StatusOK {
				t.Errorf("%s: a body of exactly %d bytes: status %d", tc.name, tc.limit, w.Code)
			}
			if w := b.post(body(tc.limit+1), true); w.Code != http.StatusRequestEntityTooLarge {
				t.Errorf("%s: a body of %d bytes: status %d, want 413", tc.name, tc.limit+1, w.Code)
			}
		}
	})
}

// limitedReceiver is a platform.BodyLimiter.
type limitedReceiver struct {
	*scriptReceiver
	max int64
}

func (r limitedReceiver) MaxBody() int64 { return r.max }

func cmpOr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// fakeTriage decides proactive events as told, recording reverts.
type fakeTriage struct {
	decision triage.Decision
	err      error
	reverted atomic.Int32
	admitted atomic.Int32
}

func (f *fakeTriage) Admit(context.Context, message.Event, time.Time, string) (triage.Decision, error) {
	f.admitted.Add(1)
	d := f.decision
	d.Revert = func(context.Context) error { f.reverted.Add(1); return nil }
	return d, f.err
}

// TestPipelineRefusesOtherMethods: every method but POST is refused once, by
// the pipeline, before any receiver looks at the request, and writes nothing.
// TestPipelineRefusesWhatTheQueueCannotCarry (finding 8.12): an event whose
// inbound message would exceed the queue's maximum size is refused with 413
// and a reason, before any write, and the request's other events with it.
// TestUnreachableKeysAreRetryableNot401: a receiver whose keys come over
// the network is verified within a bounded deadline, and keys it cannot
// fetch answer 503 with Retry-After, writing nothing: a 401 may be final
// for the platform, and the request may be genuine.
func TestUnreachableKeysAreRetryableNot401(t *testing.T) {
	t.Parallel()
	body, _ := json.Marshal(script{Events: []message.Event{humanEvent("1")}})
	r := &keyedReceiver{keysErr: fmt.Errorf("%w: key endpoint unreachable", platform.ErrUnavailable)}
	b := newRig(t, r)
	w := b.post(body, true)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("answer %d (Retry-After %q), want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	if n := b.awsCalls(); n != 0 {
		t.Fatalf("%d AWS calls for a request that could not be verified", n)
	}
	if d := time.Duration(r.deadline.Load()); d <= 0 || d > platform.MaxVerifyWait {
		t.Fatalf("VerifyContext had %s until its deadline, want at most %s", d, platform.MaxVerifyWait)
	}
	r.keysErr = nil
	if a := decodeAck(t, b.post(body, true)); a.results() != "1=enqueued" {
		t.Fatalf("once the keys are back: %s", a.results())
	}
}

func TestPipelineRefusesWhatTheQueueCannotCarry(t *testing.T) {
	t.Parallel()
	b := newRig(t, &scriptReceiver{})
	b.pipeline.MaxMessage = 8 << 10
	small, big := humanEvent("1"), humanEvent("2")
	big.Text = strings.Repeat("x", 9<<10)
	w := b.postScript(script{Events: []message.Event{small, big}})
	if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "encodes to") {
		t.Fatalf("answer %d %q, want 413 with the reason", w.Code, w.Body)
	}
	if n := b.awsCalls(); n != 0 {
		t.Fatalf("%d AWS calls for a refused request: %v", n, b.calls.Snapshot())
	}
	// Markup fits: it is not escaped on the way.
	markup := humanEvent("3")
	markup.Text = strings.Repeat("<>&", 2<<10) // 6 KiB; 36 KiB if escaped
	if a := decodeAck(t, b.postScript(script{Events: []message.Event{markup}})); a.results() != "3=enqueued" {
		t.Fatalf("ack = %s", a.results())
	}
	// Emoji are measured as the queue takes them, escaped (finding 1).
	emoji := humanEvent("4")
	emoji.Text = strings.Repeat("😀", 768) // 3 KiB; 9 KiB escaped
	if w := b.postScript(script{Events: []message.Event{emoji}}); w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("emoji over the limit once escaped: answer %d %q, want 413", w.Code, w.Body)
	}
}

func TestPipelineRefusesOtherMethods(t *testing.T) {
	t.Parallel()
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			r := &scriptReceiver{}
			b := newRig(t, r)
			req := httptest.NewRequest(method, "/test", strings.NewReader(`{"events":[]}`))
			req.Header.Set("X-Test-Signature", "valid")
			w := httptest.NewRecorder()
			b.pipeline.ServeHTTP(w, req)
			if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != http.MethodPost {
				t.Fatalf("status %d, Allow %q; want 405 with Allow: POST", w.Code, w.Header().Get("Allow"))
			}
			if !strings.Contains(w.Body.String(), method) {
				t.Errorf("body %q does not name the method", w.Body)
			}
			if r.verified.Load() != 0 || b.awsCalls() != 0 {
				t.Fatalf("verify ran %d times, %d AWS calls; want none", r.verified.Load(), b.awsCalls())
			}
		})
	}
}

func TestPipelineTriage(t *testing.T) {
	t.Parallel()

	t.Run("SuppressedIsSettledNotEnqueued", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		b.pipeline.Triage = &fakeTriage{decision: triage.Decision{Reason: "cooldown"}}
		ev := proactiveEvent("s1")
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "s1=suppressed(cooldown)" {
			t.Fatalf("ack = %s", a.results())
		}
		if c, err := b.claim(ev); err != nil || c.State != store.ClaimSuppressed || c.Reason != "cooldown" {
			t.Fatalf("claim = %+v, %v; want suppressed for cooldown", c, err)
		}
		if n := b.calls.Snapshot()["SQS.SendMessage"]; n != 0 {
			t.Fatalf("a suppressed event was enqueued")
		}
		// The suppression is remembered: a retry is a duplicate.
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "s1=duplicate(duplicate)" {
			t.Fatalf("retry ack = %s", a.results())
		}
	})

	// Finding 8.7: a deferred event waited in a group of its own
	// ("<thread>#deferred"), so its turn could run beside the thread's
	// own turns. It is held on its claim instead, and the sweeper enqueues
	// it on the thread's own group when due.
	t.Run("DeferredIsHeldOnItsClaimNotQueued", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		b.pipeline.Triage = &fakeTriage{decision: triage.Decision{Accepted: true, NotBefore: t0.Add(9 * time.Hour)}}
		ev := proactiveEvent("d1")
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "d1=deferred" {
			t.Fatalf("ack = %s, want deferred", a.results())
		}
		if got := b.queued(); len(got) != 0 {
			t.Fatalf("queued %+v, want nothing until it is due", got)
		}
		c, err := b.claim(ev)
		if err != nil || c.State != store.ClaimDeferred || !c.DueAt.Equal(t0.Add(9*time.Hour)) {
			t.Fatalf("claim = %+v, %v; want deferred until the end of quiet hours", c, err)
		}
		in, err := intent.DecodeInbound(c.Body)
		if err != nil || in.Event.Key() != ev.Key() || !in.ReceivedAt.Equal(t0.Add(9*time.Hour)) {
			t.Fatalf("held message = %+v, %v; want the event, its age counted from when it is due", in, err)
		}
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "d1=duplicate(duplicate)" {
			t.Fatalf("retry ack = %s", a.results())
		}
	})

	t.Run("HumanMessagesSkipTriage", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		tr := &fakeTriage{decision: triage.Decision{Reason: "quiet_hours"}}
		b.pipeline.Triage = tr
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{humanEvent("h1")}})); a.results() != "h1=enqueued" || tr.admitted.Load() != 0 {
			t.Fatalf("ack = %s, triage asked %d times", a.results(), tr.admitted.Load())
		}
	})

	t.Run("EnqueueFailureRevertsTriage", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		tr := &fakeTriage{decision: triage.Decision{Accepted: true}}
		b.pipeline.Triage = tr
		b.faults.Add(awsfault.Fault{Op: "SQS.SendMessage"})
		ev := proactiveEvent("r1")
		if w := b.postScript(script{Events: []message.Event{ev}}); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503", w.Code)
		}
		if tr.reverted.Load() != 1 {
			t.Fatalf("triage reverted %d times, want once", tr.reverted.Load())
		}
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "r1=enqueued" {
			t.Fatalf("retry ack = %s", a.results())
		}
	})

	// Finding 8.11: when the enqueue failed and the give-back failed too, the
	// platform's retry of the same event hit its own cooldown and was
	// answered suppressed: lost. What was counted stays on the claim, and
	// the retry is accepted without being counted again.
	t.Run("FailedRevertNeverSuppressesTheEventsOwnRetry", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		tr, err := triage.New(triage.Config{Default: triage.Policy{Cooldown: 10 * time.Minute, DailyCap: 1}}, b.pipeline.Claims.(*dynamostore.Store), nil)
		if err != nil {
			t.Fatal(err)
		}
		b.pipeline.Triage = tr
		b.faults.Add(awsfault.Fault{Op: "SQS.SendMessage"})
		b.faults.Add(awsfault.Fault{Op: "DynamoDB.UpdateItem", Match: func(in any) bool {
			u, ok := in.(*dynamodb.UpdateItemInput)
			if !ok {
				return false
			}
			pk, _ := u.Key["pk"].(*ddbtypes.AttributeValueMemberS)
			return pk != nil && strings.HasPrefix(pk.Value, triage.KeyPrefix) && strings.Contains(aws.ToString(u.ConditionExpression), "#acc = :tok")
		}})
		ev := proactiveEvent("r2")
		if w := b.postScript(script{Events: []message.Event{ev}}); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503", w.Code)
		}
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{ev}})); a.results() != "r2=enqueued" {
			t.Fatalf("retry ack = %s, want enqueued: the event's own count must not refuse it", a.results())
		}
		c, err := b.store.GetCounter(t.Context(), triage.CounterKey(ev.Thread))
		if err != nil || c.Days[t0.Format(triage.DayLayout)] != 1 {
			t.Fatalf("counter = %+v, %v; want the event counted once", c, err)
		}
		// Another event is held to the cap the first one used.
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{proactiveEvent("r3")}})); a.results() != "r3=suppressed(cooldown)" {
			t.Fatalf("next event ack = %s", a.results())
		}
	})

	t.Run("TriageFailureReleasesTheClaim", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		tr := &fakeTriage{err: errors.New("counter table unavailable")}
		b.pipeline.Triage = tr
		ev := proactiveEvent("e1")
		if w := b.postScript(script{Events: []message.Event{ev}}); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503", w.Code)
		}
		if c, err := b.claim(ev); err != nil || c.State != store.ClaimPending || c.LeaseUntil.After(t0) {
			t.Fatalf("claim = %+v, %v; want released", c, err)
		}
	})
}

// TestPipelineLogsNoText checks the decision lines carry keys, never the
// message text.
func TestPipelineLogsNoText(t *testing.T) {
	t.Parallel()
	b := newRig(t, &scriptReceiver{})
	ev := humanEvent("l1")
	ev.Text = "my password is hunter2"
	decodeAck(t, b.postScript(script{Events: []message.Event{ev}}))
	logs := b.logText()
	if strings.Contains(logs, "hunter2") {
		t.Fatalf("logs hold the message text:\n%s", logs)
	}
	var accepted bool
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if rec["msg"] == "event accepted" && rec["event_key"] == ev.Key() && rec["decision"] == "accepted" {
			accepted = true
		}
	}
	if !accepted {
		t.Fatalf("no \"event accepted\" line with event_key and decision:\n%s", logs)
	}
}

// stuckQueue never takes a message: every Send waits for its context to end.
type stuckQueue struct{}

func (stuckQueue) Send(ctx context.Context, _ queue.Message) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestPipelineAnswersAsThePlatformAsks: a receiver may ask for its own
// answer once every event is durable (Discord's deferred response), for
// another when they are not (a note a person sees, where a 503 would be
// retried by no one), and for an answer within a deadline.
func TestPipelineAnswersAsThePlatformAsks(t *testing.T) {
	t.Parallel()
	ack := &platform.Reply{Status: http.StatusOK, ContentType: "application/json", Body: []byte(`{"type":5}`)}
	sorry := &platform.Reply{Status: http.StatusOK, ContentType: "application/json", Body: []byte(`{"type":4,"data":{"content":"try again"}}`)}

	t.Run("AckOnceDurable", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		w := b.postScript(script{Events: []message.Event{humanEvent("a1")}, Ack: ack, Unavailable: sorry})
		if w.Code != http.StatusOK || w.Body.String() != `{"type":5}` || w.Header().Get(ingress.HeaderAck) != ingress.AckDurable {
			t.Fatalf("answer %d %q (ack %q)", w.Code, w.Body, w.Header().Get(ingress.HeaderAck))
		}
		if n := b.calls.Snapshot()["SQS.SendMessage"]; n != 1 {
			t.Fatalf("%d enqueues before the ack, want 1", n)
		}
	})
	t.Run("UnavailableWhenNotDurable", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		b.faults.Add(awsfault.Fault{Op: "SQS.SendMessage"})
		w := b.postScript(script{Events: []message.Event{humanEvent("u1")}, Ack: ack, Unavailable: sorry})
		if w.Body.String() != string(sorry.Body) || w.Header().Get(ingress.HeaderAck) != "" {
			t.Fatalf("answer %d %q (ack %q), want the receiver's unavailable answer and no durable ack", w.Code, w.Body, w.Header().Get(ingress.HeaderAck))
		}
	})
	t.Run("WithinItsDeadline", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		b.pipeline.Queue = stuckQueue{}
		done := make(chan *httptest.ResponseRecorder, 1)
		go func() {
			done <- b.postScript(script{Events: []message.Event{humanEvent("w1")}, Ack: ack, Unavailable: sorry, Within: time.Second})
		}()
		select {
		case w := <-done:
			if w.Body.String() != string(sorry.Body) {
				t.Fatalf("answer %q, want the unavailable answer", w.Body)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the pipeline did not answer: Within was not applied to its writes")
		}
	})
}

// inChat is humanEvent in another private chat: another thread.
func inChat(id, chat string) message.Event {
	ev := humanEvent(id)
	ev.Thread.Chat, ev.Sender.ID = chat, chat
	return ev
}

// TestPipelineBatches: a request of many events (a WhatsApp batch holds
// thousands) admits the events of different threads at once, so it is
// answered in the time of its longest thread, and the events of one thread
// one after another, in order: a thread whose event fails stops there, and
// the other threads go on.
func TestPipelineBatches(t *testing.T) {
	t.Parallel()

	t.Run("ThreadsAreAdmittedAtOnce", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		a1, b1 := inChat("a1", "42"), inChat("b1", "43")
		b.pipeline.Queue = &awaitGroup{next: b.pipeline.Queue, hold: a1.Thread.Key(), until: b1.Thread.Key(), started: make(chan struct{})}
		if a := decodeAck(t, b.postScript(script{Events: []message.Event{a1, b1}})); a.results() != "a1=enqueued b1=enqueued" {
			t.Fatalf("ack = %s", a.results())
		}
	})

	t.Run("OneThreadInOrderStoppingAtItsFailure", func(t *testing.T) {
		t.Parallel()
		b := newRig(t, &scriptReceiver{})
		a1, a2, a3, b1 := inChat("a1", "42"), inChat("a2", "42"), inChat("a3", "42"), inChat("b1", "43")
		failing := &failingQueue{next: b.pipeline.Queue, fail: a2.Key()}
		b.pipeline.Queue = failing
		body, _ := json.Marshal(script{Events: []message.Event{a1, a2, a3, b1}})
		if w := b.post(body, true); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503: a2 is not durable", w.Code)
		}
		if got := failing.sent(a1.Thread.Key()); !slices.Equal(got, []string{a1.Key(), a2.Key()}) {
			t.Fatalf("thread 42 sent %q, want a1 then a2, and a3 not tried after a2 failed", got)
		}
		for _, c := range []struct {
			ev   message.Event
			want error
		}{{a1, nil}, {a2, store.ErrNotFound}, {a3, store.ErrNotFound}, {b1, nil}} {
			if _, err := b.claim(c.ev); !errors.Is(err, c.want) {
				t.Errorf("claim of %s: %v, want %v", c.ev.EventID, err, c.want)
			}
		}

		failing.fail = ""
		if a := decodeAck(t, b.post(body, true)); a.results() != "a1=duplicate(duplicate) a2=enqueued a3=enqueued b1=duplicate(duplicate)" {
			t.Fatalf("retry ack = %s", a.results())
		}
		var order []string
		for _, q := range b.queued() {
			if q.group == a1.Thread.Key() {
				order = append(order, q.in.Event.EventID)
			}
		}
		if !slices.Equal(order, []string{"a1", "a2", "a3"}) {
			t.Fatalf("thread 42 queued %q, want a1, a2, a3", order)
		}
	})
}

// TestPipelineSurvivesAPanickingSend: the send runs on a goroutine of its
// own, where a panic would take the process down with every request in it.
func TestPipelineSurvivesAPanickingSend(t *testing.T) {
	t.Parallel()
	b := newRig(t, &scriptReceiver{})
	b.pipeline.Queue = panickingQueue{}
	if w := b.postScript(script{Events: []message.Event{inChat("p1", "42"), inChat("p2", "43")}}); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", w.Code)
	}
	if !strings.Contains(b.logText(), "panic: a bug in the queue") {
		t.Fatal("the panic was not logged")
	}
}

type panickingQueue struct{}

func (panickingQueue) Send(context.Context, queue.Message) error { panic("a bug in the queue") }

// awaitGroup holds the sends of group hold until a send of group until has
// started, and fails them if that takes more than a few seconds.
type awaitGroup struct {
	next        ingress.Enqueuer
	hold, until string
	once        sync.Once
	started     chan struct{}
}

func (q *awaitGroup) Send(ctx context.Context, m queue.Message) error {
	switch m.Group {
	case q.until:
		q.once.Do(func() { close(q.started) })
	case q.hold:
		select {
		case <-q.started:
		case <-time.After(5 * time.Second):
			return errors.New("the other thread's send did not start meanwhile")
		}
	}
	return q.next.Send(ctx, m)
}

// failingQueue fails the send of event key fail, and records every send
// it is asked for, by group.
type failingQueue struct {
	next ingress.Enqueuer
	fail string
	mu   sync.Mutex
	by   map[string][]string
}

func (q *failingQueue) Send(ctx context.Context, m queue.Message) error {
	q.mu.Lock()
	if q.by == nil {
		q.by = map[string][]string{}
	}
	q.by[m.Group] = append(q.by[m.Group], m.Dedup)
	fail := q.fail
	q.mu.Unlock()
	if m.Dedup == fail {
		return errors.New("injected send failure")
	}
	return q.next.Send(ctx, m)
}

func (q *failingQueue) sent(group string) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.by[group])
}

// oldestReceiver records the Request.Oldest the core hands it.
type oldestReceiver struct {
	scriptReceiver
	got time.Time
}

func (r *oldestReceiver) Parse(req *platform.Request) (platform.Parsed, error) {
	r.got = req.Oldest
	return platform.Parsed{Ignored: []platform.Ignored{{Reason: platform.IgnoredStale, ID: "1"}}}, nil
}

// TestPipelineBoundsEventAgeByTheDedupeWindow (issue 23, finding 11): the
// core tells a receiver the oldest event time it may take, the dedupe
// window (PARLEY_DEDUPE_TTL) less a margin of an hour, at most half of it,
// so an event it takes is new or its key is still there.
func TestPipelineBoundsEventAgeByTheDedupeWindow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	for ttl, want := range map[time.Duration]time.Time{
		0:              now.Add(-(store.DedupeTTL - time.Hour)),
		72 * time.Hour: now.Add(-71 * time.Hour),
		time.Hour:      now.Add(-30 * time.Minute),
	} {
		r := &oldestReceiver{}
		p := &ingress.Pipeline{Receiver: r, DedupeTTL: ttl, Now: func() time.Time { return now }, Log: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil))}
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{}`))
		req.Header.Set("X-Test-Signature", "valid")
		w := httptest.NewRecorder()
		p.ServeHTTP(w, req)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"stale"`) || !r.got.Equal(want) {
			t.Errorf("DedupeTTL %s: Oldest %v, want %v (%d %s)", ttl, r.got, want, w.Code, w.Body)
		}
	}
}
