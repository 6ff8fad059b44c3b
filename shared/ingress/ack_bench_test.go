package ingress_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/ddb"
	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// BenchmarkIngressAckVsIO compares a signed Slack event's ack through HTTP
// (verify, parse, claim, enqueue, answer) with the I/O no webhook can skip:
// one conditional PutItem and one SendMessage from warm clients (the ones
// the functions use), on the same emulators, interleaved in one run so both see the
// same machine. It reports both p50s and their ratio (ack-vs-io); the
// design's floor is about 1.
func BenchmarkIngressAckVsIO(b *testing.B) {
	env := emulatortest.New(b)
	db, sq := env.DDB, env.Queues
	p := &ingress.Pipeline{
		Receiver: &slack.Receiver{SigningSecret: benchSlackSecret},
		Claims:   dynamostore.New(db, env.Resources.Table),
		Queue:    queue.New(sq, env.Resources.InboundURL),
		Log:      slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	srv := httptest.NewServer(p)
	b.Cleanup(srv.Close)
	ctx := b.Context()
	var acks, ios []time.Duration
	i := 0
	for b.Loop() {
		i++
		start := time.Now()
		_, err := db.PutItem(ctx, &ddb.PutItemInput{
			TableName:                env.Resources.Table,
			Item:                     ddb.Item{"pk": ddb.S(fmt.Sprintf("bench#io#%d", i)), "st": ddb.S("enqueued")},
			ConditionExpression:      "attribute_not_exists(#pk)",
			ExpressionAttributeNames: map[string]string{"#pk": "pk"},
		})
		if err == nil {
			err = sq.Call(ctx, "SendMessage", map[string]string{
				"QueueUrl": env.Resources.InboundURL, "MessageBody": string(benchSlack(i)),
				"MessageGroupId": "bench", "MessageDeduplicationId": fmt.Sprintf("io-%d", i),
			}, nil)
		}
		if err != nil {
			b.Fatal(err)
		}
		ios = append(ios, time.Since(start))

		body := benchSlack(1_000_000 + i)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, bytes.NewReader(body))
		for k, v := range fakeplatform.SignSlack(benchSlackSecret, time.Now(), body) {
			req.Header[k] = v
		}
		start = time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("ack %d", resp.StatusCode)
		}
		acks = append(acks, time.Since(start))
	}
	ack, raw := p50(acks), p50(ios)
	b.ReportMetric(float64(ack.Microseconds()), "ack-p50-us")
	b.ReportMetric(float64(raw.Microseconds()), "io-p50-us")
	b.ReportMetric(float64(ack)/float64(raw), "ack-vs-io")
}

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkAckSteps times, interleaved in one run, what the ack adds to the
// I/O BenchmarkIngressAckVsIO divides it by: the claim's PutItem (its
// attributes and condition) beside the baseline's, an HTTP round trip to a
// handler that does nothing, and a SendMessage of a small body and of one
// the size of an inbound message. It reports each step's p50.
func BenchmarkAckSteps(b *testing.B) {
	env := emulatortest.New(b)
	db := env.DDB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	b.Cleanup(srv.Close)
	ctx := b.Context()
	var simple, claim, hop, small, sized []time.Duration
	timed := func(into *[]time.Duration, f func() error) {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		*into = append(*into, time.Since(start))
	}
	body := string(benchSlack(0))
	now := time.Now()
	i := 0
	for b.Loop() {
		i++
		timed(&simple, func() error {
			_, err := db.PutItem(ctx, &ddb.PutItemInput{
				TableName: env.Resources.Table, Item: ddb.Item{"pk": ddb.S(fmt.Sprintf("bench#simple#%d", i)), "st": ddb.S("enqueued")},
				ConditionExpression: "attribute_not_exists(#pk)", ExpressionAttributeNames: map[string]string{"#pk": "pk"},
			})
			return err
		})
		timed(&claim, func() error {
			_, err := db.PutItem(ctx, &ddb.PutItemInput{
				TableName: env.Resources.Table,
				Item: ddb.Item{"pk": ddb.S(fmt.Sprintf("bench#claim#%d", i)), "st": ddb.S("enqueued"), "owner": ddb.S("ingress"),
					"lease_until": ddb.Int(now.UnixMilli()), "expires_at": ddb.Int(now.Unix()), "claimed_at": ddb.Int(now.UnixMilli()), "attempts": ddb.Int(1)},
				ConditionExpression:                 "attribute_not_exists(#pk) OR #exp <= :nowsec OR (#st = :pending AND #lease <= :now)",
				ExpressionAttributeNames:            map[string]string{"#pk": "pk", "#exp": "expires_at", "#st": "st", "#lease": "lease_until"},
				ExpressionAttributeValues:           ddb.Item{":nowsec": ddb.Int(now.Unix()), ":now": ddb.Int(now.UnixMilli()), ":pending": ddb.S("pending")},
				ReturnValuesOnConditionCheckFailure: ddb.ReturnAllOld,
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
				return env.Queues.Call(ctx, "SendMessage", map[string]string{
					"QueueUrl": env.Resources.InboundURL, "MessageBody": text, "MessageGroupId": "bench", "MessageDeduplicationId": dedup,
				}, nil)
			})
		}
		send(&small, "x", fmt.Sprintf("small-%d", i))
		send(&sized, body, fmt.Sprintf("sized-%d", i))
	}
	for name, d := range map[string][]time.Duration{"put-simple": simple, "put-claim": claim, "http-hop": hop, "send-small": small, "send-event": sized} {
		b.ReportMetric(float64(p50(d).Microseconds()), name+"-p50-us")
	}
}
