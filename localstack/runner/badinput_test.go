package runner_test

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/callcount"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
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
	ping := []byte(`{"type":1,"id":"1444357000000000001","application_id":"` + fakediscord.ApplicationID + `","token":"t","version":1}`)
	forgedKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	malformed := []byte(`{"type":`)
	lineBody := lineText("01KBAD0000000000000000000A", lineAda, "hi", time.Now())
	var many []string
	for i := range 101 {
		many = append(many, fmt.Sprintf(`{"type":"follow","webhookEventId":"01KBAD%020d","timestamp":1,"mode":"active","source":{"type":"user","userId":"%s"},"deliveryContext":{"isRedelivery":false}}`, i, lineAda))
	}
	lineBatch := []byte(`{"destination":"` + lineBot + `","events":[` + strings.Join(many, ",") + `]}`)
	waBody := waText("wamid.BAD1", waAda, "hi", time.Now())
	waBadSig := http.Header{"X-Hub-Signature-256": {"sha256=" + strings.Repeat("0", 64)}}

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
		{"DiscordForgedSignature", "POST", "/discord", fakediscord.Sign(forgedKey, time.Now(), ping), ping, 401, ""},
		{"DiscordStaleTimestamp", "POST", "/discord", fakediscord.Sign(fakediscord.TestKey(), time.Now().Add(-10*time.Minute), ping), ping, 401, ""},
		{"DiscordUnsigned", "POST", "/discord", nil, ping, 401, ""},
		{"DiscordMalformed", "POST", "/discord", fakediscord.Sign(fakediscord.TestKey(), time.Now(), malformed), malformed, 400, ""},
		{"LINEBadSignature", "POST", "/line", fakeline.Headers("not-the-secret", lineBody), lineBody, 401, ""},
		{"LINEMalformed", "POST", "/line", fakeline.Headers(lineSecret, malformed), malformed, 400, ""},
		{"LINEOversizedBatch", "POST", "/line", fakeline.Headers(lineSecret, lineBatch), lineBatch, 422, ""},
		{"WhatsAppBadSignature", "POST", "/whatsapp", waBadSig, waBody, 401, ""},
		{"WhatsAppMalformed", "POST", "/whatsapp", fakewhatsapp.Sign(waSecret, malformed), malformed, 400, ""},
		{"WhatsAppHandshakeWrongToken", "GET", "/whatsapp?" + fakewhatsapp.HandshakeQuery("not-the-token", "1158201444").Encode(), nil, nil, 403, ""},
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
