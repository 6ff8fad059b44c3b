package envelope

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
)

// Mode says what Parley expects an agent to reply with.
type Mode string

const (
	// ModeStructured expects an openab.turn.v1 envelope. A reply that is not
	// one goes to the parse-error policy. The default.
	ModeStructured Mode = "structured"
	// ModeText expects plain text: the whole reply is one bubble, split only
	// at the platform's limit. A reply that is a valid envelope is still
	// used as one (agents misconfigure content types).
	ModeText Mode = "text"
)

// ParseErrorPolicy says what to deliver when a reply should have been an
// envelope and is not a valid one.
type ParseErrorPolicy string

const (
	// PolicyFallbackText delivers the reply's prose with every envelope
	// fragment (complete or truncated) stripped; nothing when no prose is
	// left. The default.
	PolicyFallbackText ParseErrorPolicy = "fallback_text"
	// PolicyErrorMessage delivers Config.ErrorMessage instead.
	PolicyErrorMessage ParseErrorPolicy = "error_message"
	// PolicySilent delivers nothing.
	PolicySilent ParseErrorPolicy = "silent"
)

// Defaults.
const (
	DefaultMaxBubbles     = 4
	DefaultMaxBubbleChars = 1200
	DefaultMaxUnits       = 10
	DefaultMaxReplyBytes  = 64 << 10
	DefaultErrorMessage   = "Sorry, I couldn't put that reply together. Please try again."
)

// Config is the planning configuration of one agent.
type Config struct {
	// Mode is ModeStructured or ModeText. Defaults to ModeStructured. A reply
	// whose Content-Type is text/plain is read in text mode whatever Mode
	// says.
	Mode Mode
	// MaxBubbles is the most bubbles one envelope may hold; an envelope with
	// more is rejected whole (LimitError). Defaults to 4.
	MaxBubbles int
	// MaxBubbleChars is the most Unicode code points one envelope bubble
	// may hold; an envelope with a longer bubble is rejected whole
	// (LimitError). It does not apply to text-mode or fallback prose, which
	// is split at the platform limit instead. Defaults to 1200.
	MaxBubbleChars int
	// MaxUnits is the most platform messages one reply may become, after
	// splitting at the platform's limit, however it came about (envelope,
	// text mode, fallback prose); over it the reply is rejected whole
	// (LimitError). Defaults to 10.
	MaxUnits int
	// MaxReplyBytes is the most bytes of text one reply may hold; over it
	// the reply is rejected whole before any splitting (LimitError). It keeps
	// a reply's send intent far below DynamoDB's 400 KB item limit. Defaults
	// to 64 KiB.
	MaxReplyBytes int
	// OnParseError is the parse-error policy. Defaults to
	// PolicyFallbackText.
	OnParseError ParseErrorPolicy
	// ErrorMessage is the line PolicyErrorMessage delivers. Defaults to
	// DefaultErrorMessage.
	ErrorMessage string
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	c.Mode = cmp.Or(c.Mode, ModeStructured)
	c.MaxBubbles = cmp.Or(c.MaxBubbles, DefaultMaxBubbles)
	c.MaxBubbleChars = cmp.Or(c.MaxBubbleChars, DefaultMaxBubbleChars)
	c.MaxUnits = cmp.Or(c.MaxUnits, DefaultMaxUnits)
	c.MaxReplyBytes = cmp.Or(c.MaxReplyBytes, DefaultMaxReplyBytes)
	c.OnParseError = cmp.Or(c.OnParseError, PolicyFallbackText)
	c.ErrorMessage = cmp.Or(c.ErrorMessage, DefaultErrorMessage)
	return c
}

// maxReplyBytesCeiling keeps a reply's intent item within DynamoDB's 400 KB,
// with room for the units' state.
const maxReplyBytesCeiling = 256 << 10

// MaxQuestionBytes bounds an ask's form as Parley stores it (JSON, where
// each of < > & takes six bytes): the question's record holds it with the
// answers given so far, and the reply's intent holds a field of it beside
// up to maxReplyBytesCeiling of text, both within DynamoDB's 400 KB. The
// form limits (fields, options, lengths) bound what the agent writes, not
// what it becomes: a form of 99 KB full of '<' is over 500 KB stored.
const MaxQuestionBytes = 64 << 10

// maxErrorMessage bounds the configured error line, so it is one bubble on
// every platform.
const maxErrorMessage = 1000

// Validate reports every problem of c (call it on WithDefaults' result),
// joined with errors.Join.
func (c Config) Validate() error {
	var errs []error
	switch c.Mode {
	case ModeStructured, ModeText:
	default:
		errs = append(errs, fmt.Errorf("envelope config: mode %q is not %q or %q", c.Mode, ModeStructured, ModeText))
	}
	if c.MaxBubbles < 1 {
		errs = append(errs, fmt.Errorf("envelope config: max_bubbles must be at least 1, got %d", c.MaxBubbles))
	}
	if c.MaxBubbleChars < 1 {
		errs = append(errs, fmt.Errorf("envelope config: max_bubble_chars must be at least 1, got %d", c.MaxBubbleChars))
	}
	if c.MaxUnits < 1 {
		errs = append(errs, fmt.Errorf("envelope config: max_units must be at least 1, got %d", c.MaxUnits))
	}
	if c.MaxReplyBytes < 1 || c.MaxReplyBytes > maxReplyBytesCeiling {
		errs = append(errs, fmt.Errorf("envelope config: max_reply_bytes must be 1 to %d, got %d", maxReplyBytesCeiling, c.MaxReplyBytes))
	}
	switch c.OnParseError {
	case PolicyFallbackText, PolicyErrorMessage, PolicySilent:
	default:
		errs = append(errs, fmt.Errorf("envelope config: on_parse_error %q is not %q, %q or %q",
			c.OnParseError, PolicyFallbackText, PolicyErrorMessage, PolicySilent))
	}
	switch {
	case strings.TrimSpace(c.ErrorMessage) == "":
		errs = append(errs, errors.New("envelope config: error_message must not be blank"))
	case len([]rune(c.ErrorMessage)) > maxErrorMessage:
		errs = append(errs, fmt.Errorf("envelope config: error_message must be at most %d characters", maxErrorMessage))
	case hasFragment(c.ErrorMessage, detectStrong):
		// The error line is delivered verbatim: it must not itself be
		// envelope JSON (I5).
		errs = append(errs, errors.New("envelope config: error_message must not contain envelope JSON"))
	}
	return errors.Join(errs...)
}
