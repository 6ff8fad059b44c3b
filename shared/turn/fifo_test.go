package turn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/queue/queuetest"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/turn"
)

// TestAgentOutageOnTheFIFOModel (finding 8.3): three messages of one thread
// arrive during a one-hour agent outage. On real SQS they ride in one batch,
// every retry of the first returns the others too (a receive each), so with
// receive counts as the budget the thread's later messages reached the DLQ
// within the hour. Now every message is answered after the recovery, in
// arrival order, once, and nothing is dead-lettered.
func TestAgentOutageOnTheFIFOModel(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	clock, inbound, dlq, outbound := modelQueues()
	recovery := t0.Add(time.Hour)
	var mu sync.Mutex
	var answered []string
	ag := &fakeAgent{answer: func(req agent.TurnRequest) (agent.Reply, error) {
		if clock.Now().Before(recovery) {
			return agent.Reply{}, &agent.Error{Kind: agent.KindTransient, Status: http.StatusBadGateway, Err: agent.ErrStatus}
		}
		mu.Lock()
		answered = append(answered, req.Event.EventID)
		mu.Unlock()
		return envelopeReply(bubbles(1))(req)
	}}
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	p := &turn.Processor{Claims: st, Intents: st, Outbox: outbound, Agent: ag,
		Channels: map[message.Platform]turn.Channel{message.Telegram: channel}, Now: clock.Now, Log: quiet}
	c := &consumer.Consumer{Handle: p.Handle, Visibility: inbound, DeadLetters: dlq, Now: clock.Now, Log: quiet}

	for i, id := range []string{"m1", "m2", "m3"} {
		body, err := intent.EncodeInbound(intent.Inbound{Event: event(id), ReceivedAt: clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if err := inbound.Send(context.Background(), queue.Message{Group: event(id).Thread.Key(), Dedup: event(id).Key(), Body: body}); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			clock.Advance(time.Minute)
		}
	}
	if err := inbound.Drain(context.Background(), clock, c.HandleSQS, 10, 60*time.Second); err != nil {
		t.Fatalf("drain: %v", err)
	}
	if !slices.Equal(answered, []string{"m1", "m2", "m3"}) {
		t.Fatalf("answered %v, want every message after the recovery, in arrival order", answered)
	}
	if n := len(dlq.Messages()); n != 0 {
		t.Fatalf("%d messages dead-lettered during a one-hour outage", n)
	}
	if outbound.Len() != 3 {
		t.Fatalf("%d replies enqueued, want 3", outbound.Len())
	}
}

// TestLongAsyncWaitLosesNothingBehindIt_Finding3: a turn whose agent
// answered 202 handed its message back every 30 seconds while it waited,
// and on real SQS its thread's later messages came back with it each time
// (a receive each): a 6-hour wait cost each of them 720 receives, and a
// second wait after it took them past the queue's maxReceiveCount (1000)
// into the DLQ, still deliverable. On the FIFO model, with the queues'
// real settings: a 6-hour wait answered by a post, another that times out,
// and 5 messages queued behind them; every message is answered once, in
// order, nothing is dead-lettered, and no message is received more than a
// handful of times.
func TestLongAsyncWaitLosesNothingBehindIt_Finding3(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := emulatortest.New(t)
	clock, inbound, dlq, outbound := modelQueues()
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var mu sync.Mutex
	var heard []string
	ag := &fakeAgent{answer: func(req agent.TurnRequest) (agent.Reply, error) {
		mu.Lock()
		heard = append(heard, req.Event.EventID)
		mu.Unlock()
		if strings.HasPrefix(req.Event.Text, "later") {
			return agent.Reply{Status: http.StatusAccepted, Accepted: true}, nil
		}
		return envelopeReply(bubbles(1))(req)
	}}
	p := longWaitProcessor(st, outbound, inbound, ag, clock, quiet)
	c := &consumer.Consumer{Handle: p.Handle, Visibility: inbound, DeadLetters: dlq, Now: clock.Now, Log: quiet}
	reply, secret := longWaitReply(t, st, outbound, inbound, clock, quiet)

	ids := []string{"w1", "w2", "m3", "m4", "m5", "m6", "m7"}
	for _, id := range ids {
		ev := event(id)
		if id[0] == 'w' {
			ev.Text = "later, please"
		}
		body, err := intent.EncodeInbound(intent.Inbound{Event: ev, ReceivedAt: clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if err := inbound.Send(ctx, queue.Message{Group: ev.Thread.Key(), Dedup: ev.Key(), Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	// The agent posts w1's reply five and a half hours into its wait;
	// w2's it never posts.
	w1 := intent.IDFor(event("w1").Key())
	postAt := func() (time.Time, bool) {
		a, err := st.GetAwait(ctx, w1)
		if err != nil || a.State != store.AwaitOpen {
			return time.Time{}, false
		}
		return a.CreatedAt.Add(5*time.Hour + 30*time.Minute), true
	}
	receives := map[string]int{}
	handle := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		for _, r := range ev.Records {
			n, _ := strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
			receives[r.MessageId] = max(receives[r.MessageId], n)
		}
		return c.HandleSQS(ctx, ev)
	}
	posted := false
	for polls := 0; inbound.Len() > 0; polls++ {
		if polls > 5000 {
			t.Fatalf("%d messages left after %d polls", inbound.Len(), polls)
		}
		if at, ok := postAt(); ok && !posted && !clock.Now().Before(at) {
			postReply(t, reply, secret, clock.Now(), w1, "found it")
			posted = true
		}
		n, err := inbound.Poll(ctx, handle, 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			continue
		}
		next, ok := inbound.NextVisible()
		if !ok {
			break
		}
		if at, ok := postAt(); ok && !posted && at.Before(next) {
			next = at
		}
		clock.Advance(max(next.Sub(clock.Now()), 0))
	}
	if !posted {
		t.Fatal("the agent never posted w1's reply")
	}
	if dead := inbound.DeadLettered(); len(dead) != 0 {
		t.Fatalf("%d messages dead-lettered while deliverable (the first after %d receives)", len(dead), dead[0].ReceiveCount)
	}
	if !slices.Equal(heard, ids) {
		t.Fatalf("the agent heard %v, want every message once, in order: %v", heard, ids)
	}
	if n := outbound.Len(); n != 6 {
		t.Fatalf("%d bubbles enqueued, want w1's posted reply and one for each of m3..m7", n)
	}
	for id, n := range receives {
		if n > 20 {
			t.Errorf("message %s was received %d times over a 12-hour wait", id, n)
		}
	}
}

// postReply posts a signed final reply for turnID to the reply handler.
func postReply(t *testing.T, h http.Handler, secret standardwebhooks.Secret, now time.Time, turnID, text string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"turn_id": turnID, "text": text})
	req := httptest.NewRequest(http.MethodPost, "/reply", bytes.NewReader(body))
	standardwebhooks.SetHeaders(req.Header, secret, "msg_"+turnID, now, body)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("post reply: %d %s", w.Code, w.Body)
	}
}

// longWaitProcessor is a turn processor whose turns may wait 6 hours for
// their agent's post, on inbound.
func longWaitProcessor(st *dynamostore.Store, outbound, inbound *queuetest.FIFO, ag turn.Agent, clock *queuetest.Clock, log *slog.Logger) *turn.Processor {
	return &turn.Processor{Claims: st, Intents: st, Outbox: outbound, Agent: ag, Awaits: st, Park: inbound,
		Channels: map[message.Platform]turn.Channel{message.Telegram: channel},
		Config:   turn.Config{AsyncTimeout: turn.MaxAsyncTimeout}, Now: clock.Now, Log: log}
}

// longWaitReply is the reply function (POST /reply) on the same store and
// queues, and the secret its posts are signed with.
func longWaitReply(t *testing.T, st *dynamostore.Store, outbound, inbound *queuetest.FIFO, clock *queuetest.Clock, log *slog.Logger) (http.Handler, standardwebhooks.Secret) {
	secret, err := standardwebhooks.ParseSecret("parley-agent-test-secret")
	if err != nil {
		t.Fatal(err)
	}
	return &agentapi.Handler{
		Verifier: standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{secret}},
		Awaits:   st, Intents: st, Outbox: outbound, Waker: inbound, Claims: st, AsyncTimeout: turn.MaxAsyncTimeout,
		Capabilities: func(message.Platform) (message.Capabilities, bool) { return channel.Capabilities, true },
		Now:          clock.Now, Log: log,
	}, secret
}

// modelQueues are inbound.fifo with the stack's own settings, its DLQ, and
// outbound.fifo, on the FIFO model, with the clock they run on.
func modelQueues() (clock *queuetest.Clock, inbound, dlq, outbound *queuetest.FIFO) {
	clock = queuetest.NewClock(t0)
	dlq = queuetest.New(queuetest.Options{Now: clock.Now})
	inbound = queuetest.New(queuetest.Options{Now: clock.Now, VisibilityTimeout: resources.Inbound.VisibilityTimeout,
		MaxReceiveCount: resources.Inbound.MaxReceiveCount, DLQ: dlq})
	return clock, inbound, dlq, queuetest.New(queuetest.Options{Now: clock.Now})
}
