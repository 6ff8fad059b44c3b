package agentapi

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/preview"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
)

// PreviewAwaits is the await store as preview posts use it: each update
// holds the record's preview lease while it runs (store.PreviewTake).
type PreviewAwaits interface {
	GetAwait(ctx context.Context, turnID string) (store.Await, error)
	TakeAwaitPreview(ctx context.Context, turnID string, t store.PreviewTake) (store.Await, error)
	ReleaseAwaitPreview(ctx context.Context, turnID, lease string) error
}

// Previews reads and records a turn's preview message (store.Previews);
// an async turn's update records it under its lease (RecordAwaitPreview).
type Previews interface {
	GetPreview(ctx context.Context, key string, now time.Time) (message.Preview, error)
	DropPreview(ctx context.Context, key string) error
	RecordPreview(ctx context.Context, p message.Preview, now time.Time, ttl time.Duration) error
	RecordAwaitPreview(ctx context.Context, turnID, lease string, p message.Preview, now time.Time, ttl time.Duration) error
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
// max(Config.Interval, the platform's minimum), one at a time, and
// Config.MaxUpdates a turn. A post the throttle refuses is answered 200
// with shown false: a preview is best effort, and the agent's next post
// carries all the text.
//
// An update races the reply that ends the preview (the final post, or the
// first sequential one) by a lease: the update's platform call and record
// write are bounded by the lease it took, its record is written only while
// the lease holds (store.RecordAwaitPreview), and the reply's settler waits
// for the lease before it reads the record (preview.Settle). An update
// that outlived its lease made a message no one else knows: it deletes it.
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
	// Reason says why a preview was not shown: throttled (inside the
	// interval, or another update in flight), rate_limited, early (Parley
	// has not read the 202 yet), max_updates, unsupported (the turn's
	// platform or chat shows no preview) or failed.
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

// A sequential post settles a preview within the reply function's 10
// seconds: it waits postSettleWait at most for an update in flight (a 503
// asks for the post again past it), then clears the status line and the
// preview, each in a call of its own bound, so that a slow status call
// does not cut the clear short.
const (
	postSettleWait = 3 * time.Second
	statusCall     = 2 * time.Second
)

func (h *PreviewHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := logOr(h.Log)
	if !postTo(w, r, log, "/reply/preview") {
		return
	}
	now := nowFrom(h.Now)
	// The update's bounds run from here in wall time, whatever the clock:
	// its lease, on the record, counts from now.
	started := time.Now()
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
		switch early, err := h.inFlight(ctx, pp.TurnID, now); {
		case err != nil:
			// Unknown is not "no such turn": a 404 would end the agent's
			// previews for a turn that is waiting.
			log.Error("read the turn's claim failed", "error", err)
			refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try again")
		case early:
			h.notShown(w, log, PreviewAnswer{TurnID: pp.TurnID, Reason: "early", RetryAfterMS: time.Second.Milliseconds()})
		default:
			refuse(w, log, http.StatusNotFound, "unknown_turn", "no turn with this turn_id is waiting for a reply")
		}
		return
	case err != nil:
		log.Error("read the wait failed", "error", err)
		refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try again")
		return
	}
	log = log.With("event_key", a.EventKey)
	if reason, closed := previewClosed(a, now); closed {
		refuse(w, log, http.StatusConflict, reason, closedPreview[reason])
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
	sp, native := pl.(preview.StatusPreviewer)
	native = native && sp.NativeStatus(a.Thread)
	lease := rand.Text()
	taken, err := h.Awaits.TakeAwaitPreview(ctx, a.TurnID, store.PreviewTake{
		Now: now, Next: now.Add(interval), Busy: now.Add(call + previewRecordMargin), Max: cfg.MaxUpdates,
		Lease: lease, Status: native && pp.Status != "",
	})
	var conflict *store.AwaitConflictError
	switch {
	case errors.As(err, &conflict):
		cur := conflict.Current
		if reason, closed := previewClosed(cur, now); closed {
			refuse(w, log, http.StatusConflict, reason, closedPreview[reason])
			return
		}
		ans := PreviewAnswer{TurnID: a.TurnID, Updates: cur.PreviewUpdates, Reason: "max_updates"}
		if cur.PreviewUpdates < cfg.MaxUpdates {
			next := cur.PreviewNext
			if cur.PreviewLease != "" && cur.PreviewBusy.After(next) {
				next = cur.PreviewBusy // another update in flight
			}
			ans.Reason, ans.RetryAfterMS = "throttled", max(1, next.Sub(now).Milliseconds())
		}
		h.notShown(w, log, ans)
		return
	case err != nil:
		log.Error("take the preview update failed", "error", err)
		refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try again")
		return
	}
	ans := PreviewAnswer{TurnID: a.TurnID, Updates: taken.PreviewUpdates}
	err = h.update(ctx, log, pl, taken, pp, native, now, started.Add(call))
	// The lease is let go at once, so that the next update or the reply's
	// settler need not wait for its bound; one that cannot be let go ends
	// at its bound.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), previewRecordMargin)
	if rerr := h.Awaits.ReleaseAwaitPreview(rctx, a.TurnID, lease); rerr != nil && !errors.Is(rerr, store.ErrConflict) {
		log.Warn("release the preview update failed; it ends at its bound", "error", rerr)
	}
	cancel()
	if err != nil {
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

// update shows a post's preview: its status line natively where the
// platform shows one of its own, and its text, through show.
func (h *PreviewHandler) update(ctx context.Context, log *slog.Logger, pl Previewer, a store.Await, pp PreviewPost, native bool, now, deadline time.Time) error {
	if !native {
		return h.show(ctx, log, pl, a, preview.Render(pp.Text, pp.Status), now, deadline)
	}
	var err error
	if pp.Status != "" || a.PreviewStatus {
		// Each post is the whole preview: one with no status ends the
		// status an earlier one set.
		sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		err = pl.(preview.StatusPreviewer).PreviewStatus(sctx, a.Thread, strings.TrimSpace(pp.Status))
		cancel()
	}
	if strings.TrimSpace(pp.Text) != "" {
		err = errors.Join(err, h.show(ctx, log, pl, a, preview.Render(pp.Text, ""), now, deadline))
	}
	return err
}

// show updates the turn's preview: the one its record names (an earlier
// post's), or a new one where the turn's base says. A new message is
// recorded under the update's lease; when the lease has ended, the
// message is deleted at once (preview.UnrecordedError): the reply's
// settler may have read the record already, and would leave it beside
// the reply.
func (h *PreviewHandler) show(ctx context.Context, log *slog.Logger, pl Previewer, a store.Await, text string, now, deadline time.Time) error {
	// Cut at the update's bound, whatever the agent's connection does: the
	// reply's settler waits no longer than the lease.
	ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
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
	next, err := preview.Show(ctx, pl, leased{h.Previews, a.TurnID, a.PreviewLease}, a.Preview, cur, text, now, h.ttl())
	if next.MessageID != "" && next.MessageID != cur.MessageID {
		log.Info("preview message created", "message_id", next.MessageID)
	}
	return err
}

// leased records a preview under an update's lease (RecordAwaitPreview).
type leased struct {
	Previews
	turnID, lease string
}

func (l leased) RecordPreview(ctx context.Context, p message.Preview, now time.Time, ttl time.Duration) error {
	return l.RecordAwaitPreview(ctx, l.turnID, l.lease, p, now, ttl)
}

func (h *PreviewHandler) ttl() time.Duration {
	if h.TTL > 0 {
		return h.TTL
	}
	return intentTTL
}

// inFlight reports whether turnID names a turn that was sent and not
// settled: its agent posted before Parley read the 202. An error is one
// reading the claim, never its absence.
func (h *PreviewHandler) inFlight(ctx context.Context, turnID string, now time.Time) (bool, error) {
	if h.Claims == nil {
		return false, nil
	}
	c, err := h.Claims.GetClaim(ctx, store.IntentKey(turnID), now)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return c.State == store.ClaimPending && c.Thread.Platform != "", nil
}

// previewClosed is why a turn takes no more previews: its final reply was
// posted, it stopped waiting, or its first sequential post settled the
// preview.
func previewClosed(a store.Await, now time.Time) (string, bool) {
	switch {
	case a.State == store.AwaitFinal:
		return "answered", true
	case a.State != store.AwaitOpen || !now.Before(a.Deadline):
		return "timed_out", true
	case a.PreviewSettled != "" || len(a.Posts) > 0:
		// A sequential post that came before the turn read its 202 opened
		// the record with no preview base, so it settled nothing: its
		// posts end the previews all the same.
		return "posted", true
	}
	return "", false
}

// closedPreview is the message of a 409 for each reason previewClosed gives.
var closedPreview = map[string]string{
	"answered":  "the turn no longer waits: a preview is shown only before its final reply",
	"timed_out": "the turn no longer waits: a preview is shown only before its final reply",
	"posted":    "a reply was posted: a turn's previews end with its first posted reply",
}

func (h *PreviewHandler) notShown(w http.ResponseWriter, log *slog.Logger, ans PreviewAnswer) {
	log.Info("preview not shown", "outcome", "preview_"+ans.Reason, "updates", ans.Updates)
	respond(w, http.StatusOK, ans)
}
