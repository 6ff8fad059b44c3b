// Package faketelegram is a fake Telegram Bot API: an http.Handler speaking
// the real wire format, validating each call as the Bot API does (the
// token, the chat, empty and over-long text, parse_mode) and answering in
// its error format ({"ok":false,"error_code":…,"description":…}). It
// records what it accepts in a fakeapi.Recorder.
//
// It serves POST /bot<token>/sendMessage (with an inline keyboard),
// /bot<token>/editMessageText, /bot<token>/sendMessageDraft (private chats'
// previews), /bot<token>/deleteMessage, /bot<token>/answerCallbackQuery,
// /bot<token>/sendChatAction, /bot<token>/getMe and /bot<token>/getFile,
// sendPhoto, sendDocument, sendAudio, sendVoice and sendVideo (media.go), and
// GET /file/bot<token>/<file_path> (files a test added with AddFile). Headers signs inbound
// updates as Telegram sends them; CallbackQuery is the update a press of a
// button sends, and Press the same, remembered: its answer is taken once,
// within QueryLife. ActOnAnswer does what Telegram does with a webhook's
// answer that names a Bot API method.
//
// Bot API reference: https://core.telegram.org/bots/api
package faketelegram

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/message"
)

// TextLimit is the most a message's text may hold, in UTF-16 code units:
// the Bot API refuses more with "message is too long".
const TextLimit = 4096

// Identity the fake answers getMe with.
const (
	botName = "Parley (fake)"
	botUser = "parley_fake_bot"
)

// Options configure an API: Token is the bot token the Bot API accepts,
// any other gets Telegram's 401.
type Options = fakeapi.Config

// API is the fake Bot API. It is safe for concurrent use.
type API struct {
	fakeapi.Base
	// botID is the token's prefix: the fake answers as that bot.
	botID int64

	mu sync.Mutex
	// pressed is when each callback query Press made was pressed;
	// answered holds every query answered.
	pressed  map[string]time.Time
	answered map[string]bool
	// files are what AddFile put, by file_id; downloads counts each
	// file's downloads.
	files     map[string]file
	downloads map[string]int
	// previews holds, per chat, when drafts and edits were accepted: the
	// limits they are held to.
	previews map[string][]time.Time
}

// file is one file a person sent, as the fake serves it.
type file struct {
	path string
	body []byte
}

// MaxDownload is the largest file the Bot API serves a bot: getFile refuses
// a bigger one.
const MaxDownload = 20 << 20

// AddFile makes body a file a person sent, served under fileID by getFile
// and /file/bot<token>/<path>.
func (a *API) AddFile(fileID string, body []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.files[fileID] = file{path: "documents/file_" + strconv.Itoa(len(a.files)) + ".bin", body: body}
}

// Downloads is how many times the file fileID was downloaded.
func (a *API) Downloads(fileID string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.downloads[fileID]
}

// getFile answers a File with its path, as the Bot API does for a file of
// at most MaxDownload bytes.
func (a *API) getFile(w http.ResponseWriter, args map[string]json.RawMessage) {
	id := fakeapi.Str(args, "file_id")
	a.mu.Lock()
	f, ok := a.files[id]
	a.mu.Unlock()
	switch {
	case !ok:
		fail(w, http.StatusBadRequest, "Bad Request: invalid file_id", nil)
	case len(f.body) > MaxDownload:
		fail(w, http.StatusBadRequest, "Bad Request: file is too big", nil)
	default:
		fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{
			"file_id": id, "file_unique_id": "u" + id, "file_size": len(f.body), "file_path": f.path}})
	}
}

// serveFile serves /file/bot<token>/<path>: a file getFile named.
func (a *API) serveFile(w http.ResponseWriter, rest string) {
	token, path, _ := strings.Cut(rest, "/")
	if !a.Authorized(token) {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, f := range a.files {
		if f.path == path {
			a.downloads[id]++
			w.Header().Set("Content-Length", strconv.Itoa(len(f.body)))
			_, _ = w.Write(f.body)
			return
		}
	}
	http.Error(w, "Not Found", http.StatusNotFound)
}

// Limits the fake holds drafts and edits to, as Telegram asks of bots:
// about one message a second in a chat, 20 a minute in a group. Past them
// it answers 429 with retry_after.
const (
	DraftEvery     = time.Second
	GroupPerMinute = 20
)

// QueryLife is how long after a press the fake takes its
// answerCallbackQuery. Telegram documents no figure: it refuses the answer
// to a query a few seconds old ("query is too old and response timeout
// expired or query ID is invalid"), as it refuses a second answer.
const QueryLife = 10 * time.Second

// New returns an API.
func New(opt Options) *API {
	id, _, _ := strings.Cut(opt.Token, ":")
	n, _ := strconv.ParseInt(id, 10, 64)
	return &API{Base: fakeapi.NewBase(opt, fakeapi.Sequence()), botID: n, pressed: map[string]time.Time{}, answered: map[string]bool{},
		previews: map[string][]time.Time{}, files: map[string]file{}, downloads: map[string]int{}}
}

// Headers returns the headers Telegram sends with a webhook update when
// setWebhook was given secret: X-Telegram-Bot-Api-Secret-Token and
// Content-Type. Telegram signs nothing else.
func Headers(secret string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	return h
}

type apiError struct {
	OK          bool       `json:"ok"`
	ErrorCode   int        `json:"error_code"`
	Description string     `json:"description"`
	Parameters  *apiParams `json:"parameters,omitempty"`
}

type apiParams struct {
	RetryAfter int64 `json:"retry_after,omitempty"`
}

func fail(w http.ResponseWriter, status int, description string, params *apiParams) {
	fakeapi.WriteJSON(w, status, apiError{ErrorCode: status, Description: description, Parameters: params})
}

// descriptions are the Bot API's texts for the statuses a fault can set.
var descriptions = map[int]string{
	400: "Bad Request: chat not found",
	401: "Unauthorized",
	403: "Forbidden: bot was blocked by the user",
	404: "Not Found",
	409: "Conflict: terminated by other getUpdates request",
	429: "Too Many Requests: retry after %d",
	500: "Internal Server Error",
	502: "Bad Gateway",
}

// parseModes are the parse_mode values the Bot API knows.
var parseModes = map[string]bool{"MarkdownV2": true, "HTML": true, "Markdown": true}

// chatActions are the sendChatAction actions the Bot API knows.
var chatActions = map[string]bool{
	"typing": true, "upload_photo": true, "record_video": true, "upload_video": true, "record_voice": true,
	"upload_voice": true, "upload_document": true, "choose_sticker": true, "find_location": true,
	"record_video_note": true, "upload_video_note": true,
}

// ServeHTTP serves the Bot API. Its paths put the token inside the first
// segment (/bot<token>/), which ServeMux patterns cannot match, so it
// routes by hand.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok && r.Method == http.MethodGet {
		a.serveFile(w, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || token == "" || strings.Contains(method, "/") {
		fail(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	send := method == "sendMessage"
	if !a.Authorized(token) {
		if send {
			a.Recorder().Refused()
		}
		fail(w, http.StatusUnauthorized, "Unauthorized", nil)
		return
	}
	if _, media := mediaFields[method]; media {
		a.sendMedia(w, r, method)
		return
	}
	args, ok := fakeapi.Args(r)
	if !ok {
		if send {
			a.Recorder().Refused()
		}
		fail(w, http.StatusBadRequest, "Bad Request: can't parse JSON object", nil)
		return
	}
	switch method {
	case "getMe":
		fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "result": a.bot()})
	case "sendChatAction":
		a.sendChatAction(w, args)
	case "sendMessage":
		a.sendMessage(w, args)
	case "editMessageText":
		a.editMessageText(w, args)
	case "sendMessageDraft":
		a.sendMessageDraft(w, args)
	case "deleteMessage":
		a.deleteMessage(w, args)
	case "answerCallbackQuery":
		a.answerCallbackQuery(w, args)
	case "setMessageReaction":
		a.setMessageReaction(w, args)
	case "getFile":
		a.getFile(w, args)
	default:
		fail(w, http.StatusNotFound, "Not Found", nil)
	}
}

// reactions are the emoji a bot may react with (ReactionTypeEmoji): any
// other is refused with REACTION_INVALID.
var reactions = map[string]bool{}

func init() {
	for _, e := range strings.Fields("👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 ❤‍🔥 🌚 🌭 💯 🤣 ⚡ 🍌 🏆 💔 🤨 😐 🍓 🍾 💋 🖕 😈 😴 😭 🤓 👻 👨‍💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ 💅 🤪 🗿 🆒 💘 🙉 🦄 😘 💊 🙊 😎 👾 🤷‍♂ 🤷 🤷‍♀ 😡") {
		reactions[e] = true
	}
}

// setMessageReaction replaces the bot's reactions on a message with the
// given list (empty: none). The fake keeps no messages but the ones it
// delivered, and takes any message id.
func (a *API) setMessageReaction(w http.ResponseWriter, args map[string]json.RawMessage) {
	chat, id := fakeapi.Str(args, "chat_id"), fakeapi.Str(args, "message_id")
	if msg := chatError(chat); msg != "" {
		fail(w, http.StatusBadRequest, msg, nil)
		return
	}
	if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
		fail(w, http.StatusBadRequest, "Bad Request: message to react not found", nil)
		return
	}
	var list []struct {
		Type  string `json:"type"`
		Emoji string `json:"emoji"`
	}
	if raw, ok := args["reaction"]; ok && json.Unmarshal(raw, &list) != nil {
		fail(w, http.StatusBadRequest, "Bad Request: can't parse reaction types json object", nil)
		return
	}
	if len(list) > 1 {
		fail(w, http.StatusBadRequest, "Bad Request: REACTIONS_TOO_MANY", nil)
		return
	}
	emoji := ""
	if len(list) == 1 {
		if list[0].Type != "emoji" || !reactions[list[0].Emoji] {
			fail(w, http.StatusBadRequest, "Bad Request: REACTION_INVALID", nil)
			return
		}
		emoji = list[0].Emoji
	}
	a.Recorder().Reacted(fakeapi.Reaction{Platform: message.Telegram, Chat: chat, MessageID: id, Emoji: emoji, Replace: true})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "result": true})
}

func (a *API) bot() map[string]any {
	return map[string]any{"id": a.botID, "is_bot": true, "first_name": botName, "username": botUser}
}

// chatError is the Bot API's refusal of a chat_id, "" for one it takes:
// an integer other than 0 or a @channelusername. No chat has id 0.
func chatError(chat string) string {
	if chat == "" {
		return "Bad Request: chat_id is empty"
	}
	if strings.HasPrefix(chat, "@") && len(chat) > 1 {
		return ""
	}
	if n, err := strconv.ParseInt(chat, 10, 64); err != nil || n == 0 {
		return "Bad Request: chat not found"
	}
	return ""
}

func (a *API) sendChatAction(w http.ResponseWriter, args map[string]json.RawMessage) {
	chat, action := fakeapi.Str(args, "chat_id"), fakeapi.Str(args, "action")
	if msg := chatError(chat); msg != "" {
		fail(w, http.StatusBadRequest, msg, nil)
		return
	}
	if !chatActions[action] {
		fail(w, http.StatusBadRequest, "Bad Request: wrong type of action", nil)
		return
	}
	a.Recorder().Act(fakeapi.Action{Platform: message.Telegram, Chat: chat, Thread: fakeapi.Str(args, "message_thread_id"), Action: action})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "result": true})
}

func (a *API) sendMessage(w http.ResponseWriter, args map[string]json.RawMessage) {
	chat := fakeapi.Str(args, "chat_id")
	a.Send(w, fakeapi.Send{
		Platform: message.Telegram,
		Chat:     chat,
		Fail:     failWith,
		Accept: func(w http.ResponseWriter) (fakeapi.Delivery, bool) {
			text := fakeapi.Str(args, "text")
			var refusal string
			switch mode := fakeapi.Str(args, "parse_mode"); {
			case chatError(chat) != "":
				refusal = chatError(chat)
			case strings.TrimSpace(text) == "":
				// Telegram trims the text before it checks it.
				refusal = "Bad Request: message text is empty"
			case len(utf16.Encode([]rune(text))) > TextLimit:
				refusal = "Bad Request: message is too long"
			case mode != "" && !parseModes[mode]:
				refusal = "Bad Request: unsupported parse_mode"
			}
			controls, kbErr := keyboard(args)
			if refusal == "" && kbErr != "" {
				refusal = kbErr
			}
			if refusal != "" {
				fail(w, http.StatusBadRequest, refusal, nil)
				return fakeapi.Delivery{}, false
			}
			var reply struct {
				MessageID json.Number `json:"message_id"`
			}
			if raw, ok := args["reply_parameters"]; ok {
				_ = json.Unmarshal(raw, &reply)
			}
			return fakeapi.Delivery{Chat: chat, Thread: fakeapi.Str(args, "message_thread_id"), Text: text, ReplyTo: reply.MessageID.String(), Args: args, Controls: controls}, true
		},
		Answer: a.answer,
	})
}

// failWith answers an injected fault: its Status (400 when only Error is
// set) with its Error, or the Bot API's own text for that status, as the
// description; a 429 carries parameters.retry_after.
func failWith(w http.ResponseWriter, f fakeapi.Fault) {
	status := f.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	desc := f.Error
	var params *apiParams
	if status == http.StatusTooManyRequests {
		params = &apiParams{RetryAfter: f.RetryAfterSeconds()}
		if desc == "" {
			desc = fmt.Sprintf(descriptions[status], params.RetryAfter)
		}
	}
	if desc == "" {
		desc = descriptions[status]
	}
	if desc == "" {
		desc = http.StatusText(status)
	}
	fail(w, status, desc, params)
}

// answer is sendMessage's result: the Message that was sent.
func (a *API) answer(w http.ResponseWriter, d fakeapi.Delivery) {
	id, _ := strconv.ParseInt(d.MessageID, 10, 64)
	var chat map[string]any
	if n, err := strconv.ParseInt(d.Chat, 10, 64); err == nil {
		chat = map[string]any{"id": n, "type": "supergroup"}
		if n > 0 {
			chat["type"] = "private"
		}
	} else {
		chat = map[string]any{"id": -1001999999999, "type": "channel", "username": strings.TrimPrefix(d.Chat, "@")}
	}
	msg := map[string]any{
		"message_id": id,
		"from":       a.bot(),
		"chat":       chat,
		"date":       d.At.Unix(),
		"text":       d.Text,
	}
	if d.Thread != "" {
		n, _ := strconv.ParseInt(d.Thread, 10, 64)
		msg["message_thread_id"] = n
		msg["is_topic_message"] = true
	}
	if d.ReplyTo != "" {
		n, _ := strconv.ParseInt(d.ReplyTo, 10, 64)
		msg["reply_to_message"] = map[string]any{"message_id": n, "chat": chat, "date": d.At.Unix()}
	}
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "result": msg})
}

// keyboard reads reply_markup's inline keyboard as the Bot API checks it:
// every button has text and 1-64 bytes of callback_data.
func keyboard(args map[string]json.RawMessage) ([]fakeapi.Control, string) {
	raw, ok := args["reply_markup"]
	if !ok {
		return nil, ""
	}
	var kb struct {
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal(raw, &kb); err != nil {
		return nil, "Bad Request: can't parse reply keyboard markup JSON object"
	}
	var out []fakeapi.Control
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			switch {
			case b.Text == "":
				return nil, "Bad Request: text buttons are unallowed in the inline keyboard"
			case b.CallbackData == "" || len(b.CallbackData) > 64:
				return nil, "Bad Request: BUTTON_DATA_INVALID"
			}
			out = append(out, fakeapi.Control{Label: b.Text, Data: b.CallbackData})
		}
	}
	return out, ""
}

// editMessageText changes a message the bot sent: its text, and its
// keyboard (an empty one removes it).
func (a *API) editMessageText(w http.ResponseWriter, args map[string]json.RawMessage) {
	chat, id, text := fakeapi.Str(args, "chat_id"), fakeapi.Str(args, "message_id"), fakeapi.Str(args, "text")
	if msg := chatError(chat); msg != "" {
		fail(w, http.StatusBadRequest, msg, nil)
		return
	}
	sent := a.sentMessage(chat, id)
	switch {
	case sent == nil || a.Recorder().IsDeleted(message.Telegram, chat, id):
		fail(w, http.StatusBadRequest, "Bad Request: message to edit not found", nil)
		return
	case a.current(chat, id, sent.Text) == text && !hasKeyboard(args):
		fail(w, http.StatusBadRequest, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message", nil)
		return
	case strings.TrimSpace(text) == "":
		fail(w, http.StatusBadRequest, "Bad Request: message text is empty", nil)
		return
	case len(utf16.Encode([]rune(text))) > TextLimit:
		fail(w, http.StatusBadRequest, "Bad Request: MESSAGE_TOO_LONG", nil)
		return
	}
	controls, kbErr := keyboard(args)
	if kbErr != "" {
		fail(w, http.StatusBadRequest, kbErr, nil)
		return
	}
	if wait := a.limit(chat, false); wait > 0 {
		fail(w, http.StatusTooManyRequests, fmt.Sprintf(descriptions[429], wait), &apiParams{RetryAfter: wait})
		return
	}
	apply := func() {
		a.Recorder().Edited(fakeapi.Edit{Platform: message.Telegram, Chat: chat, MessageID: id, Text: text, Controls: controls})
	}
	if !a.Recorder().Edit(w, message.Telegram, chat, failWith, apply) {
		return
	}
	d := *sent
	d.Text = text
	a.answer(w, d)
}

// hasKeyboard reports whether an edit sets a keyboard (which the fake
// does not compare: an edit of one is never "not modified").
func hasKeyboard(args map[string]json.RawMessage) bool {
	_, ok := args["reply_markup"]
	return ok
}

// current is a delivered message's text after its edits.
func (a *API) current(chat, id, text string) string {
	for _, e := range a.Recorder().Edits() {
		if e.Platform == message.Telegram && e.Chat == chat && e.MessageID == id {
			text = e.Text
		}
	}
	return text
}

// limit takes one draft (or, draft false, one edit) in chat at the
// recorder's clock, or returns the seconds to wait: a draft at most every
// DraftEvery in a chat; at most GroupPerMinute drafts and edits a minute in
// a group (a chat with a negative id).
func (a *API) limit(chat string, draft bool) int64 {
	now := a.Recorder().Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	var recent []time.Time
	for _, at := range a.previews[chat] {
		if now.Sub(at) < time.Minute {
			recent = append(recent, at)
		}
	}
	a.previews[chat] = recent
	if draft && len(recent) > 0 && now.Sub(recent[len(recent)-1]) < DraftEvery {
		return 1
	}
	if n, _ := strconv.ParseInt(chat, 10, 64); n < 0 && len(recent) >= GroupPerMinute {
		return int64((time.Minute-now.Sub(recent[0])+time.Second-1)/time.Second) + 0
	}
	a.previews[chat] = append(recent, now)
	return 0
}

// sendMessageDraft shows a draft in a private chat: draft_id non-zero,
// text at most 4096 UTF-16 code units (empty shows "Thinking…"), no
// parse_mode the Bot API does not know; a group's chat is refused.
func (a *API) sendMessageDraft(w http.ResponseWriter, args map[string]json.RawMessage) {
	chat, draft, text := fakeapi.Str(args, "chat_id"), fakeapi.Str(args, "draft_id"), fakeapi.Str(args, "text")
	if msg := chatError(chat); msg != "" {
		fail(w, http.StatusBadRequest, msg, nil)
		return
	}
	if n, _ := strconv.ParseInt(chat, 10, 64); n <= 0 {
		fail(w, http.StatusBadRequest, "Bad Request: drafts can be sent to private chats only", nil)
		return
	}
	if n, err := strconv.ParseInt(draft, 10, 64); err != nil || n == 0 {
		fail(w, http.StatusBadRequest, "Bad Request: draft_id must be non-zero", nil)
		return
	}
	if len(utf16.Encode([]rune(text))) > TextLimit {
		fail(w, http.StatusBadRequest, "Bad Request: message is too long", nil)
		return
	}
	if mode := fakeapi.Str(args, "parse_mode"); mode != "" && !parseModes[mode] {
		fail(w, http.StatusBadRequest, "Bad Request: unsupported parse_mode", nil)
		return
	}
	if wait := a.limit(chat, true); wait > 0 {
		fail(w, http.StatusTooManyRequests, fmt.Sprintf(descriptions[429], wait), &apiParams{RetryAfter: wait})
		return
	}
	a.Recorder().Drafted(fakeapi.Draft{Platform: message.Telegram, Chat: chat, Thread: fakeapi.Str(args, "message_thread_id"), DraftID: draft, Text: text, Args: args})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "result": true})
}

// deleteMessage deletes a message the bot sent.
func (a *API) deleteMessage(w http.ResponseWriter, args map[string]json.RawMessage) {
	chat, id := fakeapi.Str(args, "chat_id"), fakeapi.Str(args, "message_id")
	if msg := chatError(chat); msg != "" {
		fail(w, http.StatusBadRequest, msg, nil)
		return
	}
	if a.sentMessage(chat, id) == nil || a.Recorder().IsDeleted(message.Telegram, chat, id) {
		fail(w, http.StatusBadRequest, "Bad Request: message to delete not found", nil)
		return
	}
	a.Recorder().Deleted(fakeapi.Deletion{Platform: message.Telegram, Chat: chat, MessageID: id})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "result": true})
}

// sentMessage finds a message this bot delivered into chat.
func (a *API) sentMessage(chat, id string) *fakeapi.Delivery {
	for _, d := range a.Recorder().Delivered() {
		if d.Platform == message.Telegram && d.Chat == chat && d.MessageID == id {
			return &d
		}
	}
	return nil
}

// answerCallbackQuery answers a press: its text, if any, shows as a toast
// to the presser alone.
func (a *API) answerCallbackQuery(w http.ResponseWriter, args map[string]json.RawMessage) {
	id, text := fakeapi.Str(args, "callback_query_id"), fakeapi.Str(args, "text")
	if id == "" {
		fail(w, http.StatusBadRequest, "Bad Request: query is too old and response timeout expired or query ID is invalid", nil)
		return
	}
	if len([]rune(text)) > 200 {
		fail(w, http.StatusBadRequest, "Bad Request: MESSAGE_TOO_LONG", nil)
		return
	}
	a.mu.Lock()
	at, known := a.pressed[id]
	late := a.answered[id] || (known && a.Recorder().Now().Sub(at) > QueryLife)
	a.answered[id] = true
	a.mu.Unlock()
	if late {
		fail(w, http.StatusBadRequest, "Bad Request: query is too old and response timeout expired or query ID is invalid", nil)
		return
	}
	a.Recorder().Notified(fakeapi.Notice{Platform: message.Telegram, AckID: id, Text: text})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "result": true})
}

// Press is CallbackQuery, pressed now: the query's answer is taken for
// QueryLife from now, once.
func (a *API) Press(updateID, queryID, chat, user, messageID int64, data string) []byte {
	a.mu.Lock()
	a.pressed[strconv.FormatInt(queryID, 10)] = a.Recorder().Now()
	a.mu.Unlock()
	return CallbackQuery(updateID, queryID, chat, user, messageID, data)
}

// ActOnAnswer does what Telegram does with a webhook's answer: a 2xx
// answer of Content-Type application/json that names a Bot API method
// ({"method": "answerCallbackQuery", …}) is one call Telegram makes for the
// bot, at base (the Bot API root) with token, as if the bot had made it.
// Its outcome is told to no one: an error here is the call's, for a test
// to see. Any other answer does nothing.
func ActOnAnswer(ctx context.Context, c *http.Client, base, token string, status int, contentType string, answer []byte) error {
	if status/100 != 2 || !strings.HasPrefix(contentType, "application/json") {
		return nil
	}
	var call map[string]json.RawMessage
	var method string
	if json.Unmarshal(answer, &call) != nil || json.Unmarshal(call["method"], &method) != nil || method == "" {
		return nil
	}
	delete(call, "method")
	body, _ := json.Marshal(call)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+"/bot"+token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return fmt.Errorf("the webhook answer's %s: %s %s", method, resp.Status, b)
	}
	return nil
}

// CallbackQuery is the update Telegram sends when user (in a private chat,
// chat == user) presses the button carrying data on message messageID of
// chat: a callback_query with a fresh id.
func CallbackQuery(updateID, queryID int64, chat, user int64, messageID int64, data string) []byte {
	chatType := "supergroup"
	if chat > 0 {
		chatType = "private"
	}
	b, _ := json.Marshal(map[string]any{
		"update_id": updateID,
		"callback_query": map[string]any{
			"id":            strconv.FormatInt(queryID, 10),
			"from":          map[string]any{"id": user, "is_bot": false, "first_name": "Ada"},
			"chat_instance": "-1",
			"data":          data,
			"message": map[string]any{
				"message_id": messageID, "date": 1764432000, "text": "question",
				"chat": map[string]any{"id": chat, "type": chatType},
				"from": map[string]any{"id": 7000000001, "is_bot": true, "first_name": botName},
			},
		},
	})
	return b
}
