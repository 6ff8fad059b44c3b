package agentapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// MaxEraseBytes bounds an erase request's body.
const MaxEraseBytes = 4 << 10

// Eraser forgets a thread's history.
type Eraser interface {
	EraseHistory(ctx context.Context, threadKey string) error
}

// EraseHandler serves POST /history/erase: an agent's signed request that
// Parley forget a thread's transcript (PARLEY_HISTORY). The agent's secret
// reaches every thread its turns come from, so it may name any thread of a
// platform Parley sends on. Erasing is idempotent: a thread with nothing
// kept, or erased before, answers the same.
type EraseHandler struct {
	// Verifier checks the agent's signature (PARLEY_AGENT_SECRET).
	Verifier standardwebhooks.Verifier
	Store    Eraser
	// Sends reports whether Parley sends on a platform.
	Sends func(message.Platform) bool
	Now   func() time.Time
	Log   *slog.Logger
}

// EraseBody is an erase request's body.
type EraseBody struct {
	// ThreadKey names the thread, as turn requests do.
	ThreadKey string `json:"thread_key"`
}

// Erased is the answer to an erase.
type Erased struct {
	ThreadKey string `json:"thread_key"`
	Erased    bool   `json:"erased"`
}

// ParseErase reads an erase request's body, strictly: a malformed or
// unknown member, or a thread key that is not <platform>:<account>:<chat>
// [:<thread>], is refused with the reason.
func ParseErase(body []byte) (EraseBody, error) {
	var e EraseBody
	if err := decodeStrict(body, &e); err != nil {
		return EraseBody{}, err
	}
	if e.ThreadKey == "" {
		return EraseBody{}, fmt.Errorf("thread_key is required")
	}
	if !threadKey(e.ThreadKey) {
		return EraseBody{}, fmt.Errorf("thread_key %q: want <platform>:<account>:<chat>[:<thread>], each part visible ASCII", e.ThreadKey)
	}
	return e, nil
}

// maxThreadKey bounds a thread key an agent names.
const maxThreadKey = 512

// threadKey reports whether s is a thread key: three or four parts, none
// empty or a wildcard, of visible ASCII.
func threadKey(s string) bool {
	parts := strings.Split(s, ":")
	if len(s) > maxThreadKey || len(parts) < 3 || len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || p == "*" {
			return false
		}
		for i := range len(p) {
			if p[i] <= ' ' || p[i] > '~' {
				return false
			}
		}
	}
	return true
}

func (h *EraseHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := logOr(h.Log)
	if !postTo(w, r, log, "/history/erase") {
		return
	}
	now := nowFrom(h.Now)
	body, _, ok := signedBody(w, r, log, h.Verifier, MaxEraseBytes, fmt.Sprintf("the body is over %d bytes", MaxEraseBytes), now)
	if !ok {
		return
	}
	e, err := ParseErase(body)
	if err != nil {
		refuse(w, log, http.StatusBadRequest, "malformed", err.Error())
		return
	}
	t, _ := events.ParseTarget(e.ThreadKey)
	if h.Sends == nil || !h.Sends(t.Platform) {
		refuse(w, log, http.StatusForbidden, "forbidden", fmt.Sprintf("Parley sends on no platform %q", t.Platform))
		return
	}
	if err := h.Store.EraseHistory(r.Context(), e.ThreadKey); err != nil {
		log.Error("erase history failed", "thread_key", e.ThreadKey, "error", err)
		refuse(w, log, http.StatusServiceUnavailable, "unavailable", "the history could not be erased now; retry")
		return
	}
	log.Info("history erased", "thread_key", e.ThreadKey, "by", "agent")
	respond(w, http.StatusOK, Erased{ThreadKey: e.ThreadKey, Erased: true})
}
