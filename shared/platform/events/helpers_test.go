package events

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/telegram"
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

// The test sources: the senders of the samples, each reaching the sample
// chats. alertmanager's secret is being rotated: the old one still verifies.
var (
	testSources = `{"alertmanager":{"targets":["telegram:7000000001:-1001000000001:*"]},` +
		`"cron":{"targets":["telegram:7000000001:42"]},"ci":{"targets":["slack:T0TEAM0001:C0CHAN0001:*"]}}`
	testSecrets = `{"alertmanager":["` + testSecret + `","` + testOldSecret + `"],"cron":"` + testSecret + `","ci":"` + testSecret + `"}`
	// testGitHubTarget is where the github source's deliveries go.
	testGitHubTarget = message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "-1001000000002", Thread: "77"}
	testCanonical    = map[message.Platform]platform.Canonicalizer{message.Telegram: telegram.CanonicalTarget, message.Slack: slack.CanonicalTarget(testTeam)}
)

// receiverFor builds a receiver from sources' configuration, as the events
// function does.
func receiverFor(t testing.TB, sources, secrets, githubSecret, githubTarget string) *Receiver {
	t.Helper()
	src, err := ParseSources(sources, secrets, githubSecret, githubTarget, testCanonical)
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{Sources: src, Canonical: testCanonical}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

func newReceiver(t testing.TB) *Receiver {
	t.Helper()
	return receiverFor(t, testSources, testSecrets, testGitHubSecret, testGitHubTarget.Key())
}

func sample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samplesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func signed(t testing.TB, id string, at time.Time, body []byte) *platform.Request {
	t.Helper()
	return &platform.Request{Method: http.MethodPost, Header: SignRequest(secret(t, testSecret), id, at, body), Query: url.Values{}, Body: body, Now: sampleTime}
}
