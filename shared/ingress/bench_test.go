package ingress_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
)

// nopClaims and nopQueue stand in for DynamoDB and SQS so the benchmark
// measures the handler's own CPU: reading, verifying, parsing, deciding,
// encoding. The real paths are tested against the emulators elsewhere.
type nopClaims struct{}

func (nopClaims) Claim(_ context.Context, key string, s store.ClaimSpec) (store.Claim, error) {
	return store.Claim{Key: key, State: store.ClaimPending, Owner: s.Owner, Attempts: 1}, nil
}
func (nopClaims) Settle(context.Context, string, string, store.ClaimState, string, time.Time, time.Duration) error {
	return nil
}
func (nopClaims) Release(context.Context, string, string, store.ReleaseSpec) error { return nil }

func (nopClaims) Forget(context.Context, string, string) error { return nil }

func (nopClaims) GetClaim(context.Context, string, time.Time) (store.Claim, error) {
	return store.Claim{}, store.ErrNotFound
}

func (nopClaims) Defer(context.Context, string, string, []byte, time.Time, time.Time, time.Duration) error {
	return nil
}

type nopQueue struct{}

func (nopQueue) Send(context.Context, queue.Message) error { return nil }

const (
	benchTGSecret    = "parley-telegram-test-secret"
	benchSlackSecret = "8f742231b10e8888abcd99yyyzzz85a5"
)

// benchUpdate is a Telegram message dated now: an older one past the dedupe
// window would be ignored as a replay, and cost less than a message.
func benchUpdate(i int) []byte {
	return fmt.Appendf(nil, `{"update_id":%d,"message":{"message_id":%d,"date":%d,"text":"what's the weather in Lisbon tomorrow?",`+
		`"from":{"id":42,"is_bot":false,"first_name":"Ada"},"chat":{"id":42,"type":"private","first_name":"Ada"}}}`, i, i, time.Now().Unix())
}

func benchSlack(i int) []byte {
	return fmt.Appendf(nil, `{"type":"event_callback","team_id":"T0TEAM0001","api_app_id":"A0APP00001","event_id":"Ev%d","event_time":1764432000,`+
		`"authorizations":[{"team_id":"T0TEAM0001","user_id":"U0BOT00001","is_bot":true}],`+
		`"event":{"type":"message","channel":"D0DM000001","channel_type":"im","user":"U0ADA00001","text":"what's on my calendar today?","ts":"1764432000.%06d"}}`, i, i)
}

// baseline is the cost of merely decoding the same body into a map: the
// floor any webhook handler pays. Figures are reported as a ratio to it,
// measured in the same run, because these machines are noisy. (A timed loop:
// testing.Benchmark cannot run inside a benchmark.)
func baseline(body []byte) float64 {
	const n = 20000
	start := time.Now()
	for range n {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			panic(err)
		}
	}
	return float64(time.Since(start).Nanoseconds()) / n
}

func benchPipeline(b *testing.B, r platform.Receiver, body func(i int) []byte, sign func(body []byte) http.Header) {
	p := &ingress.Pipeline{Receiver: r, Claims: nopClaims{}, Queue: nopQueue{}, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	base := baseline(body(1))
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		raw := body(i)
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(raw)))
		for k, v := range sign(raw) {
			req.Header[k] = v
		}
		w := httptest.NewRecorder()
		p.ServeHTTP(w, req)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"enqueued"`) {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	perEvent := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perEvent/base, "x-json-decode")
}

// BenchmarkIngressTelegram is the Telegram ingress handler's CPU cost per
// event, excluding DynamoDB and SQS round trips.
func BenchmarkIngressTelegram(b *testing.B) {
	r, err := telegram.NewReceiver(benchTGSecret, "7000000001:AAFakeTokenForParleyTests_0123456789")
	if err != nil {
		b.Fatal(err)
	}
	benchPipeline(b, r, benchUpdate, func([]byte) http.Header { return fakeplatform.TelegramHeaders(benchTGSecret) })
}

// BenchmarkIngressSlack is the same for Slack, whose HMAC covers the body.
func BenchmarkIngressSlack(b *testing.B) {
	r := &slack.Receiver{SigningSecret: benchSlackSecret}
	now := time.Now()
	benchPipeline(b, r, benchSlack, func(body []byte) http.Header { return fakeplatform.SignSlack(benchSlackSecret, now, body) })
}
