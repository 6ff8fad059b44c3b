// Package fakeline is a fake LINE Messaging API: an http.Handler speaking
// the real wire format, validating each call as the Messaging API does (the
// channel access token, the chat id, empty and over-long text, at most 5
// messages, quick replies: at most 13 buttons, labels of at most 20
// characters, data of at most 300) and answering in LINE's error format
// ({"message":…,"details":[{"message":…,"property":…}]}). It records what
// it accepts in a fakeapi.Recorder.
//
// It serves POST /v2/bot/message/reply (single-use reply tokens that expire,
// issued with IssueReplyToken or RegisterReplyToken), POST
// /v2/bot/message/push (X-Line-Retry-Key: one accepted request per key for
// 24 hours, a replay answered 409 with X-Line-Accepted-Request-Id, and an
// optional monthly quota answered 429 "You have reached your monthly
// limit."), POST /v2/bot/chat/loading/start (one-to-one chats only) and,
// as the data API host does, GET /v2/bot/message/{id}/content (the files
// people sent: AddContent, ServeSamples).
// Quick reply buttons are recorded as the delivery's controls. Sign and
// Headers sign webhooks as the LINE Platform does; Postback builds the one a
// tap of a quick reply sends.
//
// Messaging API reference: https://developers.line.biz/en/reference/messaging-api/
package fakeline

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/rivo/uniseg"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
	"github.com/parleyhq/parley/shared/message"
)

// Limits the Messaging API enforces, as the fake does.
const (
	// TextLimit is the most a text message holds, in UTF-16 code units.
	TextLimit = 5000
	// MaxMessages is the most messages one reply or push carries.
	MaxMessages = 5
	// MaxQuickReplies is the most quick reply buttons of a message.
	MaxQuickReplies = 13
	// MaxLabel is the most a button's label holds, in grapheme clusters.
	MaxLabel = 20
	// MaxData is the most a postback's data holds, in UTF-16 code units.
	MaxData = 300
	// MaxDisplayText is the most a postback's displayText holds, in
	// grapheme clusters.
	MaxDisplayText = 300
	// RetryKeyTTL is how long a retry key is remembered.
	RetryKeyTTL = 24 * time.Hour
	// ReplyTokenTTL is how long a reply token is honoured by default: LINE
	// says to use one within a minute of the webhook.
	ReplyTokenTTL = time.Minute
)

// Headers LINE reads and writes.
const (
	SignatureHeader       = "X-Line-Signature"
	RetryKeyHeader        = "X-Line-Retry-Key"
	RequestIDHeader       = "X-Line-Request-Id"
	AcceptedRequestHeader = "X-Line-Accepted-Request-Id"
)

// LINE's error messages that callers branch on.
const (
	// MonthlyLimitMessage is the 429 of a spent monthly message quota.
	MonthlyLimitMessage = "You have reached your monthly limit."
	// InvalidReplyTokenMessage is the 400 of a reply token used before,
	// expired, or never issued.
	InvalidReplyTokenMessage = "Invalid reply token"
)

// Options configure an API.
type Options struct {
	// Token is the channel access token the API accepts; any other gets
	// LINE's 401. Empty refuses every call.
	Token string
	// Recorder records what the fake accepts and holds its faults.
	// Defaults to a new one.
	Recorder *fakeapi.Recorder
	// ReplyTokenTTL is how long an issued reply token is honoured, on the
	// recorder's clock. Defaults to ReplyTokenTTL.
	ReplyTokenTTL time.Duration
	// MonthlyQuota, when set, is how many pushes the channel may make; every
	// push after that is answered 429 MonthlyLimitMessage (replies are
	// free, as on LINE). Defaults to 0: no quota.
	MonthlyQuota int
}

// API is the fake Messaging API. It is safe for concurrent use.
type API struct {
	fakeapi.Base
	mux      *http.ServeMux
	ids      *messageIDs
	ttl      time.Duration
	quota    int
	requests atomic.Int64

	mu          sync.Mutex
	replyTokens map[string]*replyToken
	retryKeys   map[string]*accepted
	pushes      int
	issued      int
	// files are the content of people's messages, by message id
	// (content.go).
	files fakefiles.Store
}

type replyToken struct {
	chat   string
	issued time.Time
	used   bool
}

// accepted is a push accepted with a retry key.
type accepted struct {
	requestID string
	at        time.Time
	sent      []sentMessage
}

type sentMessage struct {
	ID         string `json:"id"`
	QuoteToken string `json:"quoteToken"`
}

// New returns an API.
func New(opt Options) *API {
	ids := &messageIDs{}
	a := &API{
		Base:        fakeapi.NewBase(fakeapi.Config{Token: opt.Token, Recorder: opt.Recorder}, ids),
		mux:         http.NewServeMux(),
		ids:         ids,
		ttl:         opt.ReplyTokenTTL,
		quota:       opt.MonthlyQuota,
		replyTokens: map[string]*replyToken{},
		retryKeys:   map[string]*accepted{},
	}
	if a.ttl <= 0 {
		a.ttl = ReplyTokenTTL
	}
	a.mux.HandleFunc("/v2/bot/message/reply", a.reply)
	a.mux.HandleFunc("/v2/bot/message/push", a.push)
	a.mux.HandleFunc("/v2/bot/chat/loading/start", a.loading)
	a.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fail(w, http.StatusNotFound, "Not found", nil)
	})
	return a
}

// ServeHTTP serves the Messaging API. Every answer carries an
// X-Line-Request-Id.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(RequestIDHeader, fmt.Sprintf("f0000000-0000-4000-8000-%012d", a.requests.Add(1)))
	if m := contentPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodGet {
		a.content(w, r, m[1])
		return
	}
	if r.Method != http.MethodPost {
		fail(w, http.StatusMethodNotAllowed, "Method Not Allowed", nil)
		return
	}
	a.mux.ServeHTTP(w, r)
}

// Sign is the X-Line-Signature of body: Base64(HMAC-SHA256(channel secret,
// body)), as the LINE Platform computes it.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Headers returns the headers the LINE Platform sends with a webhook body:
// its Content-Type and X-Line-Signature. LINE signs nothing else and sends
// no timestamp; a redelivery is signed the same way.
func Headers(secret string, body []byte) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set(SignatureHeader, Sign(secret, body))
	return h
}

// IssueReplyToken returns a new reply token for chat, as LINE issues one
// with each message or postback event, honoured once within the TTL from
// now (the recorder's clock).
func (a *API) IssueReplyToken(chat string) string {
	a.mu.Lock()
	a.issued++
	n := a.issued
	a.mu.Unlock()
	token := fmt.Sprintf("f00d%028x", n)
	a.RegisterReplyToken(token, chat)
	return token
}

// RegisterReplyToken makes token (a sample's, say) a reply token for chat,
// issued now.
func (a *API) RegisterReplyToken(token, chat string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.replyTokens[token] = &replyToken{chat: chat, issued: a.Recorder().Now()}
}

// useReplyToken spends token, reporting whether it was good: issued, unused
// and within the TTL.
func (a *API) useReplyToken(token string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.replyTokens[token]
	if !ok || t.used || a.Recorder().Now().Sub(t.issued) > a.ttl {
		return false
	}
	t.used = true
	return true
}

func (a *API) tokenChat(token string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t, ok := a.replyTokens[token]; ok {
		return t.chat
	}
	return ""
}

// authorized checks the bearer token, answering LINE's 401 when it is
// wrong.
func (a *API) authorized(w http.ResponseWriter, r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !ok || token == "":
		fail(w, http.StatusUnauthorized, "Authorization header required. Must follow the scheme, 'Authorization: Bearer <ACCESS TOKEN>'", nil)
		return false
	case !a.Authorized(token):
		fail(w, http.StatusUnauthorized, "Authentication failed. Confirm that the access token in the authorization header is valid.", nil)
		return false
	}
	return true
}

// args reads a JSON call's arguments, answering LINE's 400 when they do not
// parse.
func args(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, bool) {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		fail(w, http.StatusUnsupportedMediaType, "The content type, '"+r.Header.Get("Content-Type")+"', is not supported by the API.", nil)
		return nil, false
	}
	out, ok := fakeapi.Args(r)
	if !ok {
		fail(w, http.StatusBadRequest, "The request body could not be parsed as JSON", nil)
		return nil, false
	}
	return out, true
}

func (a *API) reply(w http.ResponseWriter, r *http.Request) {
	if !a.authorized(w, r) {
		a.Recorder().Refused()
		return
	}
	in, ok := args(w, r)
	if !ok {
		a.Recorder().Refused()
		return
	}
	token := fakeapi.Str(in, "replyToken")
	chat := a.tokenChat(token)
	a.Send(w, fakeapi.Send{
		Platform: message.LINE,
		Chat:     chat,
		Fail:     failWith,
		Accept: func(w http.ResponseWriter) (fakeapi.Delivery, bool) {
			if r.Header.Get(RetryKeyHeader) != "" {
				// Retry keys are for push, multicast, narrowcast and
				// broadcast only.
				fail(w, http.StatusBadRequest, "The X-Line-Retry-Key header can't be specified for this API", nil)
				return fakeapi.Delivery{}, false
			}
			var problems []detail
			if token == "" {
				problems = append(problems, detail{"must be specified", "replyToken"})
			}
			msgs, more := validMessages(in)
			if problems = append(problems, more...); len(problems) > 0 {
				invalid(w, problems)
				return fakeapi.Delivery{}, false
			}
			if !a.useReplyToken(token) {
				fail(w, http.StatusBadRequest, InvalidReplyTokenMessage, nil)
				return fakeapi.Delivery{}, false
			}
			return delivery(chat, msgs, in), true
		},
		Answer: func(w http.ResponseWriter, d fakeapi.Delivery) { a.answer(w, d, len(messagesOf(in)), nil) },
	})
}

func (a *API) push(w http.ResponseWriter, r *http.Request) {
	if !a.authorized(w, r) {
		a.Recorder().Refused()
		return
	}
	in, ok := args(w, r)
	if !ok {
		a.Recorder().Refused()
		return
	}
	key := r.Header.Get(RetryKeyHeader)
	if key != "" && !uuid(key) {
		a.Recorder().Refused()
		fail(w, http.StatusBadRequest, "The retry key is invalid. Specify a UUID in hexadecimal notation.", nil)
		return
	}
	to := fakeapi.Str(in, "to")
	requestID := w.Header().Get(RequestIDHeader)
	a.Send(w, fakeapi.Send{
		Platform: message.LINE,
		Chat:     to,
		Fail:     failWith,
		Accept: func(w http.ResponseWriter) (fakeapi.Delivery, bool) {
			var problems []detail
			if !lineID(to, "UCR") {
				problems = append(problems, detail{"The property, 'to', in the request body is invalid", "to"})
			}
			msgs, more := validMessages(in)
			if problems = append(problems, more...); len(problems) > 0 {
				invalid(w, problems)
				return fakeapi.Delivery{}, false
			}
			switch done, outcome := a.claim(key, requestID); outcome {
			case replayed:
				// The first accepted request wins; a replay is blocked.
				w.Header().Set(AcceptedRequestHeader, done.requestID)
				body := map[string]any{"message": "The retry key is already accepted"}
				if len(done.sent) > 0 {
					body["sentMessages"] = done.sent
				}
				fakeapi.WriteJSON(w, http.StatusConflict, body)
				return fakeapi.Delivery{}, false
			case overQuota:
				fail(w, http.StatusTooManyRequests, MonthlyLimitMessage, nil)
				return fakeapi.Delivery{}, false
			}
			return delivery(to, msgs, in), true
		},
		Answer: func(w http.ResponseWriter, d fakeapi.Delivery) {
			a.answer(w, d, len(messagesOf(in)), func(sent []sentMessage) { a.remember(key, sent) })
		},
	})
}

// Outcomes of a push's claim.
const (
	claimed = iota
	replayed
	overQuota
)

// claim takes a push: it checks and claims its retry key and counts it
// against the quota in one step, so two concurrent pushes with one key are
// accepted once. A replay (the key accepted within RetryKeyTTL) returns
// the push that was accepted.
func (a *API) claim(key, requestID string) (accepted, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.Recorder().Now()
	if done, ok := a.retryKeys[key]; key != "" && ok && now.Sub(done.at) <= RetryKeyTTL {
		return *done, replayed
	}
	if a.quota > 0 && a.pushes >= a.quota {
		return accepted{}, overQuota
	}
	a.pushes++
	if key != "" {
		a.retryKeys[key] = &accepted{requestID: requestID, at: now}
	}
	return accepted{}, claimed
}

func (a *API) remember(key string, sent []sentMessage) {
	if key == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if done, ok := a.retryKeys[key]; ok {
		done.sent = sent
	}
}

// answer is a reply's or push's answer: the sent messages, the recorded
// one first.
func (a *API) answer(w http.ResponseWriter, d fakeapi.Delivery, n int, keep func([]sentMessage)) {
	sent := []sentMessage{{ID: d.MessageID, QuoteToken: "q" + d.MessageID}}
	for range n - 1 {
		id := a.ids.next()
		sent = append(sent, sentMessage{ID: id, QuoteToken: "q" + id})
	}
	if keep != nil {
		keep(sent)
	}
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"sentMessages": sent})
}

func (a *API) loading(w http.ResponseWriter, r *http.Request) {
	if !a.authorized(w, r) {
		return
	}
	in, ok := args(w, r)
	if !ok {
		return
	}
	chat := fakeapi.Str(in, "chatId")
	if !lineID(chat, "U") {
		// The animation shows in one-on-one chats only.
		invalid(w, []detail{{"The property, 'chatId', in the request body is invalid", "chatId"}})
		return
	}
	if raw, ok := in["loadingSeconds"]; ok {
		n, err := strconv.Atoi(string(raw))
		if err != nil || n < 5 || n > 60 || n%5 != 0 {
			invalid(w, []detail{{"must be a multiple of 5 between 5 and 60", "loadingSeconds"}})
			return
		}
	}
	a.Recorder().Act(fakeapi.Action{Platform: message.LINE, Chat: chat, Action: "loading"})
	fakeapi.WriteJSON(w, http.StatusAccepted, map[string]any{})
}

// delivery is the record of an accepted call: one per call, whatever the
// number of its messages (Parley sends one): their texts, one paragraph
// each, the first message's quote, and the quick reply buttons of every
// message as its controls (a postback's data, a message action's text:
// what a tap sends back).
func delivery(chat string, msgs []textMessage, in map[string]json.RawMessage) fakeapi.Delivery {
	texts := make([]string, len(msgs))
	var controls []fakeapi.Control
	for i, m := range msgs {
		texts[i] = recorded(m)
		if m.QuickReply == nil {
			continue
		}
		for _, it := range m.QuickReply.Items {
			data := it.Action.Data
			if it.Action.Type == "message" {
				data = it.Action.Text
			}
			controls = append(controls, fakeapi.Control{Label: it.Action.Label, Data: data})
		}
	}
	return fakeapi.Delivery{Chat: chat, Text: strings.Join(texts, "\n\n"), ReplyTo: msgs[0].QuoteToken, Args: in, Controls: controls}
}

// textMessage is the part of a message object the fake reads.
type textMessage struct {
	Type       string `json:"type"`
	Text       string `json:"text"`
	QuoteToken string `json:"quoteToken"`
	// An image's, an audio's or a video's URLs, and an audio's duration
	// (media.go).
	OriginalContentURL string `json:"originalContentUrl"`
	PreviewImageURL    string `json:"previewImageUrl"`
	Duration           *int64 `json:"duration"`
	QuickReply         *struct {
		Items []struct {
			Type   string `json:"type"`
			Action *struct {
				Type        string `json:"type"`
				Label       string `json:"label"`
				Data        string `json:"data"`
				DisplayText string `json:"displayText"`
				Text        string `json:"text"`
			} `json:"action"`
		} `json:"items"`
	} `json:"quickReply"`
}

func messagesOf(in map[string]json.RawMessage) []json.RawMessage {
	var raw []json.RawMessage
	_ = json.Unmarshal(in["messages"], &raw)
	return raw
}

// detail is one problem of a request body, as LINE names it.
type detail struct {
	Message  string `json:"message"`
	Property string `json:"property"`
}

// validMessages checks the messages argument as the Messaging API does,
// for the text, image, audio and video messages Parley sends (the fake
// refuses other types).
func validMessages(in map[string]json.RawMessage) ([]textMessage, []detail) {
	var raw []json.RawMessage
	if err := json.Unmarshal(in["messages"], &raw); err != nil || len(raw) < 1 || len(raw) > MaxMessages {
		return nil, []detail{{"Size must be between 1 and " + strconv.Itoa(MaxMessages), "messages"}}
	}
	var out []textMessage
	var problems []detail
	add := func(msg, prop string) { problems = append(problems, detail{msg, prop}) }
	for i, r := range raw {
		p := "messages[" + strconv.Itoa(i) + "]"
		var m textMessage
		if err := json.Unmarshal(r, &m); err != nil {
			add("must be an object", p)
			continue
		}
		switch {
		case m.Type == "image" || m.Type == "audio" || m.Type == "video":
			for _, d := range validMedia(m, p) {
				add(d.Message, d.Property)
			}
		case m.Type != "text":
			add("the fake takes text, image, audio and video messages only", p+".type")
		case m.Text == "":
			add("must be specified", p+".text")
		case utf16Len(m.Text) > TextLimit:
			add("Length must be between 0 and "+strconv.Itoa(TextLimit), p+".text")
		}
		if m.QuickReply != nil {
			items := m.QuickReply.Items
			if len(items) > MaxQuickReplies {
				add("Size must be between 0 and "+strconv.Itoa(MaxQuickReplies), p+".quickReply.items")
			}
			for j, it := range items {
				q := p + ".quickReply.items[" + strconv.Itoa(j) + "]"
				act := it.Action
				switch {
				case it.Type != "action":
					add("must be action", q+".type")
				case act == nil:
					add("must be specified", q+".action")
				case act.Type != "postback" && act.Type != "message":
					add("the fake takes postback and message actions only", q+".action.type")
				case act.Label == "" || uniseg.GraphemeClusterCount(act.Label) > MaxLabel:
					add("Length must be between 1 and "+strconv.Itoa(MaxLabel), q+".action.label")
				case act.Type == "postback" && utf16Len(act.Data) > MaxData:
					add("Length must be between 0 and "+strconv.Itoa(MaxData), q+".action.data")
				case act.Type == "postback" && uniseg.GraphemeClusterCount(act.DisplayText) > MaxDisplayText:
					add("Length must be between 0 and "+strconv.Itoa(MaxDisplayText), q+".action.displayText")
				case act.Type == "message" && act.Text == "":
					add("must be specified", q+".action.text")
				}
			}
		}
		out = append(out, m)
	}
	return out, problems
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// lineID reports whether s is a LINE id: one of prefixes, then 32
// lower-case hex digits.
func lineID(s, prefixes string) bool {
	if len(s) != 33 || !strings.Contains(prefixes, s[:1]) {
		return false
	}
	for _, c := range []byte(s[1:]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// uuid reports whether s is a UUID in hexadecimal notation (8-4-4-4-12).
func uuid(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range []byte(s) {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// errorBody is LINE's error format.
type errorBody struct {
	Message string   `json:"message"`
	Details []detail `json:"details,omitempty"`
}

func fail(w http.ResponseWriter, status int, msg string, details []detail) {
	fakeapi.WriteJSON(w, status, errorBody{Message: msg, Details: details})
}

// invalid is LINE's 400 for a request body that does not validate.
func invalid(w http.ResponseWriter, problems []detail) {
	fail(w, http.StatusBadRequest, "The request body has "+strconv.Itoa(len(problems))+" error(s)", problems)
}

// messages are LINE's texts for the statuses a fault can set.
var messages = map[int]string{
	400: "The request body has 1 error(s)",
	401: "Authentication failed. Confirm that the access token in the authorization header is valid.",
	403: "Access to this API is not available for your account",
	404: "Not found",
	409: "The retry key is already accepted",
	413: "Request Entity Too Large",
	429: "The API rate limit has been exceeded. Try again later.",
	500: "Internal server error",
}

// failWith answers an injected fault: its Status (400 when only Error is
// set) with its Error, or LINE's own text for that status, as the message.
// A 409 names an accepted request, as LINE's always do. LINE sends no
// Retry-After; a fault with a RetryAfter sets one all the same, so that the
// suite's common rate-limit row can be checked (an adapter honours one
// when present).
func failWith(w http.ResponseWriter, f fakeapi.Fault) {
	status := f.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	msg := f.Error
	if msg == "" {
		msg = messages[status]
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(f.RetryAfterSeconds(), 10))
	}
	if status == http.StatusConflict {
		w.Header().Set(AcceptedRequestHeader, "f0000000-0000-4000-8000-00000000a11d")
	}
	fail(w, status, msg, nil)
}

// messageIDs issues LINE message ids: 18-digit numbers, increasing across
// every chat.
type messageIDs struct{ n atomic.Int64 }

func (m *messageIDs) Next(string, time.Time) string { return m.next() }

func (m *messageIDs) next() string {
	return strconv.FormatInt(600000000000000000+m.n.Add(1), 10)
}

// Postback is the webhook body LINE sends to bot when user taps, in chat
// (a user id for a one-to-one chat, which is then user's own; a group C… or
// room R… id otherwise), the quick reply button carrying data: one postback
// event, with webhookEventID as its id and replyToken as its reply token
// (register it with RegisterReplyToken to have the fake honour it), sent at
// at. Sign it with Headers.
func Postback(bot, chat, user, webhookEventID, replyToken string, at time.Time, data string) []byte {
	source := map[string]any{"type": "user", "userId": user}
	switch {
	case strings.HasPrefix(chat, "C"):
		source = map[string]any{"type": "group", "groupId": chat, "userId": user}
	case strings.HasPrefix(chat, "R"):
		source = map[string]any{"type": "room", "roomId": chat, "userId": user}
	}
	b, _ := json.Marshal(map[string]any{
		"destination": bot,
		"events": []map[string]any{{
			"type":            "postback",
			"postback":        map[string]any{"data": data},
			"webhookEventId":  webhookEventID,
			"deliveryContext": map[string]any{"isRedelivery": false},
			"timestamp":       at.UnixMilli(),
			"source":          source,
			"replyToken":      replyToken,
			"mode":            "active",
		}},
	})
	return b
}
