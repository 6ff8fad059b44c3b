package runner_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/parleyhq/parley/localstack/fakeplatform"
)

// TestErrorBodiesHaveOneForm_Finding13 (issue 23, finding 13): /reply
// refused with JSON, /send, /events and the platform webhooks with a line
// of text, so an agent had two parsers to write; and a send whose
// idempotency_key was present but malformed was told the key was missing.
// Every refusal is now one JSON object, {"error": <code>, "reason": <why>},
// with nothing else in it: docs/schema/parley.error.v1.json.
func TestErrorBodiesHaveOneForm_Finding13(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_SEND_TARGETS": `["telegram:` + tgBotID + `:*"]`}})
	thread := "telegram:" + tgBotID + ":44"
	badKey := sendBody(thread, "has a space", "x", nil)
	schema, err := jsonschema.NewCompiler().Compile("../../docs/schema/parley.error.v1.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		hdr        http.Header
		body       []byte
		status     int
		code       string
		reason     string
	}{
		{"ReplyUnsigned", "/reply", http.Header{}, replyBody("0123456789abcdef0123456789abcdef", "x"), 401, "unauthorized", ""},
		{"ReplyMalformed", "/reply", nil, []byte(`{"turn_id":`), 400, "malformed", ""},
		{"SendUnsigned", "/send", http.Header{}, sendBody(thread, "k1", "x", nil), 401, "unauthorized", ""},
		{"SendMalformed", "/send", nil, []byte(`{"thread_key":`), 400, "malformed", ""},
		{"SendNoKey", "/send", nil, []byte(`{"thread_key":"` + thread + `","text":"x"}`), 400, "malformed", "idempotency_key is required"},
		{"SendBadKey", "/send", nil, badKey, 400, "malformed", "idempotency_key has"},
		{"SendOtherBot", "/send", nil, sendBody("telegram:7000000002:44", "k3", "x", nil), 403, "forbidden", "PARLEY_SEND_TARGETS"},
		{"SendOverTheLimits", "/send", nil, []byte(`{"thread_key":"` + thread + `","idempotency_key":"k6","envelope":` + string(bubblesEnvelope(5)) + `}`), 422, "over_limit", "max_bubbles"},
		{"EventsUnsigned", "/events", http.Header{}, []byte(`{"source":"cron"}`), 401, "unauthorized", ""},
		{"TelegramWrongSecret", "/telegram", fakeplatform.TelegramHeaders("not-the-secret"), telegramUpdate(7001, 42, "hi"), 401, "unauthorized", "Secret-Token"},
		{"TelegramMalformed", "/telegram", fakeplatform.TelegramHeaders(tgSecret), []byte(`{"update_id":`), 400, "malformed", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := c.hdr
			if hdr == nil {
				hdr = h.agentSigned("msg_"+c.name, c.body)
			}
			status, ct, answer := h.postFull(c.path, hdr, c.body)
			b := []byte(answer)
			if status != c.status {
				t.Fatalf("status %d (%s), want %d", status, b, c.status)
			}
			if ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("body %q is not JSON: %v", b, err)
			}
			if err := schema.Validate(v); err != nil {
				t.Fatalf("body %q is not a parley.error.v1: %v", b, err)
			}
			var p struct{ Error, Reason string }
			if err := json.Unmarshal(b, &p); err != nil || p.Error != c.code {
				t.Fatalf("body %q is not {\"error\": %q, \"reason\": …}: %v", b, c.code, err)
			}
			if !strings.Contains(p.Reason, c.reason) {
				t.Fatalf("reason %q does not say %q", p.Reason, c.reason)
			}
			if c.name == "SendBadKey" && strings.Contains(p.Reason, "required") {
				t.Fatalf("a malformed idempotency_key is reported as missing: %q", p.Reason)
			}
		})
	}
}
