package telegram

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// Telegram Bot API wire types, with JSON tags verbatim from
// https://core.telegram.org/bots/api. Only the fields Parley reads or writes
// are declared; Telegram adds fields often, and unknown ones are ignored.

// TelegramUpdate is one incoming update. At most one of the optional fields
// is set.
type TelegramUpdate struct {
	UpdateID          int64                  `json:"update_id"`
	Message           *TelegramMessage       `json:"message,omitempty"`
	EditedMessage     *TelegramMessage       `json:"edited_message,omitempty"`
	ChannelPost       *TelegramMessage       `json:"channel_post,omitempty"`
	EditedChannelPost *TelegramMessage       `json:"edited_channel_post,omitempty"`
	CallbackQuery     *TelegramCallbackQuery `json:"callback_query,omitempty"`
	// MessageReaction comes only when setWebhook's allowed_updates names
	// "message_reaction" (and, in a group, to an administrator bot).
	MessageReaction *TelegramMessageReactionUpdated `json:"message_reaction,omitempty"`
}

// TelegramMessageReactionUpdated is a change of a user's reactions to a
// message. Reactions set by bots are not reported.
type TelegramMessageReactionUpdated struct {
	Chat      TelegramChat           `json:"chat"`
	MessageID int64                  `json:"message_id"`
	User      *TelegramUser          `json:"user,omitempty"`
	ActorChat *TelegramChat          `json:"actor_chat,omitempty"`
	Date      int64                  `json:"date"`
	Old       []TelegramReactionType `json:"old_reaction"`
	New       []TelegramReactionType `json:"new_reaction"`
}

// TelegramReactionType is a reaction: an emoji, a custom emoji or a paid
// one.
type TelegramReactionType struct {
	Type          string `json:"type"`
	Emoji         string `json:"emoji,omitempty"`
	CustomEmojiID string `json:"custom_emoji_id,omitempty"`
}

// Reaction types (TelegramReactionType.Type).
const (
	TelegramReactionEmoji       = "emoji"
	TelegramReactionCustomEmoji = "custom_emoji"
)

// TelegramSetMessageReaction is the body of setMessageReaction: the bot's
// reactions to a message, replacing the ones it set before.
type TelegramSetMessageReaction struct {
	ChatID    TelegramChatID         `json:"chat_id"`
	MessageID int64                  `json:"message_id"`
	Reaction  []TelegramReactionType `json:"reaction"`
}

// TelegramMessage is a message in a chat.
type TelegramMessage struct {
	MessageID          int64                   `json:"message_id"`
	MessageThreadID    int64                   `json:"message_thread_id,omitempty"`
	From               *TelegramUser           `json:"from,omitempty"`
	SenderChat         *TelegramChat           `json:"sender_chat,omitempty"`
	Date               int64                   `json:"date"`
	Chat               TelegramChat            `json:"chat"`
	IsTopicMessage     bool                    `json:"is_topic_message,omitempty"`
	IsAutomaticForward bool                    `json:"is_automatic_forward,omitempty"`
	ReplyToMessage     *TelegramMessage        `json:"reply_to_message,omitempty"`
	ViaBot             *TelegramUser           `json:"via_bot,omitempty"`
	EditDate           int64                   `json:"edit_date,omitempty"`
	Text               string                  `json:"text,omitempty"`
	Entities           []TelegramMessageEntity `json:"entities,omitempty"`
	Caption            string                  `json:"caption,omitempty"`
	CaptionEntities    []TelegramMessageEntity `json:"caption_entities,omitempty"`
	Photo              []TelegramPhotoSize     `json:"photo,omitempty"`
	Sticker            *TelegramSticker        `json:"sticker,omitempty"`
}

// TelegramUser is a Telegram user or bot.
type TelegramUser struct {
	ID           int64  `json:"id"`
	IsBot        bool   `json:"is_bot"`
	FirstName    string `json:"first_name"`
	LastName     string `json:"last_name,omitempty"`
	Username     string `json:"username,omitempty"`
	LanguageCode string `json:"language_code,omitempty"`
}

// Telegram chat types (TelegramChat.Type).
const (
	TelegramChatPrivate    = "private"
	TelegramChatGroup      = "group"
	TelegramChatSupergroup = "supergroup"
	TelegramChatChannel    = "channel"
)

// TelegramChat is a chat: private, group, supergroup or channel.
type TelegramChat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"`
	Title     string `json:"title,omitempty"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
	IsForum   bool   `json:"is_forum,omitempty"`
}

// TelegramMessageEntity is a special entity in a text (a mention, a command,
// a URL).
type TelegramMessageEntity struct {
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Length int    `json:"length"`
}

// TelegramPhotoSize is one size of a photo.
type TelegramPhotoSize struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	FileSize     int64  `json:"file_size,omitempty"`
}

// TelegramSticker is a sticker.
type TelegramSticker struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Type         string `json:"type"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	IsAnimated   bool   `json:"is_animated"`
	IsVideo      bool   `json:"is_video"`
	Emoji        string `json:"emoji,omitempty"`
}

// TelegramCallbackQuery is an inline keyboard button press. Message is the
// message the button was on (for a message older than 48 hours, only its
// chat, message_id and a zero date); a message sent in inline mode has
// InlineMessageID instead.
type TelegramCallbackQuery struct {
	ID              string           `json:"id"`
	From            TelegramUser     `json:"from"`
	Message         *TelegramMessage `json:"message,omitempty"`
	InlineMessageID string           `json:"inline_message_id,omitempty"`
	ChatInstance    string           `json:"chat_instance"`
	Data            string           `json:"data,omitempty"`
	GameShortName   string           `json:"game_short_name,omitempty"`
}

// TelegramChatID is a chat_id argument. The Bot API takes an integer chat id
// or a "@channelusername" string; an id that parses as an integer is sent as
// a JSON number.
type TelegramChatID string

// MarshalJSON writes an integer id as a number, anything else as a string.
func (c TelegramChatID) MarshalJSON() ([]byte, error) {
	if _, err := strconv.ParseInt(string(c), 10, 64); err == nil {
		return []byte(c), nil
	}
	return json.Marshal(string(c))
}

// UnmarshalJSON reads a number or a string.
func (c *TelegramChatID) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = TelegramChatID(s)
		return nil
	}
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&n); err != nil {
		return err
	}
	if _, err := n.Int64(); err != nil {
		return errors.New("chat_id is not an integer")
	}
	*c = TelegramChatID(n)
	return nil
}

// TelegramSendMessage is the body of sendMessage.
type TelegramSendMessage struct {
	ChatID          TelegramChatID                `json:"chat_id"`
	MessageThreadID int64                         `json:"message_thread_id,omitempty"`
	Text            string                        `json:"text"`
	ReplyParameters *TelegramReplyParameters      `json:"reply_parameters,omitempty"`
	ReplyMarkup     *TelegramInlineKeyboardMarkup `json:"reply_markup,omitempty"`
}

// TelegramInlineKeyboardMarkup is a message's inline keyboard: rows of
// buttons. An empty keyboard removes the buttons of an edited message.
type TelegramInlineKeyboardMarkup struct {
	InlineKeyboard [][]TelegramInlineKeyboardButton `json:"inline_keyboard"`
}

// TelegramInlineKeyboardButton is a button whose press sends CallbackData
// (1-64 bytes) back in a callback_query.
type TelegramInlineKeyboardButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

// TelegramEditMessageText is the body of editMessageText.
type TelegramEditMessageText struct {
	ChatID      TelegramChatID                `json:"chat_id"`
	MessageID   int64                         `json:"message_id"`
	Text        string                        `json:"text"`
	ReplyMarkup *TelegramInlineKeyboardMarkup `json:"reply_markup,omitempty"`
}

// TelegramAnswerCallbackQuery is the body of answerCallbackQuery.
type TelegramAnswerCallbackQuery struct {
	CallbackQueryID string `json:"callback_query_id"`
	Text            string `json:"text,omitempty"`
}

// TelegramReplyParameters describes the message a sent message replies to.
type TelegramReplyParameters struct {
	MessageID int64 `json:"message_id"`
	// AllowSendingWithoutReply sends the message even when the quoted one
	// was deleted meanwhile, instead of failing the whole reply.
	AllowSendingWithoutReply bool `json:"allow_sending_without_reply,omitempty"`
}

// TelegramSendChatAction is the body of sendChatAction.
type TelegramSendChatAction struct {
	ChatID          TelegramChatID `json:"chat_id"`
	MessageThreadID int64          `json:"message_thread_id,omitempty"`
	Action          string         `json:"action"`
}

// TelegramResponse is every Bot API answer: Result when OK, else ErrorCode,
// Description and, for some errors, Parameters.
type TelegramResponse struct {
	OK          bool                        `json:"ok"`
	Result      json.RawMessage             `json:"result,omitempty"`
	ErrorCode   int                         `json:"error_code,omitempty"`
	Description string                      `json:"description,omitempty"`
	Parameters  *TelegramResponseParameters `json:"parameters,omitempty"`
}

// TelegramResponseParameters says how a failed request can be retried.
type TelegramResponseParameters struct {
	// MigrateToChatID is set when a group was upgraded to a supergroup:
	// the chat now has this id.
	MigrateToChatID int64 `json:"migrate_to_chat_id,omitempty"`
	// RetryAfter is the flood-control wait, in seconds.
	RetryAfter int64 `json:"retry_after,omitempty"`
}

// TelegramSendMessageDraft is the body of sendMessageDraft (Bot API 9.3):
// a private chat's animated draft of a message being written, shown for
// about 30 seconds unless updated. Updates of one DraftID animate.
type TelegramSendMessageDraft struct {
	ChatID          TelegramChatID `json:"chat_id"`
	MessageThreadID int64          `json:"message_thread_id,omitempty"`
	DraftID         int64          `json:"draft_id"`
	Text            string         `json:"text"`
}

// TelegramDeleteMessage is the body of deleteMessage.
type TelegramDeleteMessage struct {
	ChatID    TelegramChatID `json:"chat_id"`
	MessageID int64          `json:"message_id"`
}
