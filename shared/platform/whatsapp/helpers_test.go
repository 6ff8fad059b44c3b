package whatsapp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Test identities. The samples in events/whatsapp were sent to this app and
// number; they authenticate nothing real.
const (
	testAppSecret   = "4f0c1e2d3b5a69788796a5b4c3d2e1f0"
	testVerifyToken = "parley-whatsapp-verify-token"
	testToken       = "EAAParleyFakeWhatsAppAccessTokenForTests0123456789"
	testWABA        = "102290129340398"
	testPhone       = "106540352242922"
	otherPhone      = "106540352242999"
	eventsDir       = "../../../events/whatsapp"

	ada   = "15551230001"
	grace = "15551230002"
)

// wamids of the samples: what Ada and Grace sent, and what Parley had sent
// them.
const (
	idText     = "wamid.FTE1NTUxMjMwMDAxFQIAEhgUM0VCMEFEQTAwMDAwMDAwMDAwMDAwMDE="
	idReply    = "wamid.FTE1NTUxMjMwMDAxFQIAEhgUM0VCMEFEQTAwMDAwMDAwMDAwMDAwMDI="
	idButton   = "wamid.FTE1NTUxMjMwMDAxFQIAEhgUM0VCMEFEQTAwMDAwMDAwMDAwMDAwMDM="
	idList     = "wamid.FTE1NTUxMjMwMDAyFQIAEhgUM0VCMEdSQzAwMDAwMDAwMDAwMDAwMDQ="
	idImage    = "wamid.FTE1NTUxMjMwMDAxFQIAEhgUM0VCMEFEQTAwMDAwMDAwMDAwMDAwMDU="
	idVoice    = "wamid.FTE1NTUxMjMwMDAxFQIAEhgUM0VCMEFEQTAwMDAwMDAwMDAwMDAwMDg="
	idDocument = "wamid.FTE1NTUxMjMwMDAxFQIAEhgUM0VCMEFEQTAwMDAwMDAwMDAwMDAwMDk="
	idBatch1   = "wamid.FTE1NTUxMjMwMDAyFQIAEhgUM0VCMEdSQzAwMDAwMDAwMDAwMDAwMDY="
	idBatch2   = "wamid.FTE1NTUxMjMwMDAyFQIAEhgUM0VCMEdSQzAwMDAwMDAwMDAwMDAwMDc="
	idAnswered = "wamid.FTE1NTUxMjMwMDAxFQIAEhgUUEFSTEVZMDAwMDAwMDAwMDAwMDAxMDE="
	idQuestion = "wamid.FTE1NTUxMjMwMDAxFQIAEhgUUEFSTEVZMDAwMDAwMDAwMDAwMDAxMDI="
	idListQ    = "wamid.FTE1NTUxMjMwMDAyFQIAEhgUUEFSTEVZMDAwMDAwMDAwMDAwMDAxMDM="
	idStatus   = "wamid.FTE1NTUxMjMwMDAxFQIAEhgUUEFSTEVZMDAwMDAwMDAwMDAwMDAxMDQ="
	idFailed   = "wamid.FTE1NTUxMjMwMDAxFQIAEhgUUEFSTEVZMDAwMDAwMDAwMDAwMDAxMDU="
	idBatchOut = "wamid.FTE1NTUxMjMwMDAyFQIAEhgUUEFSTEVZMDAwMDAwMDAwMDAwMDAxMDY="
)

// sampleNow is a little after the samples were sent (2025-11-29 16:00–16:05
// UTC). Nothing in a WhatsApp webhook is dated by its signature.
var sampleNow = time.Unix(1764432300, 0)

func chat(wa string) message.Thread {
	return message.Thread{Platform: message.WhatsApp, Account: testPhone, Chat: wa}
}

// window is how far before Now ingress sets Request.Oldest by default:
// the dedupe window (8 days) less its margin (an hour).
const window = 8*24*time.Hour - time.Hour

func newTestReceiver(t testing.TB) *Receiver {
	t.Helper()
	r, err := NewReceiver(testAppSecret, testVerifyToken, testPhone)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// signed is body as Meta posts it: the signature computed here, apart from
// Sign.
func signed(body []byte) *platform.Request {
	mac := hmac.New(sha256.New, []byte(testAppSecret))
	mac.Write(body)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(SignatureHeader, "sha256="+hex.EncodeToString(mac.Sum(nil)))
	return &platform.Request{Method: http.MethodPost, Header: h, Body: body, Now: sampleNow}
}

func readSample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(eventsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// show renders v for a failure message.
func show(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}
