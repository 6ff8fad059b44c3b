package agentapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/preview"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
)

// PreviewAwaits is the await store as preview posts use it.
type PreviewAwaits interface {
	GetAwait(ctx context.Context, turnID string) (store.Await, error)
	TakeAwaitPreview(ctx context.Context, turnID string, t store.PreviewTake) (store.Await, error)
}

// Previews reads and records a turn's preview message (store.Previews).
type Previews interface {
	preview.Recorder
	GetPreview(ctx context.Context, key string, now time.Time) (message.Preview, error)
}

// Previewer is a platform's preview ability (platform.Previewer).
type Previewer interface {
	preview.Previewer
	PreviewInterval(t message.Thread) time.Duration
}

// PreviewHandler serves POST /reply/preview: an async agent's reply as
// written so far, shown as the turn's live preview while the turn waits,
// through the very code a streamed turn shows its preview with
// (preview.Show). The final POST /reply then finalizes it in place or
// clears it, as a streamed turn's reply does (package turn).
//
// Throttling holds across invocations: each update is taken on the await
// record by one conditional write (store.PreviewTake), at most one per
// max(Config.Interval, the platform's minimum) and Config.MaxUpdates a
// turn. A post the throttle refuses is answered 200 with shown false: a
// preview is best effort, and the agent's next post carries all the text.
type PreviewHandler struct {
	// Verifier checks the agent's signature (PARLEY_AGENT_SECRET).
	Verifier standardwebhooks.Verifier
	Awaits   PreviewAwaits
	Previews Previews
	// Previewers are the platforms' preview abilities; a platform with
	// none shows no preview.
	Previewers map[message.Platform]Previewer
	// Claims, when set, tells a turn whose 202 Parley has not read yet
	// (shown false, "early") from an unknown one (404).
	Claims Claims
	// Config is PARLEY_PREVIEW_INTERVAL and PARLEY_PREVIEW_MAX_UPDATES.
	Config preview.Config
	// TTL is how long a preview's record is kept (PARLEY_INTENT_TTL).
	// Defaults to 30 days.
	TTL time.Duration
	Now func() time.Time
	Log *slog.Logger
}

// PreviewAnswer is the answer to a preview post the turn accepted.
type PreviewAnswer struct {
	TurnID string `json:"turn_id"`
	// Shown is whether the preview was updated.
	Shown bool `json:"shown"`
	// Updates counts the turn's preview updates so far.
	Updates int `json:"updates"`
	// Reason says why a preview was not shown: throttled, rate_limited,
	// early (Parley has not read the 202 yet), max_updates, unsupported
	// (the turn's platform or chat shows no preview) or failed.
	Reason string `json:"reason,omitempty"`
	// RetryAfterMS is when a post may be shown, for throttled,
	// rate_limited and early.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
}

// maxPreviewCall bounds one preview update's platform call (the reply
// function's own timeout is 10 s), and previewRecordMargin the record
// write after it: the update is over by the sum, which the turn waits
// for before it settles the preview.
const (
	maxPreviewCall      = 4 * time.Second
	previewRecordMargin = 2 * time.Second
)

func (h *PreviewHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := logOr(h.Log)
	if r.URL.Path != "/reply/preview" {
		refuse(w, log, http.StatusNotFound, "not_found", "no such endpoint: POST /reply/preview")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(w, log, http.StatusMethodNotAllowed, "method", "use POST")
		return
	}
	now := nowFrom(h.Now)
	body, postID, ok := signedBody(w, r, log, h.Verifier, MaxPreviewBytes, "a preview's body is at most 64 KiB", now)
	if !ok {
		return
	}
	log = log.With("post_id", postID)
	pp, err := ParsePreview(body)
	if err != nil {
		refuse(w, log, http.StatusBadRequest, "malformed", err.Error())
		return
	}
	log = log.With("turn_id", pp.TurnID)
	ctx := r.Context()
	a, err := h.Awaits.GetAwait(ctx, pp.TurnID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if h.inFlight(ctx, pp.TurnID, now) {
			h.notShown(w, log, PreviewAnswer{TurnID: pp.TurnID, Reason: "early", RetryAfterMS: time.Second.Milliseconds()})
			return
		}
		refuse(w, log, http.StatusNotFound, "unknown_turn", "no turn with this turn_id is waiting for a reply")
		return
	case err != nil:
		log.Error("read the wait failed", "error", err)
		refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try again")
		return
	}
	log = log.With("event_key", a.EventKey)
	if reason, closed := previewClosed(a, now); closed {
		refuse(w, log, http.StatusConflict, reason, "the turn no longer waits: a preview is shown only before its final reply")
		return
	}
	pl, ok := h.Previewers[a.Thread.Platform]
	if !ok || a.Preview.Thread.Platform == "" {
		h.notShown(w, log, PreviewAnswer{TurnID: a.TurnID, Reason: "unsupported", Updates: a.PreviewUpdates})
		return
	}
	cfg := h.Config.WithDefaults()
	interval := max(cfg.Interval, pl.PreviewInterval(a.Thread))
	call := min(interval, maxPreviewCall)
	taken, err := h.Awaits.TakeAwaitPreview(ctx, a.TurnID, store.PreviewTake{
		Now: now, Next: now.Add(interval), Busy: now.Add(call + previewRecordMargin), Max: cfg.MaxUpdates,
	})
	var conflict *store.AwaitConflictError
	switch {
	case errors.As(err, &conflict):
		cur := conflict.Current
		if reason, closed := previewClosed(cur, now); closed {
			refuse(w, log, http.StatusConflict, reason, "the turn no longer waits: a preview is shown only before its final reply")
			return
		}
		ans := PreviewAnswer{TurnID: a.TurnID, Updates: cur.PreviewUpdates, Reason: "max_updates"}
		if cur.PreviewUpdates < cfg.MaxUpdates {
			ans.Reason, ans.RetryAfterMS = "throttled", max(1, cur.PreviewNext.Sub(now).Milliseconds())
		}
		h.notShown(w, log, ans)
		return
	case err != nil:
		log.Error("take the preview update failed", "error", err)
		refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try again")
		return
	}
	ans := PreviewAnswer{TurnID: a.TurnID, Updates: taken.PreviewUpdates}
	if err := h.show(ctx, log, pl, taken, preview.Render(pp.Text, pp.Status), now, call); err != nil {
		ans.Reason = "failed"
		var se *message.SendError
		if errors.As(err, &se) && se.Class == message.FailRateLimit {
			ans.Reason, ans.RetryAfterMS = "rate_limited", max(interval, se.RetryAfter).Milliseconds()
		}
		log.Warn("preview update failed", "error", err)
		h.notShown(w, log, ans)
		return
	}
	ans.Shown = true
	log.Info("preview shown", "outcome", "preview_shown", "updates", ans.Updates)
	respond(w, http.StatusOK, ans)
}

// show updates the turn's preview: the one its record names (an earlier
// post's), or a new one where the turn's base says.
func (h *PreviewHandler) show(ctx context.Context, log *slog.Logger, pl Previewer, a store.Await, text string, now time.Time, call time.Duration) error {
	// Cut at the update's bound, whatever the agent's connection does: the
	// turn waits no longer than PreviewBusy before it settles the preview.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), call)
	defer cancel()
	cur := message.Preview{}
	if a.PreviewUpdates > 1 {
		pv, err := h.Previews.GetPreview(ctx, a.TurnID, now)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			// Whether a preview message exists is unknown: a second one
			// could be left beside the reply.
			return err
		default:
			cur = pv
		}
	}
	next, err := preview.Show(ctx, pl, h.Previews, a.Preview, cur, text, now, h.ttl())
	if next.MessageID != "" && next.MessageID != cur.MessageID {
		log.Info("preview message created", "message_id", next.MessageID)
	}
	return err
}

func (h *PreviewHandler) ttl() time.Duration {
	if h.TTL > 0 {
		return h.TTL
	}
	return intentTTL
}

// inFlight reports whether turnID names a turn that was sent and not
// settled: its agent posted before Parley read the 202.
func (h *PreviewHandler) inFlight(ctx context.Context, turnID string, now time.Time) bool {
	if h.Claims == nil {
		return false
	}
	c, err := h.Claims.GetClaim(ctx, store.IntentKey(turnID), now)
	return err == nil && c.State == store.ClaimPending && c.Thread.Platform != ""
}

// previewClosed is why a turn takes no more previews: its final reply was
// posted, or it stopped waiting.
func previewClosed(a store.Await, now time.Time) (string, bool) {
	switch {
	case a.State == store.AwaitFinal:
		return "answered", true
	case a.State != store.AwaitOpen || !now.Before(a.Deadline):
		return "timed_out", true
	}
	return "", false
}

func (h *PreviewHandler) notShown(w http.ResponseWriter, log *slog.Logger, ans PreviewAnswer) {
	log.Info("preview not shown", "outcome", "preview_"+ans.Reason, "updates", ans.Updates)
	respond(w, http.StatusOK, ans)
}
