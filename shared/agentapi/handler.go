package agentapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/parleyhq/parley/shared/envelope"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/preview"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
)

// Awaits is the await store as the handler uses it.
type Awaits interface {
	OpenAwait(ctx context.Context, a store.Await) (store.Await, bool, error)
	GetAwait(ctx context.Context, turnID string) (store.Await, error)
	FinishAwait(ctx context.Context, turnID string, post store.AwaitPost, now time.Time) (store.Await, error)
	AddAwaitPost(ctx context.Context, turnID, postID string, bubbles, prevBubbles int, now time.Time) (store.Await, error)
	ExpireAwait(ctx context.Context, turnID string) (store.Await, error)
	SettleAwaitPreview(ctx context.Context, turnID, by string, now, busy time.Time) (store.Await, error)
}

// Intents is the intent store as sequential posts use it.
type Intents interface {
	CreateIntent(ctx context.Context, in intent.Intent) (intent.Intent, bool, error)
	GetIntent(ctx context.Context, id string) (intent.Intent, error)
}

// Outbox enqueues a post's units on outbound.fifo.
type Outbox interface {
	SendBatch(ctx context.Context, msgs []queue.Message) error
}

// Waker makes a waiting turn's inbound message visible at once
// (ChangeMessageVisibility to zero on inbound.fifo).
type Waker interface {
	ChangeVisibility(ctx context.Context, receiptHandle string, d time.Duration) error
}

// Claims reads a turn's claim (store.IntentKey of its id).
type Claims interface {
	GetClaim(ctx context.Context, key string, now time.Time) (store.Claim, error)
}

// Handler serves POST /reply.
type Handler struct {
	// Verifier checks the agent's signature (PARLEY_AGENT_SECRET).
	Verifier standardwebhooks.Verifier
	Awaits   Awaits
	// Intents and Outbox deliver sequential posts.
	Intents Intents
	Outbox  Outbox
	// Waker, when set, wakes the waiting turn; without it the turn finds
	// the post at its next poll.
	Waker Waker
	// Claims, when set, lets a post arrive before Parley has read the
	// agent's 202: a turn with no await record whose claim is pending
	// (sent, not settled) gets one, opened by the post, and the turn takes
	// the post when the 202 lands. Without it such a post is 404.
	Claims Claims
	// AsyncTimeout is PARLEY_ASYNC_TIMEOUT: the deadline of a record an
	// early post opens. Defaults to 15 minutes.
	AsyncTimeout time.Duration
	// Envelope and Capabilities check a post the way the turn plans it:
	// the envelope's limits, for the thread's platform.
	Envelope     envelope.Config
	Capabilities func(message.Platform) (message.Capabilities, bool)
	// Previews and Previewers, when set, let the turn's first sequential
	// post settle the preview its agent posted (POST /reply/preview), as a
	// final post does: its first bubble finalizes it, or it is cleared.
	// Without them a sequential post leaves the preview to the final.
	Previews   Previews
	Previewers map[message.Platform]Previewer
	Now        func() time.Time
	Log        *slog.Logger
}

// Accepted is the answer to a post that was recorded.
type Accepted struct {
	TurnID string `json:"turn_id"`
	// Bubbles is how many of the post's bubbles are delivered; Cut how many
	// the turn's bubble cap cut (the cap counts every post of the turn).
	Bubbles int `json:"bubbles"`
	Cut     int `json:"cut"`
	// Final is whether the post ended the turn.
	Final bool `json:"final"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := h.log()
	if !postTo(w, r, log, "/reply") {
		return
	}
	now := h.now()
	body, postID, ok := signedBody(w, r, log, h.Verifier, MaxPostBytes, fmt.Sprintf("the body is over %d bytes", MaxPostBytes), now)
	if !ok {
		return
	}
	log = log.With("post_id", postID)
	post, err := ParsePost(body)
	if err != nil {
		refuse(w, log, http.StatusBadRequest, "malformed", err.Error())
		return
	}
	log = log.With("turn_id", post.TurnID)
	a, err := h.Awaits.GetAwait(r.Context(), post.TurnID)
	// early: the turn was sent and its 202 not read yet; its record is
	// opened once the post is found good, so a refused post writes nothing.
	var early *store.Await
	if errors.Is(err, store.ErrNotFound) {
		if a, err = h.early(r.Context(), post.TurnID, now); err == nil {
			early = &a
		}
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		refuse(w, log, http.StatusNotFound, "unknown_turn", "no turn with this turn_id is waiting for a reply")
		return
	case err != nil:
		log.Error("read the wait failed", "error", err)
		refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try again")
		return
	}
	log = log.With("event_key", a.EventKey)
	if a.State != store.AwaitOpen || !now.Before(a.Deadline) {
		h.closed(w, r, log, a, postID, now)
		return
	}
	caps, ok := h.Capabilities(a.Thread.Platform)
	if !ok {
		refuse(w, log, http.StatusConflict, "unknown_platform", "the turn's platform is not configured")
		return
	}
	if post.Body == nil {
		post.ContentType, post.Body = "application/json", []byte(emptyEnvelope)
	}
	plan, err := envelope.Build(envelope.Reply{Body: post.Body, ContentType: post.ContentType}, h.Envelope, caps)
	var limit *envelope.LimitError
	switch {
	case errors.As(err, &limit):
		refuse(w, log, http.StatusUnprocessableEntity, "over_limit", fmt.Sprintf("%s: %d, at most %d", limit.Limit, limit.Got, limit.Max))
		return
	case err != nil:
		refuse(w, log, http.StatusUnprocessableEntity, "invalid_reply", err.Error())
		return
	case plan.Problem != nil:
		refuse(w, log, http.StatusUnprocessableEntity, "invalid_envelope", plan.Problem.Error())
		return
	case !post.Final && plan.Next.Type == envelope.NextAsk:
		refuse(w, log, http.StatusUnprocessableEntity, "ask_not_final", "a question ends the turn: post it with final true")
		return
	}
	replaces := ""
	if post.Replace != "" {
		var reason string
		if replaces, reason = h.replaced(r.Context(), a, post.Replace, plan); reason != "" {
			refuse(w, log, http.StatusUnprocessableEntity, "bad_replace", reason)
			return
		}
	}
	if early != nil {
		// The turn may have opened it meanwhile: then its record stands.
		if a, _, err = h.Awaits.OpenAwait(r.Context(), *early); err != nil {
			log.Error("hold the early post failed", "error", err)
			refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try again")
			return
		}
		log.Info("post arrived before the turn's 202 was read; held for it", "outcome", "early")
		if a.State != store.AwaitOpen {
			h.closed(w, r, log, a, postID, now)
			return
		}
	}
	if !post.Final {
		h.sequential(w, r, log, a, postID, plan, replaces, now)
		return
	}
	a, err = h.Awaits.FinishAwait(r.Context(), post.TurnID, store.AwaitPost{ID: postID, ContentType: post.ContentType, Body: post.Body, At: now, Replaces: replaces}, now)
	var conflict *store.AwaitConflictError
	switch {
	case errors.As(err, &conflict):
		h.closed(w, r, log, conflict.Current, postID, now)
		return
	case err != nil:
		log.Error("record the post failed", "error", err)
		refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try again")
		return
	}
	if !h.wake(r.Context(), log, a) {
		refuse(w, log, http.StatusServiceUnavailable, "unavailable", "recorded, but the waiting turn was not woken: post the same again (same webhook-id)")
		return
	}
	acc := h.accepted(a, plan, true)
	log.Info("reply recorded", "outcome", "accepted", "bubbles", acc.Bubbles, "cut", acc.Cut, "final", true)
	respond(w, http.StatusOK, acc)
}

// early is the await record a post opens for a turn that has none yet but
// was sent and not settled (its claim is pending, and names its thread):
// the agent posted before Parley read its 202. The turn takes the record
// over when the 202 lands, and plans a final post at once. store.ErrNotFound
// when no such turn is in flight.
func (h *Handler) early(ctx context.Context, turnID string, now time.Time) (store.Await, error) {
	if h.Claims == nil {
		return store.Await{}, fmt.Errorf("await %s: %w", turnID, store.ErrNotFound)
	}
	key := store.IntentKey(turnID)
	c, err := h.Claims.GetClaim(ctx, key, now)
	if err != nil {
		return store.Await{}, err
	}
	if c.State != store.ClaimPending || c.Thread.Platform == "" {
		return store.Await{}, fmt.Errorf("turn %s is %s: %w", turnID, c.State, store.ErrNotFound)
	}
	timeout := cmp.Or(h.AsyncTimeout, 15*time.Minute)
	return store.Await{
		TurnID: turnID, Thread: c.Thread, EventKey: c.Origin, ClaimKey: key, ClaimOwner: c.Owner,
		Deadline: now.Add(timeout), CreatedAt: now, ExpiresAt: now.Add(timeout + store.DedupeTTL), State: store.AwaitOpen,
		Posts: map[string]int{},
	}, nil
}

// emptyEnvelope is a final post that only ends the turn.
const emptyEnvelope = `{"schema":"openab.turn.v1","messages":[]}`

// accepted is what a post's answer says: how many of its bubbles the
// turn's cap let through (the posts before it counted), and how many it cut.
func (h *Handler) accepted(a store.Await, plan envelope.Plan, final bool) Accepted {
	total := len(Bubbles(plan.Units))
	allowed := max(0, h.Envelope.WithDefaults().MaxBubbles-a.Bubbles)
	n := min(total, allowed)
	return Accepted{TurnID: a.TurnID, Bubbles: n, Cut: total - n, Final: final}
}

// Bubbles are the bubble ids of units, in order, each once.
func Bubbles(units []envelope.Unit) []string {
	var ids []string
	for _, u := range units {
		if len(ids) == 0 || ids[len(ids)-1] != u.BubbleID {
			ids = append(ids, u.BubbleID)
		}
	}
	return ids
}

// replaced finds the unit an earlier post of the turn sent as bubble id,
// which plan's one bubble, in one message, replaces; or why it cannot.
func (h *Handler) replaced(ctx context.Context, a store.Await, id string, plan envelope.Plan) (string, string) {
	if len(plan.Units) != 1 || plan.Next.Type == envelope.NextAsk {
		return "", "a replacing post carries one bubble that fits one message, and no question"
	}
	if plan.Units[0].Media != nil {
		// An edit changes a message's text; no platform edits a file in.
		return "", "a replacing post carries text, not media"
	}
	for p, n := range a.Posts {
		if n == 0 {
			continue
		}
		in, err := h.Intents.GetIntent(ctx, PostIntentID(a.TurnID, p))
		if err != nil {
			continue
		}
		if i := in.Index(id + "#1"); i >= 0 && in.Index(id+"#2") < 0 {
			return intent.UnitKey(in.ID, in.Units[i].ID), ""
		}
	}
	return "", "replace names no one-message bubble of this turn's earlier posts"
}

// sequential records and delivers a post with final false: its bubbles go
// out now, in the thread's order, within what the turn's cap has left; the
// turn keeps waiting. A retried post delivers what it was allowed the
// first time, once. A post after one of the turn's bubbles failed for good
// abandons the turn: the person keeps what arrived.
func (h *Handler) sequential(w http.ResponseWriter, r *http.Request, log *slog.Logger, a store.Await, postID string, plan envelope.Plan, replaces string, now time.Time) {
	ctx := r.Context()
	for range 3 { // a post that raced another reads the count again
		if n, ok := a.Posts[postID]; ok {
			h.deliverPost(w, r, log, a, postID, plan, replaces, n, now)
			return
		}
		if h.abandoned(ctx, log, a) {
			if _, err := h.Awaits.ExpireAwait(ctx, a.TurnID); err != nil && !errors.As(err, new(*store.AwaitConflictError)) {
				log.Error("abandon the turn failed", "error", err)
			}
			h.wake(ctx, log, a) // so the thread moves on now
			refuse(w, log, http.StatusConflict, "abandoned", "a bubble of this turn failed for good: the rest of the turn is abandoned")
			return
		}
		acc := h.accepted(a, plan, false)
		next, err := h.Awaits.AddAwaitPost(ctx, a.TurnID, postID, acc.Bubbles, a.Bubbles, now)
		var conflict *store.AwaitConflictError
		switch {
		case errors.As(err, &conflict):
			a = conflict.Current
			if a.State != store.AwaitOpen || !now.Before(a.Deadline) {
				h.closed(w, r, log, a, postID, now)
				return
			}
			continue
		case err != nil:
			log.Error("record the post failed", "error", err)
			refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try again")
			return
		}
		h.deliverPost(w, r, log, next, postID, plan, replaces, acc.Bubbles, now)
		return
	}
	refuse(w, log, http.StatusServiceUnavailable, "unavailable", "the turn kept changing; try again")
}

// PostIntentID is the intent a sequential post's bubbles are delivered as.
func PostIntentID(turnID, postID string) string {
	return intent.IDFor(turnID + intent.PostMark + postID)
}

// deliverPost persists the first n bubbles of a sequential post as its own
// intent and enqueues it in the thread's group, then answers.
func (h *Handler) deliverPost(w http.ResponseWriter, r *http.Request, log *slog.Logger, a store.Await, postID string, plan envelope.Plan, replaces string, n int, now time.Time) {
	keep := Bubbles(plan.Units)[:n]
	var units []intent.Unit
	for _, u := range plan.Units {
		if slices.Contains(keep, u.BubbleID) {
			units = append(units, intent.Unit{ID: u.ID, Content: u.Content(), State: message.UnitPending, Replaces: replaces})
		}
	}
	total := len(Bubbles(plan.Units))
	acc := Accepted{TurnID: a.TurnID, Bubbles: n, Cut: total - n}
	if err := h.settlePreview(r.Context(), log, a, postID, units, now); err != nil {
		log.Error("settle the turn's preview failed", "error", err)
		refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try the same post again")
		return
	}
	if len(units) > 0 {
		in := intent.Intent{
			ID: PostIntentID(a.TurnID, postID), Origin: a.EventKey + intent.PostMark + postID, Thread: a.Thread, Units: units,
			CreatedAt: now, ExpiresAt: now.Add(intentTTL), SweepAt: now.Add(intent.SweepGrace),
		}
		if a.Preview.Thread.Platform != "" {
			// The turn's record holds its event's right to be answered
			// (an early post's has none): its posts answer it in order,
			// after the bubbles of the posts before (a.Bubbles counts
			// this one's n already), and the final after them all.
			in.ReplyContext, in.Sequence = a.Preview.ReplyContext, max(0, a.Bubbles-n)
		}
		stored, _, err := h.Intents.CreateIntent(r.Context(), in)
		if err == nil {
			err = h.Outbox.SendBatch(r.Context(), queue.Units(stored))
		}
		if err != nil {
			// Recorded, not yet delivered: the same post again delivers it.
			log.Error("deliver the post failed", "error", err)
			refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try the same post again")
			return
		}
	}
	log.Info("sequential post delivered", "outcome", "accepted", "bubbles", acc.Bubbles, "cut", acc.Cut, "final", false)
	respond(w, http.StatusOK, acc)
}

// settlePreview settles the preview the turn's agent posted before this,
// its first sequential post, exactly as the final would (ADR 0020): once
// the update in flight is over (preview.Settle), the post's first bubble,
// when it is text, finalizes the preview in place (units[0].Replaces, and
// the preview's record names the post's intent, so the sweeper finds the
// bubble that finalizes it); otherwise the preview is cleared now. No
// preview is taken after it. A retried post settles again the same way; a
// later post, or one whose turn shows no preview, changes nothing.
func (h *Handler) settlePreview(ctx context.Context, log *slog.Logger, a store.Await, postID string, units []intent.Unit, now time.Time) error {
	by := store.SettledByPost(postID)
	if h.Previews == nil || a.Preview.Thread.Platform == "" || a.PreviewSettled != "" && a.PreviewSettled != by {
		return nil
	}
	s, err := preview.Settle(ctx, h.Awaits, a.TurnID, by, func() time.Time { return nowFrom(h.Now) }, preview.MaxSettleWait, postSettleWait)
	if errors.As(err, new(*store.AwaitConflictError)) {
		return nil // a post in between settled it
	}
	if err != nil || s.PreviewUpdates == 0 {
		return err
	}
	pl := h.Previewers[s.Thread.Platform]
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statusCall)
	defer cancel()
	if err := preview.EndStatus(sctx, pl, s); err != nil {
		log.Warn("the thread's status could not be cleared", "error", err)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), maxPreviewCall)
	defer cancel()
	pv, err := h.Previews.GetPreview(ctx, a.TurnID, now)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case pv.MessageID == "":
		return nil // a draft: it goes on its own
	}
	if preview.FinalizeInto(units, a.TurnID) {
		pv.FinalizedBy = PostIntentID(a.TurnID, postID)
		if err := h.Previews.RecordPreview(ctx, pv, now, intentTTL); err != nil {
			return err
		}
		log.Info("the first sequential post finalizes the preview", "message_id", pv.MessageID)
		return nil
	}
	if pl == nil {
		log.Error("the preview cannot be cleared: no sender for its platform; the sweeper takes it", "message_id", pv.MessageID)
		return nil
	}
	if err := pl.ClearPreview(cctx, pv); err != nil {
		log.Warn("the preview could not be cleared; its record stays for the sweeper", "message_id", pv.MessageID, "error", err)
		return nil
	}
	if err := h.Previews.DropPreview(cctx, a.TurnID); err != nil {
		log.Warn("a cleared preview's record could not be dropped", "error", err)
	}
	log.Info("preview cleared", "message_id", pv.MessageID)
	return nil
}

// intentTTL is how long a post's intent is kept, as a turn's.
const intentTTL = 30 * 24 * time.Hour

// abandoned reports whether a bubble of the turn's earlier posts failed for
// good.
func (h *Handler) abandoned(ctx context.Context, log *slog.Logger, a store.Await) bool {
	for id, n := range a.Posts {
		if n == 0 {
			continue // the cap cut it whole: it has no intent
		}
		in, err := h.Intents.GetIntent(ctx, PostIntentID(a.TurnID, id))
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				log.Warn("read an earlier post failed", "error", err)
			}
			continue
		}
		for _, u := range in.Units {
			if u.State == message.UnitFailed {
				return true
			}
		}
	}
	return false
}

// closed answers a post to a turn that no longer waits: the same post
// again (a retry) gets its answer again; any other is refused.
func (h *Handler) closed(w http.ResponseWriter, r *http.Request, log *slog.Logger, a store.Await, postID string, now time.Time) {
	switch {
	case a.State == store.AwaitFinal && a.Post.ID == postID:
		if !h.wake(r.Context(), log, a) {
			refuse(w, log, http.StatusServiceUnavailable, "unavailable", "recorded, but the waiting turn was not woken: post the same again (same webhook-id)")
			return
		}
		log.Info("reply already recorded", "outcome", "duplicate")
		acc := Accepted{TurnID: a.TurnID, Final: true}
		if caps, ok := h.Capabilities(a.Thread.Platform); ok {
			if plan, err := envelope.Build(envelope.Reply{Body: a.Post.Body, ContentType: a.Post.ContentType}, h.Envelope, caps); err == nil {
				acc = h.accepted(a, plan, true)
			}
		}
		respond(w, http.StatusOK, acc)
	case a.State == store.AwaitFinal:
		refuse(w, log, http.StatusConflict, "answered", "the turn's reply was already posted")
	default:
		refuse(w, log, http.StatusConflict, "timed_out", "the turn stopped waiting for its reply at "+a.Deadline.UTC().Format(time.RFC3339))
	}
}

// wake makes the waiting turn's message visible, so it plans the post now
// rather than at its next look, up to an hour away (ADR 0014). It reports
// false when the wake failed and should be tried again: a handle that is
// gone is no failure (the message was received again, and its turn reads
// the record), and a record with no handle has no message parked yet (its
// turn reads the record when its 202 lands).
func (h *Handler) wake(ctx context.Context, log *slog.Logger, a store.Await) bool {
	if h.Waker == nil || a.Handle == "" {
		return true
	}
	err := h.Waker.ChangeVisibility(ctx, a.Handle, 0)
	if err != nil && !errors.Is(err, queue.ErrReceiptGone) {
		log.Warn("wake the waiting turn failed", "error", err)
		return false
	}
	return true
}

// refuse answers with the one refusal body of every endpoint
// (platform.Problem).
// signedBody reads a post's body, at most max bytes, and checks its
// Standard Webhooks signature at now. A refusal (400 unreadable, 413
// too_large with hint, 401 unauthorized) is answered here, and ok is false.
func signedBody(w http.ResponseWriter, r *http.Request, log *slog.Logger, v standardwebhooks.Verifier, max int, hint string, now time.Time) (body []byte, postID string, ok bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(max)+1))
	switch {
	case err != nil:
		refuse(w, log, http.StatusBadRequest, "unreadable", "the body could not be read")
		return nil, "", false
	case len(body) > max:
		refuse(w, log, http.StatusRequestEntityTooLarge, "too_large", hint)
		return nil, "", false
	}
	postID, err = v.Verify(r.Header, body, now)
	if err != nil {
		refuse(w, log, http.StatusUnauthorized, "unauthorized", "signature: "+err.Error())
		return nil, "", false
	}
	return body, postID, true
}

// postTo refuses a request that is not a POST to path (404 for another
// path, 405 for another method) and says whether it is one. An empty path
// is any: a handler mounted under a prefix checks the method alone.
func postTo(w http.ResponseWriter, r *http.Request, log *slog.Logger, path string) bool {
	if path != "" && r.URL.Path != path {
		refuse(w, log, http.StatusNotFound, "not_found", "no such endpoint: POST "+path)
		return false
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(w, log, http.StatusMethodNotAllowed, "method", "use POST")
		return false
	}
	return true
}

func refuse(w http.ResponseWriter, log *slog.Logger, status int, code, reason string) {
	log.Warn("post refused", "outcome", code, "status", status)
	platform.WriteProblem(w, status, code, reason)
}

func respond(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (h *Handler) now() time.Time { return nowFrom(h.Now) }

func (h *Handler) log() *slog.Logger { return logOr(h.Log) }

// nowFrom is a handler's clock: now when set, else the wall clock.
func nowFrom(now func() time.Time) time.Time {
	if now != nil {
		return now()
	}
	return time.Now()
}

// logOr is a handler's logger: l when set, else slog's default.
func logOr(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.Default()
}
