package runner_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
)

// TestEveryLineOfAMessageCarriesItsCorrelationID: from the webhook to the
// receipt, through an agent call that fails once and a send that fails
// once, every log line about one message carries its event key (the
// correlation id) as event_key, so one query finds what happened to it.
// Before, delivery's lines, the turn's failed agent call and the
// consumer's retry lines named only the intent or the SQS message.
func TestEveryLineOfAMessageCarriesItsCorrelationID(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	var calls atomic.Int32
	h.agent.fail = func(agent.TurnRequest) (int, bool) {
		return http.StatusServiceUnavailable, calls.Add(1) == 1
	}
	h.fake.Inject(fakeplatform.Fault{Platform: message.Telegram, Status: http.StatusTooManyRequests, RetryAfter: time.Second})

	if status, body := h.postTelegram(telegramUpdate(2801, 42, "/bubbles one | two")); status != http.StatusOK {
		t.Fatalf("webhook: %d %s", status, body)
	}
	h.waitDelivered(2, 60*time.Second)
	h.quiesce(20 * time.Second)

	key := "evt#telegram#" + tgBotID + "#2801"
	id := intent.IDFor(key)
	for _, want := range []struct{ field, value string }{
		{"msg", "event accepted"},            // ingress
		{"msg", "agent call failed"},         // turn, the failed call
		{"msg", "record failed"},             // the consumer, retrying the turn
		{"msg", "agent answered"},            // turn, the call that answered
		{"msg", "turn done"},                 // turn
		{"msg", "unit rate limited: parked"}, // delivery, the failed send
		{"msg", "unit delivered"},            // delivery
	} {
		if len(h.logs.lines(want.field, want.value, "event_key", key)) == 0 {
			t.Errorf("no line %s=%q carries event_key %s", want.field, want.value, key)
		}
	}
	for _, rec := range h.logs.lines("intent_id", id) {
		if got := fmt.Sprint(rec["event_key"]); got != key {
			t.Errorf("line %q names intent %s without its correlation id: event_key %q", rec["msg"], id, got)
		}
	}
}
