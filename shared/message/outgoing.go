package message

import (
	"time"
	"unicode/utf8"
)

// ChatType values.
const (
	ChatPrivate = "private"
	ChatGroup   = "group"
)

// Outgoing is one platform message to send: one delivery unit.
type Outgoing struct {
	// Thread is where the message goes.
	Thread Thread
	// Content is what the unit carries: text within the platform's limit,
	// or a question.
	Content Content
	// ReplyTo, when set, is the platform message id to quote or reply to.
	ReplyTo string
	// IdempotencyKey is stable across every attempt of this unit
	// ("<intent id>#<unit id>"). Adapters of platforms with server-side
	// idempotency (LINE X-Line-Retry-Key, Discord nonce) send it.
	IdempotencyKey string
	// Sequence is the unit's place in its reply, from 0: an adapter whose
	// platform answers an event in a special way (Discord's first bubble
	// edits the deferred response) reads it.
	Sequence int
	// ReplyContext, when set and fresh, is the inbound event's right to be
	// answered directly; the adapter that issued it decides how to use it.
	ReplyContext *ReplyContext
	// Origin is who authored the text: OriginAgent, or OriginParley for
	// Parley's own operational output (the error line, notices, an
	// agent's "system" send). A platform that holds metadata tags the
	// message with it, so an echo by another bot is dropped by tag.
	Origin string
}

// Origins of an Outgoing.
const (
	OriginAgent  = "agent"
	OriginParley = "parley"
)

// Receipt is what the platform said it created.
type Receipt struct {
	// MessageIDs are the platform's ids of every message the send created
	// (Telegram message_id, Slack ts).
	MessageIDs []string `json:"message_ids"`
}

// WindowToken is the Token of a ReplyContext that stands for a
// platform's customer-service window (Capabilities.Window): Until is when
// it closes. A zero Until: no window is open.
const WindowToken = "window"

// Counting is how a platform counts the length of a text.
type Counting string

const (
	// CountRunes counts Unicode code points (Discord, Slack).
	CountRunes Counting = "runes"
	// CountUTF16 counts UTF-16 code units (Telegram, LINE, WhatsApp).
	CountUTF16 Counting = "utf16"
	// CountBytes counts UTF-8 bytes.
	CountBytes Counting = "bytes"
)

// Len is the length of s as a platform that counts by c does: UTF-8
// bytes, UTF-16 code units (an emoji is 2, as Telegram counts), or code
// points (CountRunes, and any Counting this version does not know).
func (c Counting) Len(s string) int {
	switch c {
	case CountBytes:
		return len(s)
	case CountUTF16:
		n := 0
		for i := 0; i < len(s); {
			if s[i] < utf8.RuneSelf {
				n++
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			n++
			if r > 0xFFFF {
				n++ // a surrogate pair
			}
		}
		return n
	}
	return utf8.RuneCountInString(s)
}

// Capabilities describe what a platform's send API accepts. The optional
// abilities (Typing, Buttons, Edit, Reconcile) match the interfaces its
// sender implements (package platform); the conformance suite checks they
// agree.
type Capabilities struct {
	// TextLimit is the most a single message may hold, counted by Counting.
	TextLimit int
	Counting  Counting
	// Idempotent is true when the platform deduplicates a resent message
	// by Outgoing.IdempotencyKey, so an unknown outcome may be resent.
	Idempotent bool
	// Typing: the platform shows a typing indicator (platform.Typer).
	Typing bool
	// Buttons: questions render as native controls (platform.Asker), and
	// presses are acknowledged (platform.Acknowledger).
	Buttons bool
	// TextForm: the platform's Asker may show a question as its numbered
	// text form (Prompt.FallbackText) where its controls cannot hold it (a
	// multi-select on LINE, many options on WhatsApp). A question's prompt
	// text, and its text form where it may be shown (TextForm, or no
	// Buttons), must fit TextLimit: the planner refuses one that would not.
	TextForm bool
	// PromptLimit, when set, is the most text a question message holds,
	// counted by Counting, where that is less than TextLimit (Slack: a
	// section block's 3000). The planner holds a question's prompts to it.
	PromptLimit int
	// Edit: a sent message can be edited (platform.Editor).
	Edit bool
	// Reconcile: an unknown send can be looked up before it is resent
	// (platform.Reconciler).
	Reconcile bool
	// Window, when set, is how long after a person's last message the
	// platform lets a business send them free-form messages (WhatsApp's
	// customer-service window: 24 hours). Ingress records each person's
	// message where the turn can find the newest (store's window index);
	// a reply carries the window it answers in Outgoing.ReplyContext
	// (Token WindowToken), and the sender sends outside it only what the
	// platform allows there (a template), or refuses (window_closed).
	Window time.Duration
	// Reactions: the bot can react to a person's message
	// (platform.Reactor): an envelope's "react", and the status lifecycle.
	Reactions bool
	// Statuses: the platform reports what became of each sent message
	// (KindStatus events), each naming the unit by the Status.Tag the
	// sender attached (Outgoing.IdempotencyKey), so the turn function
	// records it on the unit: a failure after an accepted send fails the
	// unit; a report of a unit held unknown proves it was sent.
	Statuses bool
}
