package fakediscord

import (
	"net/http"
	"strconv"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/message"
)

// The limit the fake holds an interaction's message edits to: Discord
// buckets message writes per webhook (its id and token) at about
// EditsPerWindow per EditWindow, and answers more with 429 and retry_after.
const (
	EditsPerWindow = 5
	EditWindow     = 5 * time.Second
)

// limitEdit takes one edit of a message of the interaction token at the
// recorder's clock, or answers 429 (Discord's body: retry_after in float
// seconds, global false; Retry-After and X-RateLimit-* headers) and
// returns false.
func (a *API) limitEdit(w http.ResponseWriter, token string) bool {
	now := a.Recorder().Now()
	a.mu.Lock()
	var recent []time.Time
	for _, at := range a.edits[token] {
		if now.Sub(at) < EditWindow {
			recent = append(recent, at)
		}
	}
	if len(recent) >= EditsPerWindow {
		a.edits[token] = recent
		a.mu.Unlock()
		wait := EditWindow - now.Sub(recent[0])
		secs, global := wait.Seconds(), false
		w.Header().Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
		w.Header().Set("X-RateLimit-Limit", strconv.Itoa(EditsPerWindow))
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Global", "false")
		w.Header().Set("X-RateLimit-Scope", "user")
		fakeapi.WriteJSON(w, http.StatusTooManyRequests, apiError{Message: "You are being rate limited.", RetryAfter: &secs, Global: &global})
		a.Recorder().Refused()
		return false
	}
	a.edits[token] = append(recent, now)
	a.mu.Unlock()
	return true
}

// deleteWebhookMessage deletes a message of an interaction through its
// token (DELETE /webhooks/{app}/{token}/messages/{id}, id a message the
// interaction made or @original): 204 No Content, 10008 for one it does
// not have (its deferred response before any edit gave it a message, or
// one deleted already).
func (a *API) deleteWebhookMessage(w http.ResponseWriter, r *http.Request) {
	token, channel, ok := a.interaction(w, r)
	if !ok {
		return
	}
	target := r.PathValue("id")
	a.mu.Lock()
	id := target
	if target == "@original" {
		id = a.originals[token]
	}
	m, known := a.messages[id]
	known = known && m.Interaction == token && m.ChannelID == channel
	a.mu.Unlock()
	a.remove(w, channel, id, known)
}

// deleteMessage deletes a channel message with the bot token (DELETE
// /channels/{channel}/messages/{id}): 204, or 10008.
func (a *API) deleteMessage(w http.ResponseWriter, r *http.Request) {
	channel, id := r.PathValue("channel"), r.PathValue("id")
	if !a.bot(w, r) {
		return
	}
	m, known := a.Message(id)
	a.remove(w, channel, id, known && m.ChannelID == channel)
}

// remove forgets message id of channel and records the deletion; a later
// edit of it, @original included, answers 10008.
func (a *API) remove(w http.ResponseWriter, channel, id string, known bool) {
	a.Recorder().Refused() // counted as a call; deletions take no faults
	if !known {
		fail(w, http.StatusNotFound, 10008, "Unknown Message", nil)
		return
	}
	a.mu.Lock()
	delete(a.messages, id)
	a.mu.Unlock()
	a.Recorder().Deleted(fakeapi.Deletion{Platform: message.Discord, Chat: channel, MessageID: id})
	w.WriteHeader(http.StatusNoContent)
}
