package message

// Preview is a reply shown while the agent writes it (a streamed reply's
// deltas): a Telegram draft or an edited message, a Slack stream, Discord's
// @original. It is never the reply: the reply's bubbles go through the send
// intent, the first of them editing the preview in place where the preview
// is a message (MessageID set), or sent fresh while the preview goes.
type Preview struct {
	// Thread is where it is shown.
	Thread Thread `json:"thread"`
	// Key names the turn's preview across the turn's attempts: the turn's
	// intent id. A retried turn shows its preview under the same key.
	Key string `json:"key"`
	// ReplyTo is the person's message a preview message quotes (in a
	// group), as the reply's first bubble would.
	ReplyTo string `json:"reply_to,omitempty"`
	// MessageID is the platform's id of the preview's message once it
	// exists; empty for a preview that is no message (a Telegram draft,
	// which expires on its own).
	MessageID string `json:"message_id,omitempty"`
	// ReplyContext is the inbound event's right to answer it, where the
	// preview is the answer's own message (Discord's deferred @original,
	// reached through the interaction's token).
	ReplyContext *ReplyContext `json:"reply_context,omitempty"`
	// Recipient is the person the reply answers (a Slack stream in a
	// channel names who it is for).
	Recipient string `json:"recipient,omitempty"`
	// FinalizedBy is the intent whose unit finalizes the preview, when it
	// is not the turn's own: the turn's first sequential post (package
	// agentapi). The sweeper looks there for the unit.
	FinalizedBy string `json:"finalized_by,omitempty"`
	// Streamed is the text a native stream shows so far, which the next
	// update appends to (Slack's chat.appendStream); empty when the
	// preview is no stream of this attempt's. Never recorded: an attempt
	// that takes a preview over rewrites it instead.
	Streamed string `json:"-"`
}
