// Package fakediscord is a fake Discord HTTP API for an interactions app:
// an http.Handler speaking the real wire format, validating each call as
// Discord does (the bot token, the interaction token and its 15 minutes,
// the channel, content over 2000 code points, empty messages, components,
// allowed_mentions, nonces) and answering in Discord's error format
// ({"message":…,"code":…}, 429s with retry_after). It records in a
// fakeapi.Recorder every message it accepts as a delivery (with its
// buttons and select options as controls), the first edit of an
// interaction's @original too (it gives the "… is thinking" response its
// first bubble); later edits as edits, deletions as deletions, and
// ephemeral follow-ups as notices to one person. An interaction's message
// edits are held to EditsPerWindow per EditWindow (429 past it). A message
// may carry files, as multipart/form-data (payload_json and files[n]
// parts), checked as Discord checks them (files.go): each at most
// MaxUpload, its attachment entry naming a part the form holds; the first
// file is recorded in the delivery's Args (fakeapi.RecordFile).
//
// It serves, below the API root (also under /api/v10):
//
//	PATCH /webhooks/{app}/{token}/messages/@original   edit the deferred response, or a press's message
//	POST  /webhooks/{app}/{token}[?wait=true]           a follow-up
//	POST  /channels/{channel}/messages                  a channel message (nonce, enforce_nonce)
//	PATCH /channels/{channel}/messages/{id}             edit a message
//	DELETE /webhooks/{app}/{token}/messages/@original  delete the interaction's response (or one of its follow-ups)
//	DELETE /channels/{channel}/messages/{id}            delete a message
//	PUT   /applications/{app}/commands                  register the commands (bulk overwrite)
//	GET   /applications/{app}/commands                  the commands registered
//
// and, at its root as Discord's CDN serves them (DISCORD_CDN_BASE_URL),
// GET /attachments/{channel}/{id}/{filename}?ex=…&is=…&hm=…: the files a
// test attached (AddAttachment), or the samples' (ServeSamples).
//
// It also plays Discord's part towards the endpoint: Sign signs an
// interaction with the test key (KeySeed, PublicKey), Interaction gives a
// sample a fresh id and a token the fake honours, and Press builds the
// interaction of a press of a control make run printed (PressData).
// WithoutBot makes a channel one the bot is no member of (an app installed
// for a user): there only interaction tokens reach it.
//
// API reference: https://discord.com/developers/docs/reference
package fakediscord

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
	"github.com/parleyhq/parley/shared/message"
)

// Limits Discord enforces, in code points.
const (
	TextLimit = 2000
	// TokenLife is how long an interaction's token answers it.
	TokenLife = 15 * time.Minute
	// NonceWindow is how long a channel message's nonce deduplicates
	// (Discord: "the past few minutes").
	NonceWindow = 5 * time.Minute
)

// Options configure an API.
type Options struct {
	// Token is the bot token the API accepts; any other gets Discord's 401.
	// Empty refuses every call that needs one.
	Token string
	// ApplicationID, when set, is the only application whose webhooks and
	// commands the fake knows. Empty: any application's, as its interaction
	// tokens say.
	ApplicationID string
	// MaxFollowups, when set, is how many follow-ups one interaction may
	// have (Discord's 5, for an app installed for a user outside a server):
	// one more is refused with 40094. Zero: no limit, as in a server.
	MaxFollowups int
	// Recorder records what the API accepts and holds its faults. Defaults
	// to a new one.
	Recorder *fakeapi.Recorder
}

// API is the fake Discord API. It is safe for concurrent use.
type API struct {
	fakeapi.Base
	opt Options
	mux *http.ServeMux

	mu        sync.Mutex
	lastID    uint64
	messages  map[string]*Message // by id
	originals map[string]string   // interaction token → its response's message id
	followups map[string]int      // interaction token → follow-ups sent
	nonces    map[string]nonceHit // channel + "/" + nonce
	commands  []json.RawMessage
	botless   map[string]bool        // channels the bot is no member of
	edits     map[string][]time.Time // interaction token → its recent message edits (limitEdit)
	// files are the attachments people sent, by CDN path (cdn.go).
	files fakefiles.Store
}

// Message is a message as the fake holds it.
type Message struct {
	ID, ChannelID, Content string
	Components             json.RawMessage
	Flags                  int
	// Interaction is the token of the interaction it answers, if any.
	Interaction string
	Edited      bool
}

type nonceHit struct {
	id string
	at time.Time
}

// New returns an API.
func New(opt Options) *API {
	if opt.Recorder == nil {
		opt.Recorder = fakeapi.New(fakeapi.Options{})
	}
	a := &API{
		opt: opt, mux: http.NewServeMux(),
		messages: map[string]*Message{}, originals: map[string]string{}, followups: map[string]int{}, nonces: map[string]nonceHit{}, botless: map[string]bool{},
		edits: map[string][]time.Time{},
	}
	// Every send is recorded through Recorder.Handle with the id the fake
	// chose while validating (a nonce must name it before the answer, which
	// a dropped connection never writes); Base's own issuer is unused.
	a.Base = fakeapi.NewBase(fakeapi.Config{Token: opt.Token, Recorder: opt.Recorder}, nil)
	for _, root := range []string{"", "/api/v10"} {
		a.mux.HandleFunc("PATCH "+root+"/webhooks/{app}/{token}/messages/{id}", a.editWebhookMessage)
		a.mux.HandleFunc("POST "+root+"/webhooks/{app}/{token}", a.followup)
		a.mux.HandleFunc("POST "+root+"/channels/{channel}/messages", a.createMessage)
		a.mux.HandleFunc("PATCH "+root+"/channels/{channel}/messages/{id}", a.editMessage)
		a.mux.HandleFunc("DELETE "+root+"/webhooks/{app}/{token}/messages/{id}", a.deleteWebhookMessage)
		a.mux.HandleFunc("DELETE "+root+"/channels/{channel}/messages/{id}", a.deleteMessage)
		a.mux.HandleFunc("PUT "+root+"/applications/{app}/commands", a.putCommands)
		a.mux.HandleFunc("GET "+root+"/applications/{app}/commands", a.getCommands)
	}
	a.mux.HandleFunc("GET /attachments/", a.cdn)
	a.mux.HandleFunc("GET /ephemeral-attachments/", a.cdn)
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, 0, "404: Not Found", nil)
	})
	return a
}

// ServeHTTP serves the API.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// Message returns the message id as the fake holds it now.
func (a *API) Message(id string) (Message, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m, ok := a.messages[id]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Commands returns the commands registered, as Discord answers them.
func (a *API) Commands() []json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.commands)
}

// apiError is Discord's error body.
type apiError struct {
	Message    string         `json:"message"`
	Code       int            `json:"code"`
	Errors     map[string]any `json:"errors,omitempty"`
	RetryAfter *float64       `json:"retry_after,omitempty"`
	Global     *bool          `json:"global,omitempty"`
}

func fail(w http.ResponseWriter, status, code int, msg string, errs map[string]any) {
	fakeapi.WriteJSON(w, status, apiError{Message: msg, Code: code, Errors: errs})
}

// formError is Discord's 50035: one field's refusal, in its errors tree.
func formError(w http.ResponseWriter, field, code, msg string) {
	fail(w, http.StatusBadRequest, 50035, "Invalid Form Body", map[string]any{
		field: map[string]any{"_errors": []map[string]string{{"code": code, "message": msg}}},
	})
}

// codes are the JSON codes a fault's Error may name, with the status and
// message Discord answers them with.
var codes = map[int]struct {
	status int
	msg    string
}{
	0:      {400, "General error"},
	10003:  {404, "Unknown Channel"},
	10004:  {404, "Unknown Guild"},
	10008:  {404, "Unknown Message"},
	10013:  {404, "Unknown User"},
	10015:  {404, "Unknown Webhook"},
	10062:  {404, "Unknown interaction"},
	20016:  {429, "This action cannot be performed due to slowmode rate limit"},
	20028:  {429, "The channel you are writing has hit the write rate limit"},
	20029:  {429, "The write action you are performing on the server has hit the write rate limit"},
	40001:  {401, "Unauthorized"},
	40005:  {413, "Request entity too large"},
	40060:  {400, "Interaction has already been acknowledged"},
	40094:  {400, "This interaction has hit the maximum number of follow up messages"},
	50001:  {403, "Missing Access"},
	50005:  {403, "Cannot edit a message authored by another user"},
	50006:  {400, "Cannot send an empty message"},
	50007:  {403, "Cannot send messages to this user"},
	50008:  {400, "Cannot send messages in a non-text channel"},
	50013:  {403, "Missing Permissions"},
	50014:  {401, "Invalid authentication token provided"},
	50027:  {401, "Invalid Webhook Token"},
	50035:  {400, "Invalid Form Body"},
	50083:  {400, "Operation was attempted on an archived thread"},
	50109:  {400, "The request body contains invalid JSON."},
	160005: {400, "Thread is locked"},
	200000: {400, "Message was blocked by automatic moderation"},
}

// failWith answers an injected fault: a 429 (Status 429, or a rate-limit
// code) with retry_after in the body (float seconds) and Retry-After; an
// Error, read as a Discord JSON code, with its status and message (Status,
// when set, overrides the status); a bare Status as Discord's edge answers
// it: JSON {"message":"<status>: …","code":0} for a 4xx, an HTML page for a
// 5xx.
func failWith(w http.ResponseWriter, f fakeapi.Fault) {
	code, _ := strconv.Atoi(f.Error)
	c, known := codes[code]
	status, msg := f.Status, c.msg
	if status == 0 {
		status = c.status
		if !known {
			status, msg = http.StatusBadRequest, "Unknown error "+f.Error
		}
	}
	if status == http.StatusTooManyRequests {
		secs := f.RetryAfter.Seconds()
		global := false
		w.Header().Set("Retry-After", strconv.FormatInt(f.RetryAfterSeconds(), 10))
		w.Header().Set("X-RateLimit-Global", "false")
		w.Header().Set("X-RateLimit-Scope", "user")
		fakeapi.WriteJSON(w, status, apiError{Message: "You are being rate limited.", Code: code, RetryAfter: &secs, Global: &global})
		return
	}
	if f.Error == "" {
		if status >= 500 {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			_, _ = w.Write([]byte("<html><head><title>" + strconv.Itoa(status) + "</title></head><body>" + http.StatusText(status) + "</body></html>"))
			return
		}
		fail(w, status, 0, strconv.Itoa(status)+": "+http.StatusText(status), nil)
		return
	}
	fail(w, status, code, msg, nil)
}

// bot checks the bot token ("Authorization: Bot <token>"); a refusal is
// recorded.
func (a *API) bot(w http.ResponseWriter, r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bot ")
	if !ok || !a.Authorized(token) {
		fail(w, http.StatusUnauthorized, 0, "401: Unauthorized", nil)
		a.Recorder().Refused()
		return false
	}
	a.mu.Lock()
	botless := a.botless[r.PathValue("channel")]
	a.mu.Unlock()
	if botless {
		fail(w, http.StatusForbidden, 50001, "Missing Access", nil)
		a.Recorder().Refused()
		return false
	}
	return true
}

// WithoutBot makes channel one the bot is no member of, as where an app
// installed for a user is used: every call into it with the bot token is
// refused (403, 50001 Missing Access), and only interaction tokens reach it.
func (a *API) WithoutBot(channel string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.botless[channel] = true
}

// body reads a JSON object body, or a multipart/form-data one with files
// (form), or answers 50109 (or form's refusal) and records the refusal.
func (a *API) body(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, bool) {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		args, ok := form(w, r)
		if !ok {
			a.Recorder().Refused()
		}
		return args, ok
	}
	args, ok := fakeapi.Args(r)
	if !ok || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		fail(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.", nil)
		a.Recorder().Refused()
		return nil, false
	}
	return args, true
}

// interaction reads an interaction webhook's path: the interaction's token
// must be one the fake gave (10015 Unknown Webhook) and younger than
// TokenLife (401 50027 Invalid Webhook Token, as Discord answers an
// expired one). A refusal is recorded.
func (a *API) interaction(w http.ResponseWriter, r *http.Request) (token, channel string, ok bool) {
	app, token := r.PathValue("app"), r.PathValue("token")
	id, channel, _, ok := parseToken(app, token)
	if !ok || (a.opt.ApplicationID != "" && app != a.opt.ApplicationID) {
		fail(w, http.StatusNotFound, 10015, "Unknown Webhook", nil)
		a.Recorder().Refused()
		return "", "", false
	}
	at, ok := snowflakeTime(id)
	if !ok || a.Recorder().Now().After(at.Add(TokenLife)) {
		fail(w, http.StatusUnauthorized, 50027, "Invalid Webhook Token", nil)
		a.Recorder().Refused()
		return "", "", false
	}
	return token, channel, true
}

// nextID is a fresh snowflake at the recorder's clock, unique and
// increasing.
func (a *API) nextID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.nextIDLocked()
}

// nextIDLocked is nextID with a.mu held.
func (a *API) nextIDLocked() string {
	id := uint64(a.Recorder().Now().Sub(Epoch).Milliseconds()) << 22
	a.lastID = max(id, a.lastID+1)
	return strconv.FormatUint(a.lastID, 10)
}

// fixed issues one id chosen beforehand.
type fixed struct{ id *string }

func (f fixed) Next(string, time.Time) string { return *f.id }

// send runs one send through the recorder: accept validates it and returns
// the message's id and delivery, or answers a refusal itself. The answer is
// the message, or 204 No Content when quiet (a follow-up without
// ?wait=true).
func (a *API) send(w http.ResponseWriter, channel string, quiet bool, accept func(w http.ResponseWriter) (string, fakeapi.Delivery, bool)) {
	var id string
	a.Recorder().Handle(w, fakeapi.Send{
		Platform: message.Discord,
		Chat:     channel,
		IDs:      fixed{&id},
		Fail:     failWith,
		Accept: func(w http.ResponseWriter) (fakeapi.Delivery, bool) {
			var d fakeapi.Delivery
			var ok bool
			id, d, ok = accept(w)
			return d, ok
		},
		Answer: func(w http.ResponseWriter, d fakeapi.Delivery) {
			if quiet {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			a.answer(w, d.MessageID)
		},
	})
}

// answer writes the message id as Discord returns it.
func (a *API) answer(w http.ResponseWriter, id string) {
	a.mu.Lock()
	m := *a.messages[id]
	a.mu.Unlock()
	at, _ := snowflakeTime(m.ID)
	out := map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "type": 0,
		"author":    map[string]any{"id": cmp.Or(a.opt.ApplicationID, ApplicationID), "username": "Parley (fake)", "bot": true},
		"timestamp": at.UTC().Format(time.RFC3339Nano), "flags": m.Flags,
		"components": json.RawMessage(m.Components),
	}
	if m.Edited {
		out["edited_timestamp"] = a.Recorder().Now().UTC().Format(time.RFC3339Nano)
	}
	fakeapi.WriteJSON(w, http.StatusOK, out)
}

// store keeps a new or edited message.
func (a *API) store(m Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.messages[m.ID] = &m
}

func (a *API) createMessage(w http.ResponseWriter, r *http.Request) {
	channel := r.PathValue("channel")
	if !a.bot(w, r) {
		return
	}
	args, ok := a.body(w, r)
	if !ok {
		return
	}
	a.send(w, channel, false, func(w http.ResponseWriter) (string, fakeapi.Delivery, bool) {
		if _, ok := snowflakeTime(channel); !ok {
			fail(w, http.StatusNotFound, 10003, "Unknown Channel", nil)
			return "", fakeapi.Delivery{}, false
		}
		m, ok := validate(w, args, false)
		if !ok {
			return "", fakeapi.Delivery{}, false
		}
		var reply string
		if raw, ok := args["message_reference"]; ok {
			var ref struct {
				MessageID       string `json:"message_id"`
				FailIfNotExists *bool  `json:"fail_if_not_exists"`
			}
			if json.Unmarshal(raw, &ref) != nil {
				formError(w, "message_reference", "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
				return "", fakeapi.Delivery{}, false
			}
			_, exists := a.Message(ref.MessageID)
			if !exists && (ref.FailIfNotExists == nil || *ref.FailIfNotExists) {
				formError(w, "message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message")
				return "", fakeapi.Delivery{}, false
			}
			reply = ref.MessageID
		}
		nonce, enforce := fakeapi.Str(args, "nonce"), false
		_ = json.Unmarshal(args["enforce_nonce"], &enforce)
		key := channel + "/" + nonce
		now := a.Recorder().Now()
		a.mu.Lock()
		hit, seen := a.nonces[key]
		a.mu.Unlock()
		if nonce != "" && enforce && seen && now.Sub(hit.at) < NonceWindow {
			// Discord's idempotency: the message made with this nonce, and
			// nothing new.
			a.answer(w, hit.id)
			return "", fakeapi.Delivery{}, false
		}
		m.ID, m.ChannelID = a.nextID(), channel
		a.store(m)
		if nonce != "" {
			a.mu.Lock()
			a.nonces[key] = nonceHit{id: m.ID, at: now}
			a.mu.Unlock()
		}
		return m.ID, fakeapi.Delivery{Chat: channel, Text: m.Content, ReplyTo: reply, Args: args, Controls: controls(m.Components)}, true
	})
}

func (a *API) followup(w http.ResponseWriter, r *http.Request) {
	token, channel, ok := a.interaction(w, r)
	if !ok {
		return
	}
	args, ok := a.body(w, r)
	if !ok {
		return
	}
	wait := r.URL.Query().Get("wait") == "true"
	// followup validates and keeps the follow-up; ok false when it answered
	// a refusal.
	followup := func(w http.ResponseWriter) (Message, bool) {
		a.mu.Lock()
		n := a.followups[token]
		a.mu.Unlock()
		if a.opt.MaxFollowups > 0 && n >= a.opt.MaxFollowups {
			fail(w, http.StatusBadRequest, 40094, codes[40094].msg, nil)
			return Message{}, false
		}
		m, ok := validate(w, args, true)
		if !ok {
			return Message{}, false
		}
		m.ID, m.ChannelID, m.Interaction = a.nextID(), channel, token
		a.store(m)
		a.mu.Lock()
		a.followups[token]++
		a.mu.Unlock()
		return m, true
	}
	if ephemeral(args) {
		// Shown to the person who interacted alone: a notice, not a
		// message of the conversation.
		a.Recorder().Refused() // counted as a call, like every send
		m, ok := followup(w)
		if !ok {
			return
		}
		a.Recorder().Notified(fakeapi.Notice{Platform: message.Discord, Chat: channel, Text: m.Content})
		if !wait {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		a.answer(w, m.ID)
		return
	}
	a.send(w, channel, !wait, func(w http.ResponseWriter) (string, fakeapi.Delivery, bool) {
		m, ok := followup(w)
		if !ok {
			return "", fakeapi.Delivery{}, false
		}
		return m.ID, fakeapi.Delivery{Chat: channel, Text: m.Content, Args: args, Controls: controls(m.Components)}, true
	})
}

// ephemeral reports whether a message's flags make it EPHEMERAL.
func ephemeral(args map[string]json.RawMessage) bool {
	var flags int
	_ = json.Unmarshal(args["flags"], &flags)
	return flags&flagEphemeral != 0
}

func (a *API) editWebhookMessage(w http.ResponseWriter, r *http.Request) {
	token, channel, ok := a.interaction(w, r)
	if !ok {
		return
	}
	args, ok := a.body(w, r)
	if !ok {
		return
	}
	if !a.limitEdit(w, token) {
		return
	}
	target := r.PathValue("id")
	_, _, pressed, _ := parseToken(r.PathValue("app"), token)
	a.mu.Lock()
	id, known := a.originals[token], false
	switch {
	case target != "@original":
		m, ok := a.messages[target]
		id, known = target, ok && m.Interaction == token
	case pressed != "":
		// A press's @original is the message its control is on.
		id, known = pressed, true
	default:
		known = id != ""
	}
	a.mu.Unlock()
	if target != "@original" && !known {
		a.Recorder().Refused()
		fail(w, http.StatusNotFound, 10008, "Unknown Message", nil)
		return
	}
	if known {
		// A message the conversation already shows, changed: an edit (the
		// same edit of @original twice is still one message).
		a.edit(w, args, id, channel, true)
		return
	}
	// The deferred response ("… is thinking") Discord made when the
	// endpoint answered: the first edit gives it its content, and that is
	// the reply's first bubble.
	a.send(w, channel, false, func(w http.ResponseWriter) (string, fakeapi.Delivery, bool) {
		m, ok := validate(w, args, true)
		if !ok {
			return "", fakeapi.Delivery{}, false
		}
		a.mu.Lock()
		if a.originals[token] == "" {
			a.originals[token] = a.nextIDLocked()
		}
		id := a.originals[token]
		a.mu.Unlock()
		m.ID, m.ChannelID, m.Interaction = id, channel, token
		a.store(m)
		return id, fakeapi.Delivery{Chat: channel, Text: m.Content, Args: args, Controls: controls(m.Components)}, true
	})
}

func (a *API) editMessage(w http.ResponseWriter, r *http.Request) {
	channel, target := r.PathValue("channel"), r.PathValue("id")
	if !a.bot(w, r) {
		return
	}
	args, ok := a.body(w, r)
	if !ok {
		return
	}
	a.edit(w, args, target, channel, false)
}

// edit changes message id of channel to args, records the edit and answers
// the message: Discord's PATCH of a message, through the bot (webhook
// false) or an interaction's token. An edit changes what it names: content
// or components left out stay as they were.
func (a *API) edit(w http.ResponseWriter, args map[string]json.RawMessage, id, channel string, webhook bool) {
	a.Recorder().Refused() // counted as a call; edits take no faults
	old, ok := a.Message(id)
	if !ok || old.ChannelID != channel {
		fail(w, http.StatusNotFound, 10008, "Unknown Message", nil)
		return
	}
	m, ok := validate(w, args, webhook)
	if !ok {
		return
	}
	if _, ok := args["components"]; !ok {
		m.Components = old.Components
	}
	if raw, ok := args["content"]; !ok || string(raw) == "null" {
		m.Content = old.Content
	}
	m.ID, m.ChannelID, m.Interaction, m.Edited = old.ID, channel, old.Interaction, true
	a.store(m)
	a.Recorder().Edited(fakeapi.Edit{Platform: message.Discord, Chat: channel, MessageID: m.ID, Text: m.Content, Controls: controls(m.Components)})
	a.answer(w, m.ID)
}

// controls are the buttons and select options of a message's components,
// in order, as make run prints them: a button's label and custom_id, a
// select option's label and value.
func controls(raw json.RawMessage) []fakeapi.Control {
	var rows []component
	if json.Unmarshal(raw, &rows) != nil {
		return nil
	}
	var out []fakeapi.Control
	for _, row := range rows {
		for _, c := range row.Components {
			switch {
			case c.Type == 2 && c.CustomID != nil:
				label := ""
				if c.Label != nil {
					label = *c.Label
				}
				out = append(out, fakeapi.Control{Label: label, Data: *c.CustomID})
			case c.Type == 3:
				for _, o := range c.Options {
					out = append(out, fakeapi.Control{Label: o.Label, Data: o.Value})
				}
			}
		}
	}
	return out
}
