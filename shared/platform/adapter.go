package platform

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// Adapter is a chat platform: the one value its package exports for the
// registry, from which Parley derives the platform's settings, its ingress
// function, its route, its secrets and its place in the turn and delivery
// functions.
type Adapter interface {
	// Platform names it: the first part of its thread keys, its route
	// (/<platform>) and its ingress function (functions/<platform>).
	Platform() message.Platform
	// Settings lists every setting the adapter reads, each marked secret or
	// not and with the half that reads it.
	Settings() []Setting
	// Capabilities say what its send API accepts: the text limit and its
	// unit, idempotency, and which optional abilities its sender has.
	Capabilities() message.Capabilities
	// NewReceiver builds the receive half from the adapter's settings.
	NewReceiver(env Env) (Receiver, error)
	// NewSender builds the send half. ErrNotConfigured when the settings
	// it needs are unset: the platform is then not one Parley sends on.
	NewSender(env Env, client *http.Client) (Sender, error)
	// Targets returns the rules that put a conversation named from outside
	// (an events target, a configured pattern) in the form the platform's
	// own events name it by, refusing conversations the configured bot
	// cannot reach.
	Targets(env Env) Canonicalizer
}

// PrivateChats is an adapter that can tell from a thread alone (a thread
// named from outside: a send's, an events target's) whether it is a
// one-to-one chat with the bot. A question asked there with no owner is the
// person's; in a group it would be anyone's, so Parley refuses it. An
// adapter without it (or a thread it cannot tell) is taken for a group.
type PrivateChats interface {
	// Private reports whether t is a one-to-one chat with the bot, and the
	// person in it as their own events name them (Sender.ID), when the
	// thread says (empty: private, the person unnamed).
	Private(t message.Thread) (person string, private bool)
}

// Canonicalizer puts a thread named from outside in its platform's
// canonical form, so that cosmetic variations of one conversation are one
// thread key. chatless checks only the account (a pattern "<platform>:
// <account>:*").
type Canonicalizer func(t message.Thread, chatless bool) (message.Thread, error)

// ErrNotConfigured is returned by NewSender when the platform's credentials
// are unset.
var ErrNotConfigured = errors.New("platform not configured")

// Half says which half of an adapter reads a setting, and with it which
// functions hold it: the receive half runs in the platform's ingress
// function, the send half in turn and delivery.
type Half int

const (
	// Receive settings are read by the ingress function only.
	Receive Half = 1 << iota
	// Send settings are read by turn and delivery.
	Send
	// Both halves read it (Telegram's bot token names the bot either way).
	Both = Receive | Send
)

// Kind says how a setting's value is checked at start-up.
type Kind string

const (
	KindString   Kind = "string"
	KindBool     Kind = "bool"
	KindURL      Kind = "url"
	KindDuration Kind = "duration"
)

// Setting is one environment variable (or, for a secret, one Secrets Manager
// secret of that name) an adapter reads.
type Setting struct {
	// Key is the variable's name: TELEGRAM_BOT_TOKEN.
	Key string
	// Secret keeps the value out of the template, the environment and the
	// logs: in AWS it is read from its own secret.
	Secret bool
	// Half is who reads it.
	Half Half
	// Kind is how its value is checked. Defaults to KindString.
	Kind Kind
	// Default is the value when unset, as documented.
	Default string
	// Doc says what it is, in a sentence (the README's table).
	Doc string
}

// Env is how an adapter reads its settings: the process environment with
// the function's secrets overlaid. An empty value is unset.
type Env func(key string) string

// Bool reads a boolean setting, def when unset.
func (e Env) Bool(key string, def bool) (bool, error) {
	v := e(key)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, errors.New(key + ": want true or false, got " + strconv.Quote(v))
	}
	return b, nil
}

// Check reports whether value is well-formed for the setting's kind (a
// secret's value is never named).
func (s Setting) Check(value string) error {
	if value == "" {
		return nil
	}
	var err error
	switch s.Kind {
	case KindBool:
		_, err = strconv.ParseBool(value)
	case KindDuration:
		_, err = time.ParseDuration(value)
	case KindURL:
		err = checkURL(value)
	}
	if err == nil {
		return nil
	}
	if s.Secret {
		return errors.New(s.Key + ": not a valid " + string(s.Kind))
	}
	return errors.New(s.Key + ": not a valid " + string(s.Kind) + ": " + strconv.Quote(value))
}

// Sender is the send half of an adapter: it sends one unit's content and
// returns the receipt, with every id the platform gave. Failures are
// *message.SendError values (errors.As), classified into the failure
// classes from the platform's documented behaviour (ADR 0003): what proves
// nothing was posted, what is unknown, what is permanent.
//
// A sender is scoped to its account: a thread of another bot or workspace is
// refused (invalid_payload) without a call.
type Sender interface {
	Send(ctx context.Context, m message.Outgoing) (message.Receipt, error)
}

// Downloader is a sender whose platform serves the files people attach
// (message.Attachment.PlatformID): the turn stores them for the agent
// (package media). Download reads at most max bytes: a file over it is
// ErrFileTooLarge, a file the platform will not serve ErrFileUnavailable.
type Downloader interface {
	Download(ctx context.Context, a message.Attachment, max int64) ([]byte, error)
}

// Download's refusals, found with errors.Is.
var (
	ErrFileTooLarge    = errors.New("file over the size bound")
	ErrFileUnavailable = errors.New("the platform does not serve the file")
)

// Typer is a sender with a typing indicator, shown while the agent thinks.
type Typer interface {
	Typing(ctx context.Context, t message.Thread) error
}

// TypingRenewer is a Typer whose indicator shows for a while on its own
// (Telegram's chat action, LINE's loading animation): the turn renews it
// before it lapses while it works on the reply, and stops renewing it when
// it is over, so that the indicator outlives the turn by at most its life.
type TypingRenewer interface {
	TypingLife(t message.Thread) time.Duration
}

// TypingStopper is a Typer whose indicator stays until it is stopped: the
// turn stops it when it is over, whatever the outcome.
type TypingStopper interface {
	StopTyping(ctx context.Context, t message.Thread) error
}

// Replier is a sender that sends the first bubbles of a reply to an event
// together, in one call that costs nothing while the event's reply token is
// fresh (LINE's Reply API: up to five messages). Delivery gives it the
// bubbles the call can carry and records each one's receipt.
type Replier interface {
	// Replies is how many messages one reply call may carry from m, a
	// reply's first bubble (Sequence 0), now: 0 when it may carry none
	// (no reply token, or one too old to use).
	Replies(m message.Outgoing) int
	// Reply sends ms, a reply's first bubbles in order, in one call. Its
	// receipts are one per message, in order. ok is false, and nothing was
	// sent, when the platform refused the reply token (spent, expired):
	// each bubble then goes on its own (Send). Failures are Send's, for
	// every message at once.
	Reply(ctx context.Context, ms []message.Outgoing) (receipts []message.Receipt, ok bool, err error)
}

// Asker is a sender that renders a question message (message.ContentPrompt)
// with native controls. A sender without it gets the prompt as a numbered
// text form (Prompt.FallbackText).
type Asker interface {
	Ask(ctx context.Context, m message.Outgoing) (message.Receipt, error)
}

// Acknowledger is a sender that answers a press of a control (a
// message.KindAnswer event) from its turn: with a short notice to the person
// who pressed, when notice is not empty (shown to them alone where the
// platform can). A platform whose spinner has a deadline has had its answer
// already, from the press's webhook (Parsed.Ack, docs/adr/0015): the turn
// may wait behind the thread's other turns far longer.
type Acknowledger interface {
	Acknowledge(ctx context.Context, ev message.Event, notice string) error
}

// Editor is a sender that can change a message it sent: new text, or a
// prompt with its controls changed (a closed prompt removes them).
type Editor interface {
	Edit(ctx context.Context, t message.Thread, messageID string, c message.Content) error
}

// PressEditor is an Editor that can also change the message a press came
// from through the press itself (Discord's interaction token), which
// reaches it where the bot may not: an app installed for a person is no
// member of the channels it is used in. An error means the press could not;
// Edit may still.
type PressEditor interface {
	EditPressed(ctx context.Context, press message.Event, c message.Content) error
}

// Reactor is a sender that sets the bot's reaction on a message in a
// thread: r.Emoji ("" clears what the bot set), replacing r.Received where
// the platform keeps several reactions of one bot (Slack). Setting the same
// reaction again changes nothing, so an unknown outcome may be tried again.
type Reactor interface {
	React(ctx context.Context, t message.Thread, messageID string, r message.React) error
}

// Previewer is a sender that shows a reply while the agent writes it (a
// streamed reply's deltas), its platform's best way: a Telegram draft, a
// message edited in place. Its text is inert, as every bubble's. The reply
// itself still goes through the send intent: where the preview is a message
// (Preview.MessageID), the reply's first bubble edits it in place (Editor);
// elsewhere the bubble is sent fresh and the preview cleared.
type Previewer interface {
	// Preview shows text as p: it creates the preview's message when the
	// platform's preview is one and p has none yet, and changes it after.
	// It returns p as it now is (with the new MessageID). Failures are
	// classified like Send's.
	Preview(ctx context.Context, p message.Preview, text string) (message.Preview, error)
	// ClearPreview removes a preview that will not become the reply (a
	// message deleted; nothing for a draft, which expires). Clearing one
	// that is gone already succeeds.
	ClearPreview(ctx context.Context, p message.Preview) error
	// PreviewInterval is the least time between two updates of a preview
	// in t that keeps within the platform's rate limits.
	PreviewInterval(t message.Thread) time.Duration
}

// StatusPreviewer is a Previewer that shows a stream's status line
// ("searching flights…") natively in some threads (Slack's assistant
// status) rather than under the preview's text. The turn clears the status
// when it ends (TypingStopper).
type StatusPreviewer interface {
	NativeStatus(t message.Thread) bool
	PreviewStatus(ctx context.Context, t message.Thread, status string) error
}

// PreviewFinalizer is a Previewer whose preview message is edited into the
// reply's first bubble some other way than Editor.Edit of its id (Discord's
// deferred response, through the interaction's token). Failures are
// classified like Edit's: a preview that is gone is not_found.
type PreviewFinalizer interface {
	FinalizePreview(ctx context.Context, p message.Preview, c message.Content) error
}

// Reconciler is a sender that can look an unknown send up on the platform
// before it is resent: found reports whether the unit was posted after all.
// A unit it cannot look up is ErrNotReconcilable, without a call.
type Reconciler interface {
	Reconcile(ctx context.Context, m message.Outgoing) (r message.Receipt, found bool, err error)
}

// ErrNotReconcilable is a Reconciler's answer for a unit the platform
// gives no way to find again (a Slack file message carries no metadata):
// not found proves nothing, so the platform's unknown-outcome policy
// decides, as where the platform has no Reconciler.
var ErrNotReconcilable = errors.New("the platform cannot look this unit up")

func checkURL(v string) error {
	u, err := url.Parse(v)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("want an http(s) URL")
	}
	return nil
}
