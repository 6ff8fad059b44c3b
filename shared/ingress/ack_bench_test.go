package ingress_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// BenchmarkIngressAckVsIO compares a signed Slack event's ack through HTTP
// (verify, parse, claim, enqueue, answer) with the I/O no webhook can skip:
// one conditional PutItem and one SendMessage from warm clients (the ones
// the functions use), on the same emulators, interleaved in one run so all
// see the same machine. It reports the p50s and two ratios: ack-vs-io, to
// the two calls one after the other, and ack-vs-parallel-io, to the two at
// once, which is how the ack makes them, so the second is what the ack adds
// to its own floor.
func BenchmarkIngressAckVsIO(b *testing.B) {
	env := emulatortest.New(b)
	db, sq := env.DynamoDB, env.SQS
	p := &ingress.Pipeline{
		Receiver: &slack.Receiver{SigningSecret: benchSlackSecret},
		Claims:   dynamostore.New(db, env.Resources.Table),
		Queue:    queue.New(sq, env.Resources.InboundURL),
		Log:      slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	srv := httptest.NewServer(p)
	b.Cleanup(srv.Close)
	ctx := b.Context()
	i := 0
	put := func(k string) error {
		return benchPut(ctx, db, env.Resources.Table, fmt.Sprintf("bench#%s#%d", k, i))
	}
	send := func(k string) error {
		return benchSend(ctx, sq, env.Resources.InboundURL, string(benchSlack(i)), fmt.Sprintf("%s-%d", k, i))
	}
	rawIO := func() time.Duration {
		i++
		start := time.Now()
		err := put("io")
		if err == nil {
			err = send("io")
		}
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	parallelIO := func() time.Duration {
		start := time.Now()
		sent := make(chan error, 1)
		go func() { sent <- send("par") }()
		err := put("par")
		if serr := <-sent; err == nil {
			err = serr
		}
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	ack := func() time.Duration {
		body := benchSlack(1_000_000 + i)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, bytes.NewReader(body))
		for k, v := range fakeplatform.SignSlack(benchSlackSecret, time.Now(), body) {
			req.Header[k] = v
		}
		return timedAck(b, req)
	}
	// The emulators start with this process: let their JIT settle on both
	// paths before anything is timed.
	for range warmup {
		rawIO()
		parallelIO()
		ack()
	}
	var acks, ios, pars []time.Duration
	for b.Loop() {
		ios = append(ios, rawIO())
		pars = append(pars, parallelIO())
		acks = append(acks, ack())
	}
	a, raw, par := p50(acks), p50(ios), p50(pars)
	b.ReportMetric(float64(a.Microseconds()), "ack-p50-us")
	b.ReportMetric(float64(raw.Microseconds()), "io-p50-us")
	b.ReportMetric(float64(par.Microseconds()), "parallel-io-p50-us")
	b.ReportMetric(float64(a)/float64(raw), "ack-vs-io")
	b.ReportMetric(float64(a)/float64(par), "ack-vs-parallel-io")
}

// benchPut is the baseline's write: one conditional PutItem of a small item,
// as a user of the SDK would write a dedupe key.
func benchPut(ctx context.Context, db *dynamodb.Client, table, pk string) error {
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(table),
		Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: pk}, "st": &types.AttributeValueMemberS{Value: "enqueued"},
		},
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": "pk"},
	})
	return err
}

// benchSend is the baseline's enqueue: one FIFO SendMessage.
func benchSend(ctx context.Context, sq *sqs.Client, url, body, dedup string) error {
	_, err := sq.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(url), MessageBody: aws.String(body),
		MessageGroupId: aws.String("bench"), MessageDeduplicationId: aws.String(dedup),
	})
	return err
}

// timedAck is how long req takes to be answered 200, its body read.
func timedAck(b *testing.B, req *http.Request) time.Duration {
	b.Helper()
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("ack %d", resp.StatusCode)
	}
	return time.Since(start)
}

// warmup is how many untimed rounds a benchmark on freshly started emulators
// runs first.
const warmup = 200

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkAckSteps times, interleaved in one run, what the ack adds to the
// I/O BenchmarkIngressAckVsIO divides it by: a person's event's key written
// by the store (its attributes and condition) beside the baseline's
// PutItem, an HTTP round trip to a handler that does nothing, and a
// SendMessage of a small body and of one the size of an inbound message. It
// reports each step's p50.
func BenchmarkAckSteps(b *testing.B) {
	env := emulatortest.New(b)
	db := env.DynamoDB
	claims := dynamostore.New(db, env.Resources.Table)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	b.Cleanup(srv.Close)
	ctx := b.Context()
	timed := func(into *[]time.Duration, f func() error) {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		*into = append(*into, time.Since(start))
	}
	body := string(benchSlack(0))
	i := 0
	var simple, claim, hop, small, sized []time.Duration
	round := func() {
		i++
		timed(&simple, func() error {
			return benchPut(ctx, db, env.Resources.Table, fmt.Sprintf("bench#simple#%d", i))
		})
		timed(&claim, func() error {
			_, err := claims.Claim(ctx, fmt.Sprintf("bench#claim#%d", i), store.ClaimSpec{
				Owner: store.NewOwner(), Now: time.Now(), TTL: store.DedupeTTL, State: store.ClaimEnqueued,
			})
			return err
		})
		timed(&hop, func() error {
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			return resp.Body.Close()
		})
		send := func(into *[]time.Duration, text, dedup string) {
			timed(into, func() error {
				return benchSend(ctx, env.SQS, env.Resources.InboundURL, text, dedup)
			})
		}
		send(&small, "x", fmt.Sprintf("small-%d", i))
		send(&sized, body, fmt.Sprintf("sized-%d", i))
	}
	for range warmup {
		round()
	}
	simple, claim, hop, small, sized = nil, nil, nil, nil, nil
	for b.Loop() {
		round()
	}
	for name, d := range map[string][]time.Duration{"put-simple": simple, "put-claim": claim, "http-hop": hop, "send-small": small, "send-event": sized} {
		b.ReportMetric(float64(p50(d).Microseconds()), name+"-p50-us")
	}
}

// BenchmarkIngressBatch times the ack of one request holding 100 events of
// 100 threads (a WhatsApp batch of statuses, say) beside the ack of a
// request of one event, interleaved in one run on the emulators, and
// reports the batch's p50 over 100 single acks' (batch-vs-singles): below
// 1, the threads are admitted at once.
func BenchmarkIngressBatch(b *testing.B) {
	const n = 100
	env := emulatortest.New(b)
	p := &ingress.Pipeline{
		Receiver: &scriptReceiver{},
		Claims:   dynamostore.New(env.DynamoDB, env.Resources.Table),
		Queue:    queue.New(env.SQS, env.Resources.InboundURL),
		Log:      slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	srv := httptest.NewServer(p)
	b.Cleanup(srv.Close)
	round := 0
	post := func(events []message.Event) time.Duration {
		body, err := json.Marshal(script{Events: events})
		if err != nil {
			b.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(b.Context(), http.MethodPost, srv.URL, bytes.NewReader(body))
		req.Header.Set("X-Test-Signature", "valid")
		return timedAck(b, req)
	}
	batch := func() time.Duration {
		round++
		events := make([]message.Event, n)
		for i := range events {
			events[i] = inChat(fmt.Sprintf("b%d-%d", round, i), fmt.Sprint(1000+i))
		}
		return post(events)
	}
	single := func() time.Duration {
		round++
		return post([]message.Event{inChat(fmt.Sprintf("s%d", round), "42")})
	}
	for range warmup / 20 {
		batch()
		single()
	}
	var batches, singles []time.Duration
	for b.Loop() {
		batches = append(batches, batch())
		singles = append(singles, single())
	}
	bp, sp := p50(batches), p50(singles)
	b.ReportMetric(float64(bp.Microseconds()), "batch-p50-us")
	b.ReportMetric(float64(sp.Microseconds()), "single-p50-us")
	b.ReportMetric(float64(bp)/float64(n*sp), "batch-vs-singles")
}
