package line

import "encoding/json"

// Webhook bodies, as the LINE Platform posts them
// (https://developers.line.biz/en/reference/messaging-api/#webhooks). Only
// the fields Parley reads are declared; LINE adds fields without notice and
// asks bots to ignore what they do not know.

// LineCallback is the body of every webhook request: the bot it is for and a
// batch of events, empty for the console's "Verify".
type LineCallback struct {
	// Destination is the user id of the bot the events are for.
	Destination string `json:"destination"`
	// Events are kept raw: each is decoded by its type, so that one event of
	// a type Parley does not know cannot refuse the others.
	Events *[]json.RawMessage `json:"events"`
}

// LineEvent is one webhook event: the common properties, and the parts of
// the message and postback events Parley reads.
type LineEvent struct {
	Type            string               `json:"type"`
	Mode            string               `json:"mode"`
	Timestamp       int64                `json:"timestamp"`
	Source          *LineSource          `json:"source"`
	WebhookEventID  string               `json:"webhookEventId"`
	DeliveryContext *LineDeliveryContext `json:"deliveryContext"`
	ReplyToken      string               `json:"replyToken"`
	Message         json.RawMessage      `json:"message"`
	Postback        json.RawMessage      `json:"postback"`
	Unsend          *LineUnsend          `json:"unsend"`
}

// LineUnsend names the message a person unsent.
type LineUnsend struct {
	MessageID string `json:"messageId"`
}

// Event types Parley handles or names.
const (
	LineEventMessage  = "message"
	LineEventPostback = "postback"
	LineEventUnsend   = "unsend"
)

// Channel states (LineEvent.Mode).
const (
	LineModeActive  = "active"
	LineModeStandby = "standby"
)

// LineSource is where an event happened.
type LineSource struct {
	Type    string `json:"type"`
	UserID  string `json:"userId"`
	GroupID string `json:"groupId"`
	RoomID  string `json:"roomId"`
}

// Source types.
const (
	LineSourceUser  = "user"
	LineSourceGroup = "group"
	LineSourceRoom  = "room"
)

// LineDeliveryContext says whether the event is a redelivery.
type LineDeliveryContext struct {
	IsRedelivery bool `json:"isRedelivery"`
}

// LineMessageContent is a message event's message. Only text messages carry
// Text and Mention (a message sticker Text too); a sticker its ids and
// Keywords; a file message FileName and FileSize; a video or an
// audio Duration (milliseconds); an image, a video or an audio its
// ContentProvider.
type LineMessageContent struct {
	ID              string               `json:"id"`
	Type            string               `json:"type"`
	Text            string               `json:"text"`
	QuoteToken      string               `json:"quoteToken"`
	QuotedMessageID string               `json:"quotedMessageId"`
	Mention         *LineMention         `json:"mention"`
	FileName        string               `json:"fileName"`
	FileSize        int64                `json:"fileSize"`
	Duration        int64                `json:"duration"`
	ContentProvider *LineContentProvider `json:"contentProvider"`
	// PackageID, StickerID and Keywords name a sticker.
	PackageID string   `json:"packageId"`
	StickerID string   `json:"stickerId"`
	Keywords  []string `json:"keywords"`
}

// Message types (LineMessageContent.Type) Parley reads.
const (
	LineMessageText    = "text"
	LineMessageImage   = "image"
	LineMessageVideo   = "video"
	LineMessageAudio   = "audio"
	LineMessageFile    = "file"
	LineMessageSticker = "sticker"
)

// LineContentProvider says where a message's content is: "line" (the
// content API serves it) or "external" (another service's URL, which LINE
// does not serve).
type LineContentProvider struct {
	Type string `json:"type"`
}

// LineMention lists who a text message mentions.
type LineMention struct {
	Mentionees []LineMentionee `json:"mentionees"`
}

// LineMentionee is one mention: its place in the text, in UTF-16 code units,
// and whether it names the bot that receives the webhook.
type LineMentionee struct {
	Type   string `json:"type"`
	Index  int    `json:"index"`
	Length int    `json:"length"`
	IsSelf bool   `json:"isSelf"`
}

// LinePostbackContent is what a postback action carried.
type LinePostbackContent struct {
	Data string `json:"data"`
}

// Send API bodies (https://developers.line.biz/en/reference/messaging-api/#messages).

// LineReplyRequest is POST /v2/bot/message/reply.
type LineReplyRequest struct {
	ReplyToken string            `json:"replyToken"`
	Messages   []LineTextMessage `json:"messages"`
}

// LinePushRequest is POST /v2/bot/message/push.
type LinePushRequest struct {
	To       string            `json:"to"`
	Messages []LineTextMessage `json:"messages"`
}

// LineTextMessage is a message object Parley sends: type "text", which LINE
// renders as written (no markup, no mention parsing; "textV2" would
// substitute {placeholders}, and "emojis" would turn $ into LINE emoji), or
// type "image", "audio" or "video" (a media bubble), which has its URLs and
// no text.
type LineTextMessage struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// OriginalContentURL is an image's, an audio's or a video's; an image
	// and a video have a PreviewImageURL too (HTTPS, JPEG or PNG). LINE
	// fetches them.
	OriginalContentURL string `json:"originalContentUrl,omitempty"`
	PreviewImageURL    string `json:"previewImageUrl,omitempty"`
	// Duration is an audio's length in milliseconds, which LINE requires.
	Duration   int64           `json:"duration,omitempty"`
	QuoteToken string          `json:"quoteToken,omitempty"`
	QuickReply *LineQuickReply `json:"quickReply,omitempty"`
}

// LineQuickReply holds the buttons shown under a message (at most 13).
type LineQuickReply struct {
	Items []LineQuickReplyItem `json:"items"`
}

// LineQuickReplyItem is one quick reply button.
type LineQuickReplyItem struct {
	Type   string             `json:"type"`
	Action LinePostbackAction `json:"action"`
}

// LinePostbackAction posts data back in a postback event when tapped, and
// shows displayText in the chat as the person's message.
type LinePostbackAction struct {
	Type        string `json:"type"`
	Label       string `json:"label"`
	Data        string `json:"data"`
	DisplayText string `json:"displayText,omitempty"`
}

// LineSendResponse is the answer to a reply or push.
type LineSendResponse struct {
	SentMessages []LineSentMessage `json:"sentMessages"`
}

// LineSentMessage is one message LINE accepted.
type LineSentMessage struct {
	ID         string `json:"id"`
	QuoteToken string `json:"quoteToken"`
}

// LineLoadingRequest is POST /v2/bot/chat/loading/start.
type LineLoadingRequest struct {
	ChatID         string `json:"chatId"`
	LoadingSeconds int    `json:"loadingSeconds,omitempty"`
}

// LineErrorResponse is every error answer: a message, and details for a
// request body that did not validate. There is no error code.
type LineErrorResponse struct {
	Message string            `json:"message"`
	Details []LineErrorDetail `json:"details"`
}

// LineErrorDetail names one problem of a request body.
type LineErrorDetail struct {
	Message  string `json:"message"`
	Property string `json:"property"`
}
