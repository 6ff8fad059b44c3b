package agentapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/parleyhq/parley/shared/envelope"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
)

// Awaits is the await store as the handler uses it.
type Awaits interface {
	GetAwait(ctx context.Context, turnID string) (store.Await, error)
	FinishAwait(ctx context.Context, turnID string, post store.AwaitPost, now time.Time) (store.Await, error)
}

// Waker makes a waiting turn's inbound message visible at once
// (ChangeMessageVisibility to zero on inbound.fifo).
type Waker interface {
	ChangeVisibility(ctx context.Context, receiptHandle string, d time.Duration) error
}

// Handler serves POST /reply.
type Handler struct {
	// Verifier checks the agent's signature (PARLEY_AGENT_SECRET).
	Verifier standardwebhooks.Verifier
	Awaits   Awaits
	// Waker, when set, wakes the waiting turn; without it the turn finds
	// the post at its next poll.
	Waker Waker
	// Envelope and Capabilities check a post the way the turn plans it:
	// the envelope's limits, for the thread's platform.
	Envelope     envelope.Config
	Capabilities func(message.Platform) (message.Capabilities, bool)
	Now          func() time.Time
	Log          *slog.Logger
}

// Accepted is the answer to a post that was recorded.
type Accepted struct {
	TurnID string `json:"turn_id"`
	// Bubbles is how many platform messages the reply plans into.
	Bubbles int `json:"bubbles"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := h.log()
	if r.URL.Path != "/reply" {
		refuse(w, log, http.StatusNotFound, "not_found", "no such endpoint: POST /reply")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(w, log, http.StatusMethodNotAllowed, "method", "use POST")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxPostBytes+1))
	if err != nil {
		refuse(w, log, http.StatusBadRequest, "unreadable", "the body could not be read")
		return
	}
	if len(body) > MaxPostBytes {
		refuse(w, log, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is over %d bytes", MaxPostBytes))
		return
	}
	now := h.now()
	postID, err := h.Verifier.Verify(r.Header, body, now)
	if err != nil {
		refuse(w, log, http.StatusUnauthorized, "unauthorized", "signature: "+err.Error())
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
	switch {
	case errors.Is(err, store.ErrNotFound):
		refuse(w, log, http.StatusNotFound, "unknown_turn", "no turn with this turn_id is waiting for a reply")
		return
	case err != nil:
		log.Error("read the wait failed", "error", err)
		refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try again")
		return
	}
	if a.State != store.AwaitOpen || !now.Before(a.Deadline) {
		h.closed(w, r, log, a, postID, now)
		return
	}
	caps, ok := h.Capabilities(a.Thread.Platform)
	if !ok {
		refuse(w, log, http.StatusConflict, "unknown_platform", "the turn's platform is not configured")
		return
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
	}
	a, err = h.Awaits.FinishAwait(r.Context(), post.TurnID, store.AwaitPost{ID: postID, ContentType: post.ContentType, Body: post.Body, At: now}, now)
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
	h.wake(r.Context(), log, a)
	log.Info("reply recorded", "outcome", "accepted", "bubbles", len(plan.Units))
	respond(w, http.StatusOK, Accepted{TurnID: post.TurnID, Bubbles: len(plan.Units)})
}

// closed answers a post to a turn that no longer waits: the same post
// again (a retry) gets its answer again; any other is refused.
func (h *Handler) closed(w http.ResponseWriter, r *http.Request, log *slog.Logger, a store.Await, postID string, now time.Time) {
	switch {
	case a.State == store.AwaitFinal && a.Post.ID == postID:
		h.wake(r.Context(), log, a)
		log.Info("reply already recorded", "outcome", "duplicate")
		bubbles := 0
		if caps, ok := h.Capabilities(a.Thread.Platform); ok {
			if plan, err := envelope.Build(envelope.Reply{Body: a.Post.Body, ContentType: a.Post.ContentType}, h.Envelope, caps); err == nil {
				bubbles = len(plan.Units)
			}
		}
		respond(w, http.StatusOK, Accepted{TurnID: a.TurnID, Bubbles: bubbles})
	case a.State == store.AwaitFinal:
		refuse(w, log, http.StatusConflict, "answered", "the turn's reply was already posted")
	default:
		refuse(w, log, http.StatusConflict, "timed_out", "the turn stopped waiting for its reply at "+a.Deadline.UTC().Format(time.RFC3339))
	}
}

// wake makes the waiting turn's message visible, so it plans the post now
// rather than at its next poll. Best effort: the poll finds it anyway.
func (h *Handler) wake(ctx context.Context, log *slog.Logger, a store.Await) {
	if h.Waker == nil || a.Handle == "" {
		return
	}
	if err := h.Waker.ChangeVisibility(ctx, a.Handle, 0); err != nil {
		log.Warn("wake the waiting turn failed; it finds the reply at its next poll", "error", err)
	}
}

type problem struct {
	Error  string `json:"error"`
	Reason string `json:"reason"`
}

func refuse(w http.ResponseWriter, log *slog.Logger, status int, code, reason string) {
	log.Warn("post refused", "outcome", code, "status", status)
	respond(w, status, problem{Error: code, Reason: reason})
}

func respond(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Handler) log() *slog.Logger {
	if h.Log != nil {
		return h.Log
	}
	return slog.Default()
}
