// Package fakeslack is a fake Slack Web API: an http.Handler speaking the
// real wire format, validating chat.postMessage as Slack does (the bearer
// token, the channel, empty and over-long text) and answering in Slack's
// error format (HTTP 200 {"ok":false,"error":"<code>"}). It records what
// it accepts in a fakeapi.Recorder.
//
// It serves POST /chat.postMessage (also under /api/, as slack.com does),
// and chat.update and chat.delete of the messages it delivered; the native
// stream (chat.startStream, chat.appendStream, chat.stopStream, with their
// limits: see stream.go) and assistant.threads.setStatus. Files a test
// added (AddFile) are described by GET /files.info and served at
// GET /files/<id>, the fake's url_private_download.
// Sign signs inbound requests as Slack does.
//
// chat.postMessage: https://docs.slack.dev/reference/methods/chat.postmessage
package fakeslack

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
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

	mu sync.Mutex
	// files are what AddFile put, by id; downloads counts each file's
	// downloads.
	files     map[string][]byte
	downloads map[string]int
	st        streams
}

// AddFile makes body a file a person shared, which files.info describes
// and /files/<id> serves, with the bot token.
func (a *API) AddFile(id string, body []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.files[id] = body
}

// Downloads is how many times the file id was downloaded.
func (a *API) Downloads(id string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.downloads[id]
}

// bearer reports whether r carries the bot token in its Authorization
// header, as Slack's file endpoints take it.
func (a *API) bearer(r *http.Request) bool {
	return a.Authorized(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
}

// filesInfo answers files.info?file=<id> with the file's download URL on
// this fake (url_private_download), as Slack answers with files.slack.com.
func (a *API) filesInfo(w http.ResponseWriter, r *http.Request) {
	if !a.bearer(r) {
		fail(w, "invalid_auth")
		return
	}
	id := r.URL.Query().Get("file")
	a.mu.Lock()
	body, ok := a.files[id]
	a.mu.Unlock()
	if !ok {
		fail(w, "file_not_found")
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	// The path as sent, before a composite fake stripped its mount prefix.
	prefix, _, _ := strings.Cut(r.RequestURI, "/files.info")
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "file": map[string]any{
		"id": id, "size": len(body), "mode": "hosted", "url_private_download": scheme + "://" + r.Host + prefix + "/files/" + id}})
}

// download serves /files/<id>: the bytes of a file, to the bot token only.
func (a *API) download(w http.ResponseWriter, r *http.Request) {
	if !a.bearer(r) {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	id := r.PathValue("id")
	a.mu.Lock()
	defer a.mu.Unlock()
	body, ok := a.files[id]
	if !ok {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	a.downloads[id]++
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// New returns an API.
func New(opt Options) *API {
	a := &API{Base: fakeapi.NewBase(opt, fakeapi.Timestamps()), mux: http.NewServeMux(), files: map[string][]byte{}, downloads: map[string]int{}}
	a.mux.HandleFunc("GET /files.info", a.filesInfo)
	a.mux.HandleFunc("GET /api/files.info", a.filesInfo)
	a.mux.HandleFunc("GET /files/{id}", a.download)
	a.mux.HandleFunc("GET /api/files/{id}", a.download)
	a.mux.HandleFunc("/chat.postMessage", a.postMessage)
	a.mux.HandleFunc("/api/chat.postMessage", a.postMessage)
	a.mux.HandleFunc("/chat.update", a.update)
	a.mux.HandleFunc("/api/chat.update", a.update)
	a.mux.HandleFunc("/chat.delete", a.deleteMessage)
	a.mux.HandleFunc("/api/chat.delete", a.deleteMessage)
	a.mux.HandleFunc("/chat.postEphemeral", a.postEphemeral)
	a.mux.HandleFunc("/api/chat.postEphemeral", a.postEphemeral)
	a.mux.HandleFunc("/reactions.add", a.reaction(false))
	a.mux.HandleFunc("/api/reactions.add", a.reaction(false))
	a.mux.HandleFunc("/reactions.remove", a.reaction(true))
	a.mux.HandleFunc("/api/reactions.remove", a.reaction(true))
	a.mux.HandleFunc("/conversations.history", a.history)
	a.mux.HandleFunc("/api/conversations.history", a.history)
	a.mux.HandleFunc("/conversations.replies", a.history)
	a.mux.HandleFunc("/api/conversations.replies", a.history)
	a.st = streams{byKey: map[string]*Stream{}, calls: map[string][]time.Time{}}
	for path, h := range map[string]http.HandlerFunc{
		"/chat.startStream": a.startStream, "/chat.appendStream": a.appendStream, "/chat.stopStream": a.stopStream,
		"/assistant.threads.setStatus": a.setStatus,
	} {
		a.mux.HandleFunc(path, h)
		a.mux.HandleFunc("/api"+path, h)
	}
	return a
}

// history is conversations.history, or conversations.replies when ts names
// a thread: the channel's (the thread's) delivered messages, newest first,
// at most limit, with their metadata when include_all_metadata is true.
func (a *API) history(w http.ResponseWriter, r *http.Request) {
	args, ok := a.authorized(w, r)
	if !ok {
		return
	}
	channel, thread := fakeapi.Str(args, "channel"), fakeapi.Str(args, "ts")
	if !channelID(channel) {
		fail(w, "channel_not_found")
		return
	}
	limit := 100
	_ = json.Unmarshal(args["limit"], &limit)
	var all bool
	_ = json.Unmarshal(args["include_all_metadata"], &all)
	ds := a.Recorder().Delivered()
	msgs := []map[string]any{}
	for i := len(ds) - 1; i >= 0 && len(msgs) < limit; i-- {
		d := ds[i]
		if d.Platform != message.Slack || d.Chat != channel || (thread != "" && d.Thread != thread && d.MessageID != thread) {
			continue
		}
		m := map[string]any{"type": "message", "ts": d.MessageID, "text": d.Text, "user": "U0BOT00001", "bot_id": "B0BOT00001"}
		if md, ok := d.Args["metadata"]; ok && all {
			m["metadata"] = md
		}
		msgs = append(msgs, m)
	}
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "messages": msgs})
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
			controls, blocksErr := blocks(args)
			if refusal == "" {
				refusal = blocksErr
			}
			if refusal != "" {
				fail(w, refusal)
				return fakeapi.Delivery{}, false
			}
			return fakeapi.Delivery{Chat: channel, Thread: fakeapi.Str(args, "thread_ts"), Text: text, Args: args, Controls: controls}, true
		},
		Answer: answer,
	})
}

// reaction serves reactions.add (remove false) and reactions.remove: the
// bot's reaction by name on a message (channel and timestamp). Adding one
// the bot added is already_reacted; removing one it did not, no_reaction.
func (a *API) reaction(remove bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		args, ok := fakeapi.Args(r)
		if !ok {
			fail(w, "invalid_json")
			return
		}
		token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch {
		case !bearer || token == "":
			fail(w, "not_authed")
			return
		case !a.Authorized(token):
			fail(w, "invalid_auth")
			return
		}
		channel, ts, name := fakeapi.Str(args, "channel"), fakeapi.Str(args, "timestamp"), fakeapi.Str(args, "name")
		switch {
		case !channelID(channel):
			fail(w, "channel_not_found")
			return
		case ts == "":
			fail(w, "no_item_specified")
			return
		case name == "" || strings.ContainsAny(name, ": "):
			fail(w, "invalid_name")
			return
		}
		on := slices.Contains(a.Recorder().ReactionsOn(message.Slack, channel, ts), name)
		switch {
		case remove && !on:
			fail(w, "no_reaction")
			return
		case !remove && on:
			fail(w, "already_reacted")
			return
		}
		a.Recorder().Reacted(fakeapi.Reaction{Platform: message.Slack, Chat: channel, MessageID: ts, Emoji: name, Removed: remove})
		fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
	}
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

// blocks reads a message's Block Kit blocks as Slack checks them: known
// block and element types, plain_text within its limits, unique action ids.
// It returns the controls they hold (a select's and checkboxes' options
// each a control) or Slack's error code.
func blocks(args map[string]json.RawMessage) ([]fakeapi.Control, string) {
	raw, ok := args["blocks"]
	if !ok {
		return nil, ""
	}
	type text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type option struct {
		Text  *text  `json:"text"`
		Value string `json:"value"`
	}
	var bl []struct {
		Type     string `json:"type"`
		Text     *text  `json:"text"`
		Elements []struct {
			Type     string   `json:"type"`
			ActionID string   `json:"action_id"`
			Text     *text    `json:"text"`
			Value    string   `json:"value"`
			Options  []option `json:"options"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(raw, &bl); err != nil || len(bl) > 50 {
		return nil, "invalid_blocks"
	}
	var out []fakeapi.Control
	ids := map[string]bool{}
	for _, b := range bl {
		switch b.Type {
		case "section":
			if b.Text == nil || b.Text.Text == "" || utf8.RuneCountInString(b.Text.Text) > 3000 {
				return nil, "invalid_blocks"
			}
		case "actions":
			if len(b.Elements) == 0 || len(b.Elements) > 25 {
				return nil, "invalid_blocks"
			}
			for _, e := range b.Elements {
				if e.ActionID == "" || len(e.ActionID) > 255 || ids[e.ActionID] {
					return nil, "invalid_blocks"
				}
				ids[e.ActionID] = true
				switch e.Type {
				case "button":
					if e.Text == nil || e.Text.Type != "plain_text" || e.Text.Text == "" || utf8.RuneCountInString(e.Text.Text) > 75 || len(e.Value) > 2000 {
						return nil, "invalid_blocks"
					}
					out = append(out, fakeapi.Control{Label: e.Text.Text, Data: e.Value})
				case "static_select", "checkboxes", "multi_static_select":
					if len(e.Options) == 0 || len(e.Options) > 100 || (e.Type == "checkboxes" && len(e.Options) > 10) {
						return nil, "invalid_blocks"
					}
					for _, o := range e.Options {
						if o.Text == nil || o.Text.Text == "" || utf8.RuneCountInString(o.Text.Text) > 75 || o.Value == "" || len(o.Value) > 150 {
							return nil, "invalid_blocks"
						}
						out = append(out, fakeapi.Control{Label: o.Text.Text, Data: o.Value})
					}
				default:
					return nil, "invalid_blocks"
				}
			}
		default:
			return nil, "invalid_blocks"
		}
	}
	return out, ""
}

// authorized checks a Web API call's bearer token, answering Slack's error
// when it is not the bot's.
func (a *API) authorized(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, bool) {
	args, ok := fakeapi.Args(r)
	if !ok {
		fail(w, "invalid_json")
		return nil, false
	}
	token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !bearer || token == "":
		fail(w, "not_authed")
		return nil, false
	case !a.Authorized(token):
		fail(w, "invalid_auth")
		return nil, false
	}
	return args, true
}

// UpdatesPerMinute is how many chat.update calls a workspace may make a
// minute: Slack's Tier 3 (50+); the fake holds it to 50 and answers more
// with 429 ratelimited.
const UpdatesPerMinute = 50

// update is chat.update: a message the bot posted gets new text and blocks.
func (a *API) update(w http.ResponseWriter, r *http.Request) {
	args, ok := a.authorized(w, r)
	if !ok || a.limited(w, "chat.update", UpdatesPerMinute) {
		return
	}
	channel, ts, text := fakeapi.Str(args, "channel"), fakeapi.Str(args, "ts"), fakeapi.Str(args, "text")
	switch refusal := a.posted(channel, ts); {
	case refusal != "":
		fail(w, refusal)
		return
	case text == "":
		fail(w, "no_text")
		return
	}
	controls, refusal := blocks(args)
	if refusal != "" {
		fail(w, refusal)
		return
	}
	a.Recorder().Edited(fakeapi.Edit{Platform: message.Slack, Chat: channel, MessageID: ts, Text: text, Controls: controls})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": channel, "ts": ts, "text": text})
}

// posted is Slack's refusal of an edit or a deletion of the message ts in
// channel: "" when the bot posted it and it is still there.
func (a *API) posted(channel, ts string) string {
	if !channelID(channel) {
		return "channel_not_found"
	}
	found := false
	for _, d := range a.Recorder().Delivered() {
		found = found || (d.Platform == message.Slack && d.Chat == channel && d.MessageID == ts)
	}
	if !found || a.Recorder().IsDeleted(message.Slack, channel, ts) {
		return "message_not_found"
	}
	return ""
}

// deleteMessage is chat.delete: a message the bot posted goes.
func (a *API) deleteMessage(w http.ResponseWriter, r *http.Request) {
	args, ok := a.authorized(w, r)
	if !ok {
		return
	}
	channel, ts := fakeapi.Str(args, "channel"), fakeapi.Str(args, "ts")
	if refusal := a.posted(channel, ts); refusal != "" {
		fail(w, refusal)
		return
	}
	a.Recorder().Deleted(fakeapi.Deletion{Platform: message.Slack, Chat: channel, MessageID: ts})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": channel, "ts": ts})
}

// postEphemeral is chat.postEphemeral: a message only user sees.
func (a *API) postEphemeral(w http.ResponseWriter, r *http.Request) {
	args, ok := a.authorized(w, r)
	if !ok {
		return
	}
	channel, user, text := fakeapi.Str(args, "channel"), fakeapi.Str(args, "user"), fakeapi.Str(args, "text")
	switch {
	case !channelID(channel):
		fail(w, "channel_not_found")
		return
	case user == "":
		fail(w, "user_not_in_channel")
		return
	case text == "":
		fail(w, "no_text")
		return
	}
	a.Recorder().Notified(fakeapi.Notice{Platform: message.Slack, Chat: channel, User: user, Text: text})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "message_ts": "1764432999.000001"})
}

// BlockActions is the interactivity request Slack sends when user presses
// the control carrying data (a button: its value) on the bot's message ts in
// channel of team, at actionTS: the form-encoded payload, to sign with Sign.
// values, when set, make it a checkboxes change holding them.
func BlockActions(team, channel, user, ts, actionTS, data string, values ...string) []byte {
	action := map[string]any{"type": "button", "action_id": data, "block_id": "q", "value": data, "action_ts": actionTS}
	if values != nil {
		opts := []map[string]any{}
		for _, v := range values {
			opts = append(opts, map[string]any{"value": v})
		}
		action = map[string]any{"type": "checkboxes", "action_id": data, "block_id": "q", "selected_options": opts, "action_ts": actionTS}
	}
	payload, _ := json.Marshal(map[string]any{
		"type":      "block_actions",
		"user":      map[string]any{"id": user, "team_id": team},
		"team":      map[string]any{"id": team},
		"container": map[string]any{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false},
		"channel":   map[string]any{"id": channel},
		"message":   map[string]any{"type": "message", "ts": ts, "user": botUser, "bot_id": botID},
		"actions":   []any{action},
	})
	return []byte("payload=" + url.QueryEscape(string(payload)))
}
