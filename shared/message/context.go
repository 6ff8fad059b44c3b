package message

// Kinds a person's actions other than a new message are normalized to.
// Each is opt-in at ingress: a deployment that does not ask for them drops
// them there, before any write.
const (
	// KindReaction is a person's reaction to a message in the thread
	// (Reaction): added, or removed.
	KindReaction Kind = "reaction"
	// KindEdit is a person's edit of a message they sent earlier:
	// MessageID names it, Text is what it says now.
	KindEdit Kind = "edit"
	// KindDelete is a person's deletion (LINE: unsend) of a message they
	// sent earlier: MessageID names it.
	KindDelete Kind = "delete"
	// KindCollected is Parley's own (Platform Parley): a busy thread's
	// collection of messages is due, and its turn answers them together
	// (PARLEY_BUSY_POLICY collect). The agent never sees this event: its
	// turn carries the collected messages.
	KindCollected Kind = "collected"
)

// Quote is the message another refers to: the one a person's message
// replies to or quotes, or the one a reaction reacts to. The receiver fills
// what its platform gives (Telegram's reply_to_message, Discord's message
// command target); the turn fills the rest from the thread's history.
type Quote struct {
	// MessageID is the platform's id of the quoted message.
	MessageID string `json:"message_id"`
	// Text is the quoted message's text, when known.
	Text string `json:"text,omitempty"`
	// Sender wrote it, when known. Parley's own messages name the bot.
	Sender *Sender `json:"sender,omitempty"`
	// Parley is true when the quoted message is one Parley sent: a bubble
	// of an agent's reply, or of Parley's own.
	Parley bool `json:"parley,omitempty"`
	// TurnID is the turn whose reply held the quoted bubble, when Parley
	// sent it and the thread's history knows it.
	TurnID string `json:"turn_id,omitempty"`
}

// Reaction is what a KindReaction event reports.
type Reaction struct {
	// MessageID is the platform's id of the message reacted to.
	MessageID string `json:"message_id"`
	// Emoji is the reaction: the emoji itself where the platform names one
	// Parley knows, else the platform's own name in colons (":custom:").
	Emoji string `json:"emoji"`
	// Removed is true when the person took the reaction back.
	Removed bool `json:"removed,omitempty"`
}

// ContentReaction is a reaction to a message (React): the message
// Outgoing.ReplyTo names.
const ContentReaction ContentKind = "reaction"

// React is a reaction Parley sets on a person's message: one the agent
// asked for (Emoji), or the last step of the status lifecycle (Status),
// whose emoji delivery chooses when the unit's turn is over: Emoji when
// every bubble before it was delivered, Failed when one failed for good.
type React struct {
	// Emoji is the reaction to set (for a status: when the reply arrived).
	Emoji string `json:"emoji"`
	// Status marks the status lifecycle's final reaction.
	Status bool `json:"status,omitempty"`
	// Failed is a status's reaction when a bubble of its reply failed.
	Failed string `json:"failed,omitempty"`
	// Received is the status reaction set while the turn ran, which the
	// final one replaces (a platform that keeps several removes it).
	Received string `json:"received,omitempty"`
}
