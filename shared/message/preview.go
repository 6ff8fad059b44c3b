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
}
