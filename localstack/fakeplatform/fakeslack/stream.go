package fakeslack

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/message"
)

// Limits of Slack's native stream and the assistant status, as the fake
// holds them: markdown_text at most MarkdownLimit characters a call;
// chat.appendStream is Tier 4 and chat.stopStream Tier 2 (the fake answers
// 429 ratelimited past AppendsPerMinute and StopsPerMinute a workspace, as
// the token names it).
const (
	MarkdownLimit    = 12000
	AppendsPerMinute = 100
	StopsPerMinute   = 20
)

// Stream is a streaming message as the fake holds it.
type Stream struct {
	Channel, TS, Thread string
	// Text is every markdown_text the stream got, in order.
	Text string
	// Appends counts chat.appendStream calls; Stopped, chat.stopStream.
	Appends int
	Stopped bool
	// Recipient and RecipientTeam are whom a channel's stream is for.
	Recipient, RecipientTeam string
}

// Status is one assistant.threads.setStatus the fake accepted.
type Status struct {
	Channel, Thread, Status string
	At                      time.Time
}

// streams is the fake's native-stream state.
type streams struct {
	mu       sync.Mutex
	byKey    map[string]*Stream // channel + "/" + ts
	order    []string
	statuses []Status
	calls    map[string][]time.Time // method → recent calls
}

// Streams returns every stream the fake started, in order.
func (a *API) Streams() []Stream {
	a.st.mu.Lock()
	defer a.st.mu.Unlock()
	out := make([]Stream, 0, len(a.st.order))
	for _, k := range a.st.order {
		out = append(out, *a.st.byKey[k])
	}
	return out
}

// Statuses returns every status set, in order ("" clears one).
func (a *API) Statuses() []Status {
	a.st.mu.Lock()
	defer a.st.mu.Unlock()
	return append([]Status(nil), a.st.statuses...)
}

// limited takes one call of method at the recorder's clock, or answers
// Slack's 429 (ratelimited, Retry-After) and returns true.
func (a *API) limited(w http.ResponseWriter, method string, perMinute int) bool {
	now := a.Recorder().Now()
	a.st.mu.Lock()
	var recent []time.Time
	for _, at := range a.st.calls[method] {
		if now.Sub(at) < time.Minute {
			recent = append(recent, at)
		}
	}
	if len(recent) >= perMinute {
		a.st.calls[method] = recent
		a.st.mu.Unlock()
		wait := time.Minute - now.Sub(recent[0])
		w.Header().Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
		fakeapi.WriteJSON(w, http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"})
		return true
	}
	a.st.calls[method] = append(recent, now)
	a.st.mu.Unlock()
	return false
}

// startStream is chat.startStream: a streaming message in channel, in the
// thread thread_ts, with its first markdown_text. A stream in a channel
// (not a DM) must name recipient_user_id and recipient_team_id. The message
// is a delivery; its appends are edits.
func (a *API) startStream(w http.ResponseWriter, r *http.Request) {
	args, ok := a.authorized(w, r)
	if !ok {
		return
	}
	channel, thread, text := fakeapi.Str(args, "channel"), fakeapi.Str(args, "thread_ts"), fakeapi.Str(args, "markdown_text")
	user, team := fakeapi.Str(args, "recipient_user_id"), fakeapi.Str(args, "recipient_team_id")
	a.Send(w, fakeapi.Send{
		Platform: message.Slack,
		Chat:     channel,
		Fail:     failWith,
		Accept: func(w http.ResponseWriter) (fakeapi.Delivery, bool) {
			var refusal string
			switch {
			case !channelID(channel):
				refusal = "channel_not_found"
			case utf8.RuneCountInString(text) > MarkdownLimit:
				refusal = "msg_too_long"
			case !strings.HasPrefix(channel, "D") && (user == "" || team == ""):
				refusal = "invalid_arguments"
			}
			if refusal != "" {
				fail(w, refusal)
				return fakeapi.Delivery{}, false
			}
			return fakeapi.Delivery{Chat: channel, Thread: thread, Text: text, Args: args}, true
		},
		Answer: func(w http.ResponseWriter, d fakeapi.Delivery) {
			a.st.mu.Lock()
			k := channel + "/" + d.MessageID
			a.st.byKey[k] = &Stream{Channel: channel, TS: d.MessageID, Thread: thread, Text: text, Recipient: user, RecipientTeam: team}
			a.st.order = append(a.st.order, k)
			a.st.mu.Unlock()
			fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": channel, "ts": d.MessageID})
		},
	})
}

// stream finds the streaming message of a call: Slack's refusal when it is
// not one the fake started, or is no longer streaming.
func (a *API) stream(channel, ts string) (*Stream, string) {
	if refusal := a.posted(channel, ts); refusal != "" {
		return nil, refusal
	}
	s, ok := a.st.byKey[channel+"/"+ts]
	switch {
	case !ok, s.Stopped:
		return nil, "message_not_in_streaming_state"
	}
	return s, ""
}

// appendStream is chat.appendStream: markdown_text (required) appended to
// a stream, recorded as an edit to the text so far.
func (a *API) appendStream(w http.ResponseWriter, r *http.Request) {
	args, ok := a.authorized(w, r)
	if !ok {
		return
	}
	if a.limited(w, "chat.appendStream", AppendsPerMinute) {
		return
	}
	channel, ts, text := fakeapi.Str(args, "channel"), fakeapi.Str(args, "ts"), fakeapi.Str(args, "markdown_text")
	switch {
	case text == "":
		fail(w, "invalid_arguments")
		return
	case utf8.RuneCountInString(text) > MarkdownLimit:
		fail(w, "msg_too_long")
		return
	}
	a.st.mu.Lock()
	s, refusal := a.stream(channel, ts)
	if refusal != "" {
		a.st.mu.Unlock()
		fail(w, refusal)
		return
	}
	s.Text += text
	s.Appends++
	all := s.Text
	a.st.mu.Unlock()
	a.Recorder().Edited(fakeapi.Edit{Platform: message.Slack, Chat: channel, MessageID: ts, Text: all})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": channel, "ts": ts})
}

// stopStream is chat.stopStream: the stream ends, its message an ordinary
// one (chat.update may change it after). Stopping one that is not
// streaming is message_not_in_streaming_state.
func (a *API) stopStream(w http.ResponseWriter, r *http.Request) {
	args, ok := a.authorized(w, r)
	if !ok {
		return
	}
	if a.limited(w, "chat.stopStream", StopsPerMinute) {
		return
	}
	channel, ts := fakeapi.Str(args, "channel"), fakeapi.Str(args, "ts")
	a.st.mu.Lock()
	s, refusal := a.stream(channel, ts)
	if refusal == "" {
		s.Stopped = true
	}
	a.st.mu.Unlock()
	if refusal != "" {
		fail(w, refusal)
		return
	}
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": channel, "ts": ts})
}

// setStatus is assistant.threads.setStatus: channel_id, thread_ts and
// status (required; "" clears it) of an assistant thread.
func (a *API) setStatus(w http.ResponseWriter, r *http.Request) {
	args, ok := a.authorized(w, r)
	if !ok {
		return
	}
	channel, thread := fakeapi.Str(args, "channel_id"), fakeapi.Str(args, "thread_ts")
	_, hasStatus := args["status"]
	switch {
	case !channelID(channel):
		fail(w, "channel_not_found")
		return
	case thread == "" || !hasStatus:
		fail(w, "invalid_arguments")
		return
	}
	a.st.mu.Lock()
	a.st.statuses = append(a.st.statuses, Status{Channel: channel, Thread: thread, Status: fakeapi.Str(args, "status"), At: a.Recorder().Now()})
	a.st.mu.Unlock()
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
}
