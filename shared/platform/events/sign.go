package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// SignRequest returns the headers of a Standard Webhooks request carrying
// body, sent at now: webhook-id (id, the event id: keep it for retries),
// webhook-timestamp, webhook-signature and Content-Type.
func SignRequest(secret standardwebhooks.Secret, id string, now time.Time, body []byte) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	standardwebhooks.SetHeaders(h, secret, id, now, body)
	return h
}

// SignGitHub returns the headers GitHub sends with a delivery: the
// X-Hub-Signature-256 of body under secret, X-GitHub-Delivery, X-GitHub-Event
// and Content-Type.
func SignGitHub(secret standardwebhooks.Secret, delivery, event string, body []byte) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(HeaderGitHubDelivery, delivery)
	h.Set(HeaderGitHubEvent, event)
	h.Set(HeaderGitHubSignature, "sha256="+hex.EncodeToString(secret.MAC(body)))
	return h
}

// SampleHeaders returns the headers with which to post the sample file name
// (its base name, such as "alert.json" or "github-push.json") from
// events/events/, signed at now:
//
//   - github-<event>[-<more>].json is a GitHub delivery of <event>, signed
//     with githubSecret, with a delivery id fixed by the file name. (Posting
//     it twice shows the dedupe either way: a GitHub delivery's id is its
//     body's hash.)
//   - any other file is a Payload, signed with secret under its "id".
func SampleHeaders(name string, body []byte, secret, githubSecret standardwebhooks.Secret, now time.Time) (http.Header, error) {
	if rest, ok := strings.CutPrefix(name, "github-"); ok {
		event, _, _ := strings.Cut(strings.TrimSuffix(rest, ".json"), "-")
		sum := sha256.Sum256([]byte(name))
		h := hex.EncodeToString(sum[:16])
		delivery := h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
		return SignGitHub(githubSecret, delivery, event, body), nil
	}
	var p struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &p); err != nil || p.ID == "" {
		return nil, fmt.Errorf("events sample %s: no \"id\" to sign with", name)
	}
	return SignRequest(secret, p.ID, now, body), nil
}
