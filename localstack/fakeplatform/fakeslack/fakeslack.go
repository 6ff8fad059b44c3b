// Package fakeslack is a fake Slack Web API: an http.Handler speaking the
// real wire format, validating chat.postMessage as Slack does (the bearer
// token, the channel, empty and over-long text) and answering in Slack's
// error format (HTTP 200 {"ok":false,"error":"<code>"}). It records what
// it accepts in a fakeapi.Recorder.
//
// It serves POST /chat.postMessage (also under /api/, as slack.com does).
// Sign signs inbound requests as Slack does.
//
// chat.postMessage: https://docs.slack.dev/reference/methods/chat.postmessage
package fakeslack

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/message"
)

// TextLimit is the most text chat.postMessage takes, in characters: Slack
// refuses more with msg_too_long.
const TextLimit = 40000

// Identity the fake posts as.
const (
	botUser = "U0FAKEBOT1"
	botID   = "B0FAKEBOT1"
)

// Options configure an API: Token is the bot token the Web API accepts,
// any other gets Slack's invalid_auth.
type Options = fakeapi.Config

// API is the fake Web API. It is safe for concurrent use.
type API struct {
	fakeapi.Base
	mux *http.ServeMux
}

// New returns an API.
func New(opt Options) *API {
	a := &API{Base: fakeapi.NewBase(opt, fakeapi.Timestamps()), mux: http.NewServeMux()}
	a.mux.HandleFunc("/chat.postMessage", a.postMessage)
	a.mux.HandleFunc("/api/chat.postMessage", a.postMessage)
	return a
}

// ServeHTTP serves the Web API.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// Sign returns the headers Slack sends with a request made at ts:
// X-Slack-Request-Timestamp, X-Slack-Signature ("v0=" + hex
// HMAC-SHA256(secret, "v0:<ts>:<body>")), and the Content-Type of that
// body: form-encoded for an interactivity payload ("payload=…"), JSON for
// the Events API. A retry is the same body with X-Slack-Retry-Num and
// X-Slack-Retry-Reason added.
func Sign(secret string, ts time.Time, body []byte) http.Header {
	unix := strconv.FormatInt(ts.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + unix + ":"))
	mac.Write(body)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if bytes.HasPrefix(body, []byte("payload=")) {
		h.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	h.Set("X-Slack-Request-Timestamp", unix)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return h
}

func fail(w http.ResponseWriter, code string) {
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": code})
}

// channelID reports whether s has the shape of a channel id (C…, G… or
// D… in upper case): any other channel is one Slack does not know.
func channelID(s string) bool {
	if len(s) < 2 || !strings.ContainsRune("CGD", rune(s[0])) {
		return false
	}
	for _, c := range []byte(s[1:]) {
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func (a *API) postMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		fail(w, "invalid_request")
		return
	}
	args, ok := fakeapi.Args(r)
	if !ok {
		a.Recorder().Refused()
		fail(w, "invalid_json")
		return
	}
	// Slack answers auth problems with HTTP 200 and an error code.
	token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !bearer || token == "":
		a.Recorder().Refused()
		fail(w, "not_authed")
		return
	case !a.Authorized(token):
		a.Recorder().Refused()
		fail(w, "invalid_auth")
		return
	}
	channel := fakeapi.Str(args, "channel")
	a.Send(w, fakeapi.Send{
		Platform: message.Slack,
		Chat:     channel,
		Fail:     failWith,
		Accept: func(w http.ResponseWriter) (fakeapi.Delivery, bool) {
			text := fakeapi.Str(args, "text")
			var refusal string
			switch {
			case !channelID(channel):
				refusal = "channel_not_found"
			case text == "":
				refusal = "no_text"
			case utf8.RuneCountInString(text) > TextLimit:
				refusal = "msg_too_long"
			}
			if refusal != "" {
				fail(w, refusal)
				return fakeapi.Delivery{}, false
			}
			return fakeapi.Delivery{Chat: channel, Thread: fakeapi.Str(args, "thread_ts"), Text: text, Args: args}, true
		},
		Answer: answer,
	})
}

// failWith answers an injected fault: a Status as that HTTP status (a 429
// with Retry-After and Slack's ratelimited body, others with a plain edge
// page), an Error as Slack's HTTP 200 ok:false with that code.
func failWith(w http.ResponseWriter, f fakeapi.Fault) {
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(f.RetryAfterSeconds(), 10))
	}
	switch {
	case f.Status == http.StatusTooManyRequests:
		fakeapi.WriteJSON(w, f.Status, map[string]any{"ok": false, "error": "ratelimited"})
	case f.Status != 0:
		http.Error(w, http.StatusText(f.Status), f.Status)
	default:
		fail(w, f.Error)
	}
}

// answer is chat.postMessage's answer: the channel, the new ts and the
// message as posted.
func answer(w http.ResponseWriter, d fakeapi.Delivery) {
	msg := map[string]any{"type": "message", "text": d.Text, "user": botUser, "bot_id": botID, "ts": d.MessageID}
	if d.Thread != "" {
		msg["thread_ts"] = d.Thread
	}
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": d.Chat, "ts": d.MessageID, "message": msg})
}
