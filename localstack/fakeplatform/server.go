package fakeplatform

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
)

// Identities the fake answers as.
const (
	telegramBotName = "Parley (fake)"
	telegramBotUser = "parley_fake_bot"
	slackBotUser    = "U0FAKEBOT1"
	slackBotID      = "B0FAKEBOT1"
)

// Options configure a Server.
type Options struct {
	// TelegramToken is the bot token the Bot API accepts; any other token
	// gets Telegram's 401. Empty refuses every Telegram call.
	TelegramToken string
	// SlackToken is the bot token the Web API accepts; any other gets
	// Slack's invalid_auth. Empty refuses every Slack call.
	SlackToken string
	// Now stamps deliveries and message ids. Defaults to time.Now.
	Now func() time.Time
	// Out, when set, gets one line per delivered message (see the package
	// doc). Defaults to nil: nothing is printed.
	Out io.Writer
}

// Delivery is a message the fake platform accepted.
type Delivery struct {
	Platform message.Platform
	// Chat is the chat_id or channel, Thread the message_thread_id or
	// thread_ts ("" for none), ReplyTo the quoted message id.
	Chat, Thread, Text, ReplyTo string
	// At is Options.Now when the message was accepted.
	At time.Time
	// MessageID is what the platform answered: a Telegram message_id or a
	// Slack ts.
	MessageID string
}

// Action is a chat action (Telegram's sendChatAction) the fake accepted.
type Action struct {
	Platform     message.Platform
	Chat, Thread string
	Action       string
	At           time.Time
}

// Fault is a failure queued for the next matching send (sendMessage or
// chat.postMessage).
type Fault struct {
	// Platform the fault applies to; empty matches both.
	Platform message.Platform
	// Chat, when set, restricts the fault to sends into this chat.
	Chat string
	// Status answers with this HTTP status in the platform's error format.
	// For 429, RetryAfter goes in Telegram's parameters.retry_after or
	// Slack's Retry-After header (whole seconds, rounded up).
	Status     int
	RetryAfter time.Duration
	// SlackError answers Slack's HTTP 200 {"ok":false,"error":SlackError}.
	SlackError string
	// DropResponseAfterCommit records the message as delivered, then closes
	// the connection without answering: the client sees an unknown outcome.
	DropResponseAfterCommit bool
	// Delay holds the answer this long (wall time). The message is still
	// handled afterwards, as a slow platform would, even if the client gave
	// up meanwhile.
	Delay time.Duration
	// Times is how many sends the fault hits. Defaults to 1.
	Times int
}

// Server is the fake platform. It is safe for concurrent use.
type Server struct {
	opt     Options
	handler http.Handler

	mu        sync.Mutex
	delivered []Delivery
	actions   []Action
	faults    []Fault
	calls     int
	lastAt    time.Time
	nextID    map[string]int64 // Telegram: last message_id per chat
	lastTS    map[string]int64 // Slack: last ts per channel, in microseconds
	changed   chan struct{}    // closed and replaced on every delivery
}

// New returns a Server.
func New(opt Options) *Server {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	s := &Server{
		opt:     opt,
		nextID:  map[string]int64{},
		lastTS:  map[string]int64{},
		changed: make(chan struct{}),
	}
	// Bot API paths put the token inside the first segment (/bot<token>/),
	// which ServeMux patterns cannot match, so route by hand.
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case strings.HasPrefix(p, "/bot"):
			s.telegram(w, r)
		case p == "/chat.postMessage", p == "/api/chat.postMessage":
			s.slack(w, r)
		default:
			http.NotFound(w, r)
		}
	})
	return s
}

// Handler serves both platforms' APIs.
func (s *Server) Handler() http.Handler { return s.handler }

// Delivered returns a copy of every delivered message, in acceptance order.
func (s *Server) Delivered() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.delivered...)
}

// Actions returns a copy of every accepted chat action.
func (s *Server) Actions() []Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Action(nil), s.actions...)
}

// Calls is the number of send attempts received, failed ones included.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Inject queues f for the next matching send(s).
func (s *Server) Inject(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

// WaitFor blocks until at least n messages were delivered, and returns them
// all. When ctx ends first it returns what was delivered and ctx's error.
func (s *Server) WaitFor(ctx context.Context, n int) ([]Delivery, error) {
	for {
		s.mu.Lock()
		got := append([]Delivery(nil), s.delivered...)
		changed := s.changed
		s.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return got, fmt.Errorf("fakeplatform: %d of %d deliveries: %w", len(got), n, ctx.Err())
		case <-changed:
		}
	}
}

// attempt counts a send and, when fault is true, takes the first queued
// fault that matches it.
func (s *Server) attempt(p message.Platform, chat string, fault bool) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if !fault {
		return Fault{}, false
	}
	for i := range s.faults {
		f := &s.faults[i]
		if (f.Platform != "" && f.Platform != p) || (f.Chat != "" && f.Chat != chat) {
			continue
		}
		hit := *f
		if f.Times--; f.Times == 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		return hit, true
	}
	return Fault{}, false
}

// deliver records d, stamping it and giving it its message id.
func (s *Server) deliver(d Delivery) Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.At = s.opt.Now()
	switch d.Platform {
	case message.Telegram:
		s.nextID[d.Chat]++
		d.MessageID = strconv.FormatInt(s.nextID[d.Chat], 10)
	case message.Slack:
		// A ts is unix seconds and a microsecond sequence, unique and
		// increasing per channel even when the clock stands still.
		us := max(d.At.UnixMicro(), s.lastTS[d.Chat]+1)
		s.lastTS[d.Chat] = us
		d.MessageID = fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
	}
	s.delivered = append(s.delivered, d)
	if s.opt.Out != nil {
		var since time.Duration
		if len(s.delivered) > 1 {
			since = d.At.Sub(s.lastAt)
		}
		printBubble(s.opt.Out, since, d)
	}
	s.lastAt = d.At
	close(s.changed)
	s.changed = make(chan struct{})
	return d
}

func printBubble(w io.Writer, since time.Duration, d Delivery) {
	head := fmt.Sprintf("[+%.2fs] %s chat=%s", since.Seconds(), d.Platform, d.Chat)
	if d.Thread != "" {
		head += " thread=" + d.Thread
	}
	head += " "
	indent := strings.Repeat(" ", utf8.RuneCountInString(head))
	var b strings.Builder
	for i, line := range strings.Split(d.Text, "\n") {
		if i == 0 {
			b.WriteString(head)
		} else {
			b.WriteString(indent)
		}
		b.WriteString("| " + line + "\n")
	}
	_, _ = io.WriteString(w, b.String())
}

func (s *Server) action(a Action) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a.At = s.opt.Now()
	s.actions = append(s.actions, a)
}

// dropConnection closes the connection without an answer.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// HTTP/2 cannot hijack; aborting resets the stream instead.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// args reads a Bot API or Web API call's arguments: a JSON object, or form
// fields (both platforms take either).
func args(r *http.Request) (map[string]json.RawMessage, bool) {
	out := map[string]json.RawMessage{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || json.Unmarshal(body, &out) != nil {
			return nil, false
		}
		return out, true
	}
	if err := r.ParseForm(); err != nil {
		return nil, false
	}
	for k := range r.Form {
		b, _ := json.Marshal(r.Form.Get(k))
		out[k] = b
	}
	return out, true
}

// str reads an argument as text: a JSON string as is, a number by its
// digits, anything else as "".
func str(a map[string]json.RawMessage, key string) string {
	raw, ok := a[key]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

func seconds(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds()))
}

// ---- Telegram ----

type tgError struct {
	OK          bool      `json:"ok"`
	ErrorCode   int       `json:"error_code"`
	Description string    `json:"description"`
	Parameters  *tgParams `json:"parameters,omitempty"`
}

type tgParams struct {
	RetryAfter int64 `json:"retry_after,omitempty"`
}

func tgFail(w http.ResponseWriter, status int, description string, params *tgParams) {
	writeJSON(w, status, tgError{ErrorCode: status, Description: description, Parameters: params})
}

// tgDescriptions are the Bot API's texts for the statuses a fault can set.
var tgDescriptions = map[int]string{
	400: "Bad Request: chat not found",
	401: "Unauthorized",
	403: "Forbidden: bot was blocked by the user",
	404: "Not Found",
	409: "Conflict: terminated by other getUpdates request",
	429: "Too Many Requests: retry after %d",
	500: "Internal Server Error",
	502: "Bad Gateway",
}

func (s *Server) telegram(w http.ResponseWriter, r *http.Request) {
	token, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/bot"), "/")
	if !ok || token == "" || strings.Contains(method, "/") {
		tgFail(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	send := method == "sendMessage"
	if token != s.opt.TelegramToken || s.opt.TelegramToken == "" {
		if send {
			s.attempt(message.Telegram, "", false)
		}
		tgFail(w, http.StatusUnauthorized, "Unauthorized", nil)
		return
	}
	a, ok := args(r)
	if !ok {
		if send {
			s.attempt(message.Telegram, "", false)
		}
		tgFail(w, http.StatusBadRequest, "Bad Request: can't parse JSON object", nil)
		return
	}
	chat := str(a, "chat_id")
	thread := str(a, "message_thread_id")
	switch method {
	case "getMe":
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": s.tgBot()})
	case "sendChatAction":
		if chat == "" {
			tgFail(w, http.StatusBadRequest, "Bad Request: chat_id is empty", nil)
			return
		}
		s.action(Action{Platform: message.Telegram, Chat: chat, Thread: thread, Action: str(a, "action")})
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": true})
	case "sendMessage":
		s.tgSendMessage(w, r, a, chat, thread)
	default:
		tgFail(w, http.StatusNotFound, "Not Found", nil)
	}
}

func (s *Server) tgBot() map[string]any {
	id, _, _ := strings.Cut(s.opt.TelegramToken, ":")
	n, _ := strconv.ParseInt(id, 10, 64)
	return map[string]any{"id": n, "is_bot": true, "first_name": telegramBotName, "username": telegramBotUser}
}

func (s *Server) tgSendMessage(w http.ResponseWriter, r *http.Request, a map[string]json.RawMessage, chat, thread string) {
	f, faulty := s.attempt(message.Telegram, chat, true)
	if faulty && f.Delay > 0 {
		time.Sleep(f.Delay)
	}
	if faulty && f.Status != 0 {
		desc := tgDescriptions[f.Status]
		var params *tgParams
		if f.Status == http.StatusTooManyRequests {
			params = &tgParams{RetryAfter: seconds(f.RetryAfter)}
			desc = fmt.Sprintf(desc, params.RetryAfter)
		}
		if desc == "" {
			desc = http.StatusText(f.Status)
		}
		tgFail(w, f.Status, desc, params)
		return
	}

	text := str(a, "text")
	chatID, err := strconv.ParseInt(chat, 10, 64)
	switch {
	case chat == "":
		tgFail(w, http.StatusBadRequest, "Bad Request: chat_id is empty", nil)
		return
	case err != nil && !strings.HasPrefix(chat, "@"):
		tgFail(w, http.StatusBadRequest, "Bad Request: chat not found", nil)
		return
	case text == "":
		tgFail(w, http.StatusBadRequest, "Bad Request: message text is empty", nil)
		return
	case len(utf16.Encode([]rune(text))) > 4096:
		tgFail(w, http.StatusBadRequest, "Bad Request: message is too long", nil)
		return
	}
	var reply struct {
		MessageID json.Number `json:"message_id"`
	}
	if raw, ok := a["reply_parameters"]; ok {
		_ = json.Unmarshal(raw, &reply)
	}

	d := s.deliver(Delivery{Platform: message.Telegram, Chat: chat, Thread: thread, Text: text, ReplyTo: reply.MessageID.String()})
	if faulty && f.DropResponseAfterCommit {
		dropConnection(w)
		return
	}
	id, _ := strconv.ParseInt(d.MessageID, 10, 64)
	chatType := "supergroup"
	if chatID > 0 {
		chatType = "private"
	}
	msg := map[string]any{
		"message_id": id,
		"from":       s.tgBot(),
		"chat":       map[string]any{"id": chatID, "type": chatType},
		"date":       d.At.Unix(),
		"text":       text,
	}
	if thread != "" {
		n, _ := strconv.ParseInt(thread, 10, 64)
		msg["message_thread_id"] = n
		msg["is_topic_message"] = true
	}
	if d.ReplyTo != "" {
		n, _ := strconv.ParseInt(d.ReplyTo, 10, 64)
		msg["reply_to_message"] = map[string]any{"message_id": n, "chat": msg["chat"], "date": d.At.Unix()}
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": msg})
}

// ---- Slack ----

func slackFail(w http.ResponseWriter, code string) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": code})
}

func (s *Server) slack(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		slackFail(w, "invalid_request")
		return
	}
	a, ok := args(r)
	if !ok {
		s.attempt(message.Slack, "", false)
		slackFail(w, "invalid_json")
		return
	}
	channel := str(a, "channel")
	// Slack answers auth problems with HTTP 200 and an error code.
	token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !bearer || token == "":
		s.attempt(message.Slack, channel, false)
		slackFail(w, "not_authed")
		return
	case token != s.opt.SlackToken || s.opt.SlackToken == "":
		s.attempt(message.Slack, channel, false)
		slackFail(w, "invalid_auth")
		return
	}
	f, faulty := s.attempt(message.Slack, channel, true)

	if faulty && f.Delay > 0 {
		time.Sleep(f.Delay)
	}
	if faulty && f.Status != 0 {
		if f.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", strconv.FormatInt(seconds(f.RetryAfter), 10))
			writeJSON(w, f.Status, map[string]any{"ok": false, "error": "ratelimited"})
			return
		}
		http.Error(w, http.StatusText(f.Status), f.Status)
		return
	}
	if faulty && f.SlackError != "" {
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.FormatInt(seconds(f.RetryAfter), 10))
		}
		slackFail(w, f.SlackError)
		return
	}

	text := str(a, "text")
	switch {
	case channel == "":
		slackFail(w, "channel_not_found")
		return
	case text == "":
		slackFail(w, "no_text")
		return
	case utf8.RuneCountInString(text) > 40000:
		slackFail(w, "msg_too_long")
		return
	}
	thread := str(a, "thread_ts")
	d := s.deliver(Delivery{Platform: message.Slack, Chat: channel, Thread: thread, Text: text})
	if faulty && f.DropResponseAfterCommit {
		dropConnection(w)
		return
	}
	msg := map[string]any{"type": "message", "text": text, "user": slackBotUser, "bot_id": slackBotID, "ts": d.MessageID}
	if thread != "" {
		msg["thread_ts"] = thread
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": channel, "ts": d.MessageID, "message": msg})
}
