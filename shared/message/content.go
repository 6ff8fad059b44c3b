package message

import "time"

// ContentKind says what a unit carries. Its value is what the store persists.
type ContentKind string

const (
	// ContentText is a plain-text message, already within the platform's
	// limit.
	ContentText ContentKind = "text"
	// ContentPrompt is a question message (a Prompt): the adapter renders
	// native controls where it can (an Asker), a numbered text form
	// elsewhere (Prompt.FallbackText).
	ContentPrompt ContentKind = "prompt"
)

// Content is what one delivery unit carries: exactly one of its fields is
// set. New kinds (media) add a field; a reader that finds none it knows
// refuses the unit rather than send something else.
type Content struct {
	// Text is a text message's text.
	Text string `json:"text,omitempty"`
	// Prompt is a question message to send.
	Prompt *Prompt `json:"prompt,omitempty"`
	// React is a reaction to set on the message the unit replies to.
	React *React `json:"react,omitempty"`
	// Media is a file to send, with its caption.
	Media *Media `json:"media,omitempty"`
}

// Text is text content.
func Text(s string) Content { return Content{Text: s} }

// Kind is the content's kind, or "" when it holds nothing Parley knows.
func (c Content) Kind() ContentKind {
	switch {
	case c.Prompt != nil:
		return ContentPrompt
	case c.React != nil:
		return ContentReaction
	case c.Media != nil:
		return ContentMedia
	case c.Text != "":
		return ContentText
	}
	return ""
}

// ReplyContext is a short-lived, platform-issued right to answer one inbound
// event: LINE's reply token, Discord's interaction token. It travels with
// the event to the turn, into the intent and to the adapter that sends the
// reply; only that adapter reads Token, and nothing logs it.
type ReplyContext struct {
	// Token is the platform's token, opaque to everything but its adapter.
	Token string `json:"token"`
	// Until is when the platform stops honouring it.
	Until time.Time `json:"until"`
}

// Fresh reports whether the context may still be used at now, with margin
// to spare for the call itself.
func (r *ReplyContext) Fresh(now time.Time, margin time.Duration) bool {
	return r != nil && r.Token != "" && now.Add(margin).Before(r.Until)
}

// Delivery states a platform reports in a Status.
const (
	StatusSent      = "sent"
	StatusDelivered = "delivered"
	StatusRead      = "read"
	StatusFailed    = "failed"
)

// Status is a platform's report on one message Parley sent.
type Status struct {
	// MessageID is the platform's id of the sent message (a receipt id).
	MessageID string `json:"message_id"`
	// State is StatusSent, StatusDelivered, StatusRead or StatusFailed.
	State string `json:"state"`
	// Code and Reason are the platform's error code and title when failed,
	// and Class what the adapter makes of the code (empty: permission, the
	// platform refused to deliver).
	Code   string       `json:"code,omitempty"`
	Reason string       `json:"reason,omitempty"`
	Class  FailureClass `json:"class,omitempty"`
	// Tag is what Parley attached to the send for the platform to echo in
	// its statuses (WhatsApp's biz_opaque_callback_data): the unit's
	// idempotency key, which names the intent and unit without an index.
	Tag string `json:"tag,omitempty"`
}

// Cancel is Parley's own notice that a question closed without an answer,
// carried by a KindAnswer event from Platform Parley on the question's
// thread, so that the agent hears it in order with the thread's turns.
type Cancel struct {
	// QuestionID is the question's id, as the agent knows it.
	QuestionID string `json:"question_id"`
	// Reason is why: expired, superseded, off, no_owner.
	Reason string `json:"reason"`
	// IntentID and UnitID locate the question's message, to edit it to
	// Text, its closed form; empty when it was never sent.
	IntentID string `json:"intent_id,omitempty"`
	UnitID   string `json:"unit_id,omitempty"`
	Text     string `json:"text,omitempty"`
}

// Press is a button press or a selection on a message Parley sent: an
// answer to a question, never a new message.
type Press struct {
	// Data is what the control carried (Telegram callback_data, Slack's
	// action value, a Discord custom_id, a LINE postback): Parley's own
	// short key (Choice.Data), never the agent's field names or values.
	// For a select menu it is the menu's data (Prompt.Select).
	Data string `json:"data"`
	// Values are the chosen options' data of a select menu, every one of
	// them (a multi-select sends the whole choice at once).
	Values []string `json:"values,omitempty"`
	// MessageID is the platform id of the message whose control was
	// pressed.
	MessageID string `json:"message_id,omitempty"`
	// AckID is what the platform needs to acknowledge the press (Telegram's
	// callback_query id), if anything.
	AckID string `json:"ack_id,omitempty"`
}
