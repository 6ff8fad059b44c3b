package runner_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/callcount"
	"github.com/parleyhq/parley/localstack/fakeplatform"
)

// TestBadInputIsRefusedWithoutWrites: a wrong secret, a bad signature, a stale
// timestamp, malformed JSON, an oversized body or a wrong method each get a
// 4xx that says why, and nothing is written to DynamoDB or SQS (I7).
func TestBadInputIsRefusedWithoutWrites(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_MAX_BODY_BYTES": "65536"}})
	good := telegramUpdate(7001, 42, "hello")
	slackBody := slackDM("D0DM000001", "1764432000.000900", "hello")
	big := bytes.Repeat([]byte("a"), 70000)
	stale := fakeplatform.SignSlack(slackSecret, time.Now().Add(-10*time.Minute), slackBody)
	badSig := fakeplatform.SignSlack(slackSecret, time.Now(), slackBody)
	badSig.Set("X-Slack-Signature", "v0=0000000000000000000000000000000000000000000000000000000000000000")
	malformedSlack := []byte(`{"type":"event_callback","event":`)

	cases := []struct {
		name, method, path string
		hdr                http.Header
		body               []byte
		status             int
		reason             string
	}{
		{"TelegramWrongSecret", "POST", "/telegram", fakeplatform.TelegramHeaders("not-the-secret"), good, 401, "secret"},
		{"TelegramNoSecret", "POST", "/telegram", nil, good, 401, "secret"},
		{"TelegramWrongMethod", "GET", "/telegram", fakeplatform.TelegramHeaders(tgSecret), nil, 405, "method"},
		{"TelegramMalformedJSON", "POST", "/telegram", fakeplatform.TelegramHeaders(tgSecret), []byte(`{"update_id": 1, "message": {`), 400, "malformed"},
		{"TelegramNoUpdateID", "POST", "/telegram", fakeplatform.TelegramHeaders(tgSecret), []byte(`{"message": {"text": "hi"}}`), 400, "update_id"},
		{"TelegramOversized", "POST", "/telegram", fakeplatform.TelegramHeaders(tgSecret), big, 413, "too large"},
		{"SlackBadSignature", "POST", "/slack", badSig, slackBody, 401, "signature"},
		{"SlackStaleTimestamp", "POST", "/slack", stale, slackBody, 401, "stale"},
		{"SlackUnsigned", "POST", "/slack", http.Header{"Content-Type": {"application/json"}}, slackBody, 401, ""},
		{"SlackMalformedJSON", "POST", "/slack", fakeplatform.SignSlack(slackSecret, time.Now(), malformedSlack), malformedSlack, 400, "malformed"},
		{"SlackWrongMethod", "PUT", "/slack", fakeplatform.SignSlack(slackSecret, time.Now(), slackBody), slackBody, 405, "method"},
		{"SlackOversized", "POST", "/slack", fakeplatform.SignSlack(slackSecret, time.Now(), big), big, 413, "too large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := h.calls.Total(callcount.Writes)
			req, err := http.NewRequest(c.method, h.url+c.path, bytes.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.hdr {
				req.Header[k] = v
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, b, c.status)
			}
			if !strings.Contains(strings.ToLower(string(b)), c.reason) || len(bytes.TrimSpace(b)) == 0 {
				t.Fatalf("body %q does not give a reason containing %q", b, c.reason)
			}
			if strings.Contains(string(b), tgSecret) || strings.Contains(string(b), slackSecret) {
				t.Fatalf("the answer leaks a secret: %q", b)
			}
			if after := h.calls.Total(callcount.Writes); after != before {
				t.Fatalf("%d writes to DynamoDB or SQS for a refused request (%s)", after-before, h.calls)
			}
		})
	}
	if n := h.calls.Total(callcount.Writes); n != 0 {
		t.Fatalf("writes happened: %s", h.calls)
	}
}
