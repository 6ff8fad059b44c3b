package events

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// Test values of the samples (events/events/README.md); they authenticate
// nothing real.
const (
	testSecret       = "whsec_cGFybGV5LWV2ZW50cy10ZXN0LWtleS0wMDAx"
	testOldSecret    = "parley-events-previous-secret"
	testGitHubSecret = "parley-github-test-secret"
	testBotID        = "7000000001"
	testTeam         = "T0TEAM0001"
)

var (
	samplesDir = filepath.Join("..", "..", "..", "events", "events")
	// sampleTime is when the tests sign: 2025-11-29 16:04 UTC.
	sampleTime = time.Unix(1764432240, 0).UTC()
)

func secret(t testing.TB, s string) standardwebhooks.Secret {
	t.Helper()
	sec, err := standardwebhooks.ParseSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

func newReceiver(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{
		Secrets:      []standardwebhooks.Secret{secret(t, testSecret), secret(t, testOldSecret)},
		GitHubSecret: testGitHubSecret,
		Targets:      map[message.Platform][]string{message.Telegram: {testBotID}, message.Slack: nil},
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

func sample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samplesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func signed(t testing.TB, id string, at time.Time, body []byte) *ingress.Request {
	t.Helper()
	return &ingress.Request{Method: http.MethodPost, Header: SignRequest(secret(t, testSecret), id, at, body), Query: url.Values{}, Body: body, Now: sampleTime}
}
