package envelope

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/split"
)

// Reply is an agent's answer to a turn, as it came over HTTP.
type Reply struct {
	// Body is the reply body.
	Body []byte
	// ContentType is the reply's Content-Type header. text/plain selects
	// text mode whatever Config.Mode says.
	ContentType string
}

// Outcome says how a plan came about. Its value is a stable word, safe to
// log and count.
type Outcome string

const (
	// OutcomeEnvelope: a valid envelope, planned bubble by bubble.
	OutcomeEnvelope Outcome = "envelope"
	// OutcomeSilent: a valid envelope whose next is silent: nothing is sent.
	OutcomeSilent Outcome = "silent"
	// OutcomeText: a text-mode reply holding no envelope JSON.
	OutcomeText Outcome = "text"
	// OutcomeFallbackText: the fallback_text policy: the reply's prose with
	// envelope fragments stripped (no units when nothing was left).
	OutcomeFallbackText Outcome = "fallback_text"
	// OutcomeErrorMessage: the error_message policy: the configured line.
	OutcomeErrorMessage Outcome = "error_message"
	// OutcomeSilentPolicy: the silent policy: nothing is sent.
	OutcomeSilentPolicy Outcome = "silent_policy"
)

// Bubble ids of plans that do not come from an envelope.
const (
	TextBubbleID     = "text"
	FallbackBubbleID = "fallback"
	ErrorBubbleID    = "error"
)

// Plan is what to deliver for one reply on one platform.
type Plan struct {
	// Units are the platform messages to send, in order; empty when nothing
	// is to be sent.
	Units []Unit
	// Next is the agent's next step; NextStop unless a valid envelope said
	// otherwise.
	Next Next
	// Outcome says how the plan came about.
	Outcome Outcome
	// React is the envelope's "react": an emoji for the message the turn
	// answers; empty when none.
	React string
	// Problem is the *ParseError that made a parse-error policy apply (or
	// that made a text-mode reply's envelope JSON be stripped); nil
	// otherwise. It holds no reply text and is meant for logging.
	Problem error
}

// Unit is one platform message of a plan.
type Unit struct {
	// ID is "<bubble id>#<part>", stable for a given reply and platform:
	// the unit's idempotency and receipt key.
	ID string
	// BubbleID is the envelope bubble's id, or TextBubbleID,
	// FallbackBubbleID, ErrorBubbleID.
	BubbleID string
	// Part numbers a bubble's parts from 1; a bubble that fits is part 1
	// of 1.
	Part int
	// Text is the unit's text, within the platform's limit; empty for a
	// file.
	Text string
	// Media is the unit's file, with its caption (never split: the
	// platform's sender fits the caption, as a second message if needs
	// be).
	Media *message.Media
}

// Build turns an agent reply into a delivery plan for one platform. It is
// pure: no I/O, no clock, the same plan for the same input.
//
// A valid envelope (in either mode) is planned bubble by bubble; over a
// configured limit Build returns a *LimitError and no plan, whatever the
// parse-error policy. A text-mode reply without envelope JSON becomes one
// bubble. Anything else — a structured-mode reply that is not a valid
// envelope, or a text-mode reply holding envelope JSON — goes to the
// parse-error policy, with Plan.Problem saying why. Build also fails on an
// invalid cfg (after WithDefaults) or an unknown caps.Counting.
func Build(r Reply, cfg Config, caps message.Capabilities) (Plan, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return Plan{}, err
	}
	switch caps.Counting {
	case "", message.CountRunes, message.CountUTF16, message.CountBytes:
	default:
		return Plan{}, fmt.Errorf("%w: counting %q", ErrCapabilities, caps.Counting)
	}
	env, _, pe := parse(r.Body)
	if pe == nil {
		plan, err := planEnvelope(env, cfg, caps)
		if err != nil {
			return Plan{}, err
		}
		return plan, bounded(plan, cfg)
	}
	if pe.Reason == ReasonNotEnvelope && (cfg.Mode == ModeText || textPlain(r.ContentType)) {
		text := strings.TrimSpace(validUTF8(bytes.TrimPrefix(r.Body, bom)))
		if len(text) > cfg.MaxReplyBytes {
			// Refused before splitting: a 1 MiB reply would be hundreds
			// of messages, and splitting it costs for nothing.
			return Plan{}, &LimitError{Limit: LimitMaxReplyBytes, Max: cfg.MaxReplyBytes, Got: len(text)}
		}
		plan := Plan{Units: appendUnits(nil, TextBubbleID, text, caps), Next: Next{Type: NextStop}, Outcome: OutcomeText}
		return plan, bounded(plan, cfg)
	}
	plan := Plan{Next: Next{Type: NextStop}, Problem: pe}
	switch cfg.OnParseError {
	case PolicyErrorMessage:
		plan.Outcome = OutcomeErrorMessage
		plan.Units = appendUnits(nil, ErrorBubbleID, cfg.ErrorMessage, caps)
	case PolicySilent:
		plan.Outcome = OutcomeSilentPolicy
	default:
		plan.Outcome = OutcomeFallbackText
		prose, _ := stripFragments(validUTF8(bytes.TrimPrefix(r.Body, bom)))
		if len(prose) > cfg.MaxReplyBytes {
			return Plan{}, &LimitError{Limit: LimitMaxReplyBytes, Max: cfg.MaxReplyBytes, Got: len(prose)}
		}
		plan.Units = appendUnits(nil, FallbackBubbleID, prose, caps)
	}
	return plan, bounded(plan, cfg)
}

// bounded checks the limits every plan is held to, however it came about:
// no more than MaxUnits platform messages, no more than MaxReplyBytes of text.
func bounded(p Plan, cfg Config) error {
	if len(p.Units) > cfg.MaxUnits {
		return &LimitError{Limit: LimitMaxUnits, Max: cfg.MaxUnits, Got: len(p.Units)}
	}
	n := 0
	for _, u := range p.Units {
		n += len(u.Text)
		if u.Media != nil {
			n += len(u.Media.Caption)
		}
	}
	if n > cfg.MaxReplyBytes {
		return &LimitError{Limit: LimitMaxReplyBytes, Max: cfg.MaxReplyBytes, Got: n}
	}
	return nil
}

func planEnvelope(env *Envelope, cfg Config, caps message.Capabilities) (Plan, error) {
	plan := Plan{Next: env.Next, Outcome: OutcomeEnvelope, React: env.React}
	if env.Next.Type == NextSilent {
		// Silent wins: nothing is delivered (no reaction either), so no
		// delivery limit applies.
		plan.Outcome, plan.React = OutcomeSilent, ""
		return plan, nil
	}
	if len(env.Messages) > cfg.MaxBubbles {
		return Plan{}, &LimitError{Limit: LimitMaxBubbles, Max: cfg.MaxBubbles, Got: len(env.Messages)}
	}
	for _, b := range env.Messages {
		if n := utf8.RuneCountInString(b.shown()); n > cfg.MaxBubbleChars {
			return Plan{}, &LimitError{Limit: LimitMaxBubbleChars, Max: cfg.MaxBubbleChars, Got: n, BubbleID: b.ID}
		}
	}
	if a := env.Next.Ask; a != nil {
		if n := utf8.RuneCountInString(a.Message); n > cfg.MaxBubbleChars {
			return Plan{}, &LimitError{Limit: LimitMaxBubbleChars, Max: cfg.MaxBubbleChars, Got: n, BubbleID: "ask"}
		}
		// Measured as the store writes it (json.Marshal, HTML-escaped).
		form, err := json.Marshal(a.Question)
		if err != nil {
			return Plan{}, fmt.Errorf("envelope: encode the question: %w", err)
		}
		if len(form) > MaxQuestionBytes {
			return Plan{}, &LimitError{Limit: LimitMaxQuestionBytes, Max: MaxQuestionBytes, Got: len(form)}
		}
		if err := checkPrompts(a, caps); err != nil {
			return Plan{}, err
		}
	}
	if len(env.Messages) > 0 {
		plan.Units = make([]Unit, 0, len(env.Messages))
	}
	for _, b := range env.Messages {
		if b.Media != nil {
			plan.Units = append(plan.Units, Unit{ID: b.ID + "#1", BubbleID: b.ID, Part: 1, Media: b.Media})
			continue
		}
		plan.Units = appendUnits(plan.Units, b.ID, b.Text, caps)
	}
	return plan, nil
}

// appendUnits appends the units of one bubble, split at the platform's
// limit; an empty text adds none.
func appendUnits(units []Unit, id, text string, caps message.Capabilities) []Unit {
	for i, s := range split.Text(text, caps) {
		part := i + 1
		units = append(units, Unit{ID: id + "#" + strconv.Itoa(part), BubbleID: id, Part: part, Text: s})
	}
	return units
}

// textPlain reports whether a Content-Type is text/plain.
func textPlain(ct string) bool {
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/plain"
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
