package message

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Platform names a chat platform or event source. Its value is what Parley
// stores and logs.
type Platform string

// Platforms Parley receives from.
const (
	Telegram Platform = "telegram"
	Slack    Platform = "slack"
	Discord  Platform = "discord"
	LINE     Platform = "line"
	WhatsApp Platform = "whatsapp"
	// Teams is Microsoft Teams, through the Bot Framework.
	Teams Platform = "teams"
	// GoogleChat is a Google Chat app with an HTTP endpoint.
	GoogleChat Platform = "googlechat"
	// Events is the generic signed webhook for proactive events. Its events
	// target a conversation on one of the chat platforms above.
	Events Platform = "events"
	// Parley is Parley itself, the source of the events it makes (a
	// question's cancel). No webhook can claim it.
	Parley Platform = "parley"
)

// Kind says what an inbound Event is.
type Kind string

const (
	// KindMessage is a person's (or, for proactive events, a sender's) new message.
	KindMessage Kind = "message"
	// KindProactive is an event Parley's agent should act on without a human
	// asking: an alert, a cron tick, a GitHub event. Only these are triaged.
	KindProactive Kind = "proactive"
	// KindAnswer is a press of a control on a message Parley sent (Press):
	// an answer to a question, which never starts a turn of its own.
	KindAnswer Kind = "answer"
	// KindStatus is a platform's report on a message Parley sent (Status):
	// delivered, read, or failed after the send was accepted. It updates
	// that unit's receipt and never starts a turn.
	KindStatus Kind = "status"
	// KindSend is an agent's own message (POST /send): the reply it carries
	// (Send) is delivered in its thread's order and never calls the agent.
	KindSend Kind = "send"
)

// Send is what an agent-initiated send carries: the reply, as the agent
// would have answered a turn (an openab.turn.v1 envelope, or text).
type Send struct {
	// ContentType is application/json (Body is an envelope) or text/plain.
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
	// Relation is what the send is to the conversation: followup,
	// broadcast or system. Recorded for the logs.
	Relation string `json:"relation"`
	// Triage puts the send through the thread's triage policy, as a
	// proactive event.
	Triage bool `json:"triage,omitempty"`
}

// Thread identifies a conversation to reply into: a chat, and within it an
// optional thread (a Telegram forum topic, a Slack thread_ts).
type Thread struct {
	// Platform is the platform the conversation lives on.
	Platform Platform `json:"platform"`
	// Account is the bot or workspace the conversation belongs to: the
	// Telegram bot id, the Slack team id.
	Account string `json:"account"`
	// Chat is the chat or channel id.
	Chat string `json:"chat"`
	// Thread is the thread inside Chat, empty for the chat's main timeline.
	Thread string `json:"thread,omitempty"`
}

// Key is the thread's ordering key: turns and bubbles of one Key are
// processed one at a time, in order.
func (t Thread) Key() string {
	k := string(t.Platform) + ":" + t.Account + ":" + t.Chat
	if t.Thread != "" {
		k += ":" + t.Thread
	}
	return k
}

// Sender is who wrote an inbound message.
type Sender struct {
	ID    string `json:"id"`
	Name  string `json:"name,omitempty"`
	IsBot bool   `json:"is_bot,omitempty"`
}

// Event is one inbound platform event, normalized. Ingress functions build it
// from a verified webhook and put it on inbound.fifo; the turn function hands
// it to the agent.
type Event struct {
	// Platform is where the event came from (Events for proactive events).
	Platform Platform `json:"platform"`
	// Account scopes EventID: platform event ids are unique per bot or app.
	Account string `json:"account"`
	// EventID is the platform's id for this delivery's content: Telegram's
	// update_id, Slack's channel:ts of the message, a proactive event's id.
	// Redeliveries carry the same EventID.
	EventID string `json:"event_id"`
	// Kind is KindMessage, KindProactive, KindAnswer, KindStatus, KindSend,
	// or one of the opt-in kinds KindReaction, KindEdit, KindDelete.
	Kind Kind `json:"kind"`
	// Thread is where a reply goes.
	Thread Thread `json:"thread"`
	// Sender wrote the message.
	Sender Sender `json:"sender"`
	// Text is the message text as the platform delivered it.
	Text string `json:"text"`
	// MessageID is the platform's id of the inbound message (Telegram
	// message_id, Slack ts), used to reply to it.
	MessageID string `json:"message_id,omitempty"`
	// QuoteToken, when set, is what a reply must name to quote the
	// message, where that is not its id (LINE's quoteToken). Parley's to
	// use: never sent to the agent.
	QuoteToken string `json:"quote_token,omitempty"`
	// ReplyTo is the id of the message this one answers, if any.
	ReplyTo string `json:"reply_to,omitempty"`
	// ChatType is "private" for a one-to-one chat with the bot, "group" for
	// a group, channel or room. Replies quote the inbound message in groups.
	ChatType string `json:"chat_type,omitempty"`
	// Time is when the platform says the message was sent.
	Time time.Time `json:"time"`
	// Data carries a proactive event's structured payload for the agent.
	Data map[string]any `json:"data,omitempty"`
	// Press is what a KindAnswer event pressed.
	Press *Press `json:"press,omitempty"`
	// Status is what a KindStatus event reports.
	Status *Status `json:"status,omitempty"`
	// Cancel is what a KindAnswer event of Parley's own closed.
	Cancel *Cancel `json:"cancel,omitempty"`
	// Owner is who may answer a question the event's turn asks (a user id
	// on the thread's platform): for a proactive event or an agent's send,
	// as its source named them; for Parley's cancel of a question, that
	// question's owner, so a question asked again keeps it. A person's
	// message or press is owned by its sender.
	Owner string `json:"owner,omitempty"`
	// ReplyContext, when the platform issued one, lets the reply answer
	// this event directly (LINE's reply token, Discord's interaction).
	ReplyContext *ReplyContext `json:"reply_context,omitempty"`
	// Send is what a KindSend event delivers.
	Send *Send `json:"send,omitempty"`
	// Quote is the message this one replies to, or a reaction reacts to,
	// as far as it is known.
	Quote *Quote `json:"quote,omitempty"`
	// Reaction is what a KindReaction event reports.
	Reaction *Reaction `json:"reaction,omitempty"`
	// Attachments are the files that came with a person's message, in the
	// order the platform gave them.
	Attachments []Attachment `json:"attachments,omitempty"`
}

// Key is the event's dedupe key, stable across redeliveries.
func (e Event) Key() string {
	return "evt#" + string(e.Platform) + "#" + e.Account + "#" + e.EventID
}

// Proactive reports whether triage applies to the event.
func (e Event) Proactive() bool {
	return e.Kind == KindProactive || (e.Kind == KindSend && e.Send != nil && e.Send.Triage)
}

// GroupID shapes an ordering key into an SQS MessageGroupId: at most 128
// characters from SQS's alphabet. Keys that fit pass unchanged (readable in the
// console); others become "h-" and a SHA-256 prefix, which keeps them unique.
func GroupID(key string) string {
	if len(key) <= 128 && sqsSafe(key) {
		return key
	}
	return "h-" + hashHex(key)[:64]
}

// DedupID shapes an idempotency key into an SQS MessageDeduplicationId. It is
// always hashed: keys hold user-controlled ids of any length.
func DedupID(key string) string { return hashHex(key) }

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// sqsSafe reports whether s only holds the characters SQS allows in group and
// dedup ids: alphanumerics and ASCII punctuation.
func sqsSafe(s string) bool {
	if s == "" {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return r <= ' ' || r > '~'
	}) < 0
}
