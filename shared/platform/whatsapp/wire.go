package whatsapp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// WhatsApp wire types, with JSON tags verbatim from the Cloud API's webhook
// payloads (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/overview),
// its messages endpoint and Graph's error envelope. Only the fields Parley
// reads or writes are declared.

// WhatsAppObjectBusinessAccount is the object of every WhatsApp Business
// Account webhook (WhatsAppNotification.Object).
const WhatsAppObjectBusinessAccount = "whatsapp_business_account"

// WhatsAppFieldMessages is the webhook field that carries messages and
// delivery statuses (WhatsAppChange.Field).
const WhatsAppFieldMessages = "messages"

// WhatsAppNotification is the outer body of every webhook POST: entries of
// changes, each change kept raw until its field says what it holds.
type WhatsAppNotification struct {
	Object string          `json:"object"`
	Entry  []WhatsAppEntry `json:"entry"`
}

// WhatsAppEntry is one WhatsApp Business Account's changes. ID is the
// account's id.
type WhatsAppEntry struct {
	ID      string           `json:"id"`
	Changes []WhatsAppChange `json:"changes"`
}

// WhatsAppChange is one change: Field names the subscription (messages,
// account_update, message_template_status_update …), Value its payload.
type WhatsAppChange struct {
	Field string          `json:"field"`
	Value json.RawMessage `json:"value"`
}

// WhatsAppValue is the value of a messages change. Messages and statuses
// are kept raw: each is decoded on its own, so that a message type Parley
// does not read never fails the request.
type WhatsAppValue struct {
	MessagingProduct string            `json:"messaging_product"`
	Metadata         WhatsAppMetadata  `json:"metadata"`
	Contacts         []WhatsAppContact `json:"contacts"`
	Messages         []json.RawMessage `json:"messages"`
	Statuses         []json.RawMessage `json:"statuses"`
}

// WhatsAppMetadata names the business phone number the change is for.
type WhatsAppMetadata struct {
	DisplayPhoneNumber string `json:"display_phone_number"`
	PhoneNumberID      string `json:"phone_number_id"`
}

// WhatsAppContact is the sender of an inbound message.
type WhatsAppContact struct {
	Profile WhatsAppProfile `json:"profile"`
	WaID    string          `json:"wa_id"`
}

// WhatsAppProfile is a contact's profile.
type WhatsAppProfile struct {
	Name string `json:"name"`
}

// Message types (WhatsAppMessage.Type) Parley reads. Every other type
// (image, audio, video, document, sticker, location, contacts, reaction,
// button, order, system, request_welcome, unsupported …) is dropped.
const (
	WhatsAppTypeText        = "text"
	WhatsAppTypeInteractive = "interactive"
	WhatsAppTypeReaction    = "reaction"
)

// Interactive reply types (WhatsAppInteractiveReply.Type).
const (
	WhatsAppInteractiveButtonReply = "button_reply"
	WhatsAppInteractiveListReply   = "list_reply"
)

// WhatsAppMessage is one inbound message. Text and Interactive are set for
// their own types only.
type WhatsAppMessage struct {
	From      string            `json:"from"`
	ID        string            `json:"id"`
	Timestamp WhatsAppTime      `json:"timestamp"`
	Type      string            `json:"type"`
	Context   *WhatsAppContext  `json:"context,omitempty"`
	Text      *WhatsAppTextBody `json:"text,omitempty"`
	// Interactive is kept raw: decoded only for an interactive message.
	Interactive json.RawMessage `json:"interactive,omitempty"`
	// GroupID is set on a message in a group chat: Parley answers one
	// person at a time and drops those.
	GroupID string `json:"group_id,omitempty"`
	// Reaction is a reaction message's: the message reacted to, and the
	// emoji (empty when the person took the reaction back).
	Reaction *WhatsAppReaction `json:"reaction,omitempty"`
	// Image, Document, Audio, Video and Sticker are a media message's
	// file, by its type.
	Image    *WhatsAppMedia `json:"image,omitempty"`
	Document *WhatsAppMedia `json:"document,omitempty"`
	Audio    *WhatsAppMedia `json:"audio,omitempty"`
	Video    *WhatsAppMedia `json:"video,omitempty"`
	Sticker  *WhatsAppMedia `json:"sticker,omitempty"`
}

// Media message types (WhatsAppMessage.Type).
const (
	WhatsAppTypeImage    = "image"
	WhatsAppTypeDocument = "document"
	WhatsAppTypeAudio    = "audio"
	WhatsAppTypeVideo    = "video"
	WhatsAppTypeSticker  = "sticker"
)

// WhatsAppMedia is a media message's file: its media id (fetched with GET
// /<media id>, WhatsAppMediaURL), declared type and base64 SHA-256; a
// caption (image, video, document), a filename (document), Voice for an
// audio recorded in the chat, Animated for a sticker.
type WhatsAppMedia struct {
	ID       string `json:"id"`
	MIMEType string `json:"mime_type,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
	Voice    bool   `json:"voice,omitempty"`
	Animated bool   `json:"animated,omitempty"`
}

// WhatsAppMediaURL is the answer to GET /<media id>: where the file is, for
// five minutes, with the access token, and what it is. FileSize is a
// number Graph has sent as a string too.
type WhatsAppMediaURL struct {
	URL      string      `json:"url"`
	MIMEType string      `json:"mime_type"`
	SHA256   string      `json:"sha256"`
	FileSize json.Number `json:"file_size"`
	ID       string      `json:"id"`
}

// WhatsAppReaction is a reaction, received or sent: the message it is on,
// and its emoji ("" removes it).
type WhatsAppReaction struct {
	MessageID string `json:"message_id"`
	Emoji     string `json:"emoji"`
}

// WhatsAppContext is what an inbound message replies to: ID is the quoted
// message, or the message whose button or list was used.
type WhatsAppContext struct {
	From      string `json:"from,omitempty"`
	ID        string `json:"id,omitempty"`
	Forwarded bool   `json:"forwarded,omitempty"`
}

// WhatsAppTextBody is a text message's text.
type WhatsAppTextBody struct {
	Body string `json:"body"`
}

// WhatsAppInteractiveReply is a use of an interactive message's control: a
// reply button or a list row.
type WhatsAppInteractiveReply struct {
	Type        string               `json:"type"`
	ButtonReply *WhatsAppButtonReply `json:"button_reply,omitempty"`
	ListReply   *WhatsAppListReply   `json:"list_reply,omitempty"`
}

// WhatsAppButtonReply is a pressed reply button: ID is the button's id as
// sent.
type WhatsAppButtonReply struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// WhatsAppListReply is a chosen list row: ID is the row's id as sent.
type WhatsAppListReply struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// WhatsAppStatus is a delivery status of a message the business sent.
type WhatsAppStatus struct {
	ID          string       `json:"id"`
	Status      string       `json:"status"`
	Timestamp   WhatsAppTime `json:"timestamp"`
	RecipientID string       `json:"recipient_id"`
	// BizOpaqueCallbackData is what the send attached
	// (WhatsAppSendMessage.BizOpaqueCallbackData), echoed back.
	BizOpaqueCallbackData string          `json:"biz_opaque_callback_data,omitempty"`
	Errors                []WhatsAppError `json:"errors,omitempty"`
}

// WhatsAppError is an error a webhook reports (a failed status).
type WhatsAppError struct {
	Code      int                `json:"code"`
	Title     string             `json:"title"`
	Message   string             `json:"message,omitempty"`
	ErrorData *WhatsAppErrorData `json:"error_data,omitempty"`
	Href      string             `json:"href,omitempty"`
}

// WhatsAppErrorData holds an error's details.
type WhatsAppErrorData struct {
	MessagingProduct string `json:"messaging_product,omitempty"`
	Details          string `json:"details,omitempty"`
}

// WhatsAppTime is a unix time in seconds, which the webhooks write as a
// string ("1764432000"); a number is read too.
type WhatsAppTime int64

// UnmarshalJSON reads a string or a number of seconds. Anything else is an
// error; a string that is no integer reads as 0 (no time).
func (t *WhatsAppTime) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			n = 0
		}
		*t = WhatsAppTime(n)
		return nil
	}
	if string(b) == "null" {
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return errors.New("whatsapp: timestamp is neither a string nor a number")
	}
	v, err := n.Int64()
	if err != nil || v < 0 {
		v = 0
	}
	*t = WhatsAppTime(v)
	return nil
}

// Send API: POST /<phone number id>/messages.

// WhatsAppSendMessage is the body of a send.
type WhatsAppSendMessage struct {
	MessagingProduct string           `json:"messaging_product"`
	RecipientType    string           `json:"recipient_type"`
	To               string           `json:"to"`
	Context          *WhatsAppReplyTo `json:"context,omitempty"`
	// BizOpaqueCallbackData is an arbitrary tag of at most 512 characters
	// that Graph does not read and echoes in every status of the message.
	BizOpaqueCallbackData string               `json:"biz_opaque_callback_data,omitempty"`
	Type                  string               `json:"type"`
	Text                  *WhatsAppText        `json:"text,omitempty"`
	Interactive           *WhatsAppInteractive `json:"interactive,omitempty"`
	Template              *WhatsAppTemplate    `json:"template,omitempty"`
	Reaction              *WhatsAppReaction    `json:"reaction,omitempty"`
	// A media message's file, by link, under its type's member.
	Image    *WhatsAppMediaLink `json:"image,omitempty"`
	Document *WhatsAppMediaLink `json:"document,omitempty"`
	Audio    *WhatsAppMediaLink `json:"audio,omitempty"`
	Video    *WhatsAppMediaLink `json:"video,omitempty"`
}

// WhatsAppMediaLink is a media object by link: Graph fetches the file from
// Link (HTTPS). Audio takes no caption; only a document has a filename.
type WhatsAppMediaLink struct {
	Link     string `json:"link"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// WhatsAppTemplate is a template message: an approved template by name and
// language, with its body's parameters.
type WhatsAppTemplate struct {
	Name       string                      `json:"name"`
	Language   WhatsAppTemplateLanguage    `json:"language"`
	Components []WhatsAppTemplateComponent `json:"components,omitempty"`
}

// WhatsAppTemplateLanguage is a template's language code (en_US).
type WhatsAppTemplateLanguage struct {
	Code string `json:"code"`
}

// WhatsAppTemplateComponent is a part of a template with its parameters.
type WhatsAppTemplateComponent struct {
	Type       string                      `json:"type"`
	Parameters []WhatsAppTemplateParameter `json:"parameters"`
}

// WhatsAppTemplateParameter is one parameter's value.
type WhatsAppTemplateParameter struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// WhatsAppReplyTo quotes the message a send replies to.
type WhatsAppReplyTo struct {
	MessageID string `json:"message_id"`
}

// WhatsAppText is a text message. PreviewURL is always written: false keeps
// a link in the text from being fetched and shown as a preview.
type WhatsAppText struct {
	Body       string `json:"body"`
	PreviewURL bool   `json:"preview_url"`
}

// Interactive message types (WhatsAppInteractive.Type).
const (
	WhatsAppInteractiveButton = "button"
	WhatsAppInteractiveList   = "list"
)

// WhatsAppInteractive is an interactive message: reply buttons or a list.
type WhatsAppInteractive struct {
	Type   string         `json:"type"`
	Body   WhatsAppBody   `json:"body"`
	Action WhatsAppAction `json:"action"`
}

// WhatsAppBody is an interactive message's text.
type WhatsAppBody struct {
	Text string `json:"text"`
}

// WhatsAppAction is an interactive message's controls: Buttons for
// reply buttons; Button (the label of the button that opens the list) and
// Sections for a list.
type WhatsAppAction struct {
	Buttons  []WhatsAppButton  `json:"buttons,omitempty"`
	Button   string            `json:"button,omitempty"`
	Sections []WhatsAppSection `json:"sections,omitempty"`
}

// WhatsAppButton is one reply button (Type "reply").
type WhatsAppButton struct {
	Type  string              `json:"type"`
	Reply WhatsAppButtonReply `json:"reply"`
}

// WhatsAppSection is a list's section.
type WhatsAppSection struct {
	Title string        `json:"title,omitempty"`
	Rows  []WhatsAppRow `json:"rows"`
}

// WhatsAppRow is one row of a list.
type WhatsAppRow struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// WhatsAppSendResponse is a send's answer: Messages[0].ID is the new
// message's wamid.
type WhatsAppSendResponse struct {
	MessagingProduct string                  `json:"messaging_product"`
	Contacts         []WhatsAppSentContact   `json:"contacts"`
	Messages         []WhatsAppSentMessageID `json:"messages"`
}

// WhatsAppSentContact is the recipient as Graph resolved it.
type WhatsAppSentContact struct {
	Input string `json:"input"`
	WaID  string `json:"wa_id"`
}

// WhatsAppSentMessageID names a sent message.
type WhatsAppSentMessageID struct {
	ID            string `json:"id"`
	MessageStatus string `json:"message_status,omitempty"`
}

// WhatsAppErrorResponse is Graph's error envelope.
type WhatsAppErrorResponse struct {
	Error *WhatsAppGraphError `json:"error"`
}

// WhatsAppGraphError is a Graph API error. Code (and ErrorSubcode) are what
// Meta asks clients to branch on; Message and the user-facing fields are
// descriptions.
type WhatsAppGraphError struct {
	Message        string             `json:"message"`
	Type           string             `json:"type"`
	Code           int                `json:"code"`
	ErrorSubcode   int                `json:"error_subcode,omitempty"`
	ErrorData      *WhatsAppErrorData `json:"error_data,omitempty"`
	IsTransient    bool               `json:"is_transient,omitempty"`
	ErrorUserTitle string             `json:"error_user_title,omitempty"`
	ErrorUserMsg   string             `json:"error_user_msg,omitempty"`
	FBTraceID      string             `json:"fbtrace_id,omitempty"`
}
