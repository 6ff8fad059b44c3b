package runner_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestSendKeysAreScopedPerThread_Finding8: /send's idempotency keys were
// global, and a "duplicate" still enqueued: a key reused in another thread,
// with other text, was answered duplicate and yet its event went on that
// thread's queue group; a re-post of a triage-suppressed send with triage
// off was answered duplicate and delivered. A key now stands for one send
// in one thread: the same key in another thread is another send, the same
// key and thread with another payload (other text, triage flipped) is
// refused 409 and enqueues nothing, and the very same send again is a
// duplicate that delivers nothing new.
func TestSendKeysAreScopedPerThread_Finding8(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{
		"PARLEY_SEND_TARGETS": `["telegram:` + tgBotID + `:*"]`,
		"PARLEY_TRIAGE":       `{"daily_cap":1}`,
	}})
	thread := func(chat string) string { return "telegram:" + tgBotID + ":" + chat }
	result := func(id string, body []byte) (int, string) {
		t.Helper()
		code, resp := h.postSend(id, body)
		var a sendAck
		if json.Unmarshal([]byte(resp), &a) != nil || len(a.Events) != 1 {
			return code, resp
		}
		return code, a.Events[0].Result
	}
	for _, step := range []struct {
		name   string
		body   []byte
		code   int
		result string
	}{
		{"a send", sendBody(thread("42"), "K", "for 42", nil), http.StatusAccepted, "enqueued"},
		{"the same key in another thread", sendBody(thread("43"), "K", "for 43", nil), http.StatusAccepted, "enqueued"},
		{"the same key and thread, other text", sendBody(thread("42"), "K", "changed", nil), http.StatusConflict, ""},
		{"the same key and thread, triage flipped", sendBody(thread("42"), "K", "for 42", map[string]any{"triage": true}), http.StatusConflict, ""},
		{"the very same send again", sendBody(thread("42"), "K", "for 42", nil), http.StatusAccepted, "duplicate"},
		{"a triaged send", sendBody(thread("45"), "T1", "first of the day", map[string]any{"triage": true}), http.StatusAccepted, "enqueued"},
		{"a triaged send past the cap", sendBody(thread("45"), "T2", "over the cap", map[string]any{"triage": true}), http.StatusAccepted, "suppressed"},
		{"the suppressed send again, triage off", sendBody(thread("45"), "T2", "over the cap", nil), http.StatusConflict, ""},
	} {
		code, result := result("msg_"+step.name, step.body)
		if code != step.code || (step.result != "" && result != step.result) {
			t.Errorf("%s: %d %s, want %d %s", step.name, code, result, step.code, step.result)
		}
	}
	h.waitDelivered(3, 30*time.Second)
	h.quiesce(30 * time.Second)
	want := map[string][]string{"42": {"for 42"}, "43": {"for 43"}, "45": {"first of the day"}}
	for chat, w := range want {
		if got := texts(filterChat(h.fake.Delivered(), chat)); !slices.Equal(got, w) {
			t.Errorf("chat %s: delivered %q, want %q", chat, got, w)
		}
	}
	if n := len(h.fake.Delivered()); n != 3 {
		t.Errorf("%d delivered, want 3: %q", n, texts(h.fake.Delivered()))
	}
}
