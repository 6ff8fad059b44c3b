package envelope

import (
	"errors"
	"fmt"
	"strconv"
)

// Reason says why a reply is not a valid envelope. Its value is a stable
// snake_case word, safe to log and to count.
type Reason string

const (
	// ReasonNotEnvelope: the reply holds no envelope at all (plain prose, or
	// JSON that is not an envelope).
	ReasonNotEnvelope Reason = "not_envelope"
	// ReasonEmbedded: an envelope (or a piece of one) sits among other text:
	// prose around it, a code fence, a second object after it.
	ReasonEmbedded Reason = "embedded_envelope"
	// ReasonEncoded: the reply is a JSON string whose content is an envelope
	// (the agent encoded its JSON twice).
	ReasonEncoded Reason = "encoded_envelope"
	// ReasonSyntax: the envelope is not well-formed JSON.
	ReasonSyntax Reason = "syntax"
	// ReasonTruncated: the envelope's JSON ends before it is complete.
	ReasonTruncated Reason = "truncated"
	// ReasonTooDeep: the JSON nests deeper than the parser allows.
	ReasonTooDeep Reason = "too_deep"
	// ReasonInvalidUnicode: a string is not valid UTF-8 or holds a lone
	// UTF-16 surrogate escape.
	ReasonInvalidUnicode Reason = "invalid_unicode"
	// ReasonDuplicateKey: an object names the same member twice.
	ReasonDuplicateKey Reason = "duplicate_key"
	// ReasonUnknownField: a member the schema does not define.
	ReasonUnknownField Reason = "unknown_field"
	// ReasonMissingField: a required member is absent.
	ReasonMissingField Reason = "missing_field"
	// ReasonWrongType: a member has the wrong JSON type.
	ReasonWrongType Reason = "wrong_type"
	// ReasonBadSchema: "schema" names a version Parley does not speak.
	ReasonBadSchema Reason = "unsupported_schema"
	// ReasonBadID: a bubble id is blank, too long, or holds '#' or a
	// control character.
	ReasonBadID Reason = "bad_id"
	// ReasonDuplicateID: two bubbles share an id.
	ReasonDuplicateID Reason = "duplicate_id"
	// ReasonBlankText: a bubble's text is empty or only whitespace.
	ReasonBlankText Reason = "blank_text"
	// ReasonNestedEnvelope: a bubble's (or a question's) text itself holds
	// envelope JSON, which would make the envelope visible.
	ReasonNestedEnvelope Reason = "nested_envelope"
	// ReasonBadNext: "next" has an unknown type or invalid details.
	ReasonBadNext Reason = "bad_next"
	// ReasonBadAsk: the ask request or its form is invalid.
	ReasonBadAsk Reason = "bad_ask"
	// ReasonBadReact: "react" is blank, too long, or not one emoji's
	// worth of visible characters.
	ReasonBadReact Reason = "bad_react"
)

// ParseError says why a reply could not be used as an envelope. It locates
// the problem by JSON path and byte offset and never holds any of the reply's
// text values, so it is safe to log.
type ParseError struct {
	Reason Reason
	// Path is the JSON path of the offending member ("messages[1].id"),
	// empty for the reply as a whole. Member names are shortened and quoted
	// when long or unusual.
	Path string
	// Offset is the byte offset in the reply body where the problem was
	// found, -1 when it is not known.
	Offset int
	// Detail is a fixed phrase chosen by Parley (never agent text).
	Detail string
}

func (e *ParseError) Error() string {
	msg := "envelope: " + string(e.Reason)
	if e.Path != "" {
		msg += " at " + e.Path
	}
	if e.Offset >= 0 {
		msg += " (offset " + strconv.Itoa(e.Offset) + ")"
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Limit names.
const (
	LimitMaxBubbles     = "max_bubbles"
	LimitMaxBubbleChars = "max_bubble_chars"
	// LimitMaxUnits and LimitMaxReplyBytes bound every plan, however it came
	// about (envelope, text, fallback prose): the number of platform
	// messages and the bytes of text they hold.
	LimitMaxUnits      = "max_units"
	LimitMaxReplyBytes = "max_reply_bytes"
	// LimitMaxQuestionBytes bounds an ask's form as Parley stores it
	// (MaxQuestionBytes).
	LimitMaxQuestionBytes = "max_question_bytes"
	// LimitPromptChars bounds a question's prompt, field by field: its
	// platform's TextLimit, which no configuration changes (see
	// checkPrompts).
	LimitPromptChars = "prompt_chars"
)

// LimitError rejects a whole plan that is over a configured limit. Parley
// never truncates a reply to fit.
type LimitError struct {
	// Limit is LimitMaxBubbles, LimitMaxBubbleChars, LimitMaxUnits,
	// LimitMaxReplyBytes, LimitMaxQuestionBytes or LimitPromptChars.
	Limit string
	// Max is the configured limit, Got what the reply had: its number of
	// bubbles or units, its bytes of text, the length in code points of
	// the bubble named BubbleID, or the bytes of its question's form as
	// stored.
	Max, Got int
	// BubbleID names the over-long bubble for max_bubble_chars ("ask" for
	// an ask request's message, and for prompt_chars); empty for
	// max_bubbles.
	BubbleID string
	// Field is the question's field whose prompt is over prompt_chars
	// ("q0", "q1", …).
	Field string
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case LimitMaxBubbleChars:
		return fmt.Sprintf("envelope: bubble %q has %d characters, over %s %d", e.BubbleID, e.Got, e.Limit, e.Max)
	case LimitMaxUnits:
		return fmt.Sprintf("envelope: the reply makes %d messages, over %s %d", e.Got, e.Limit, e.Max)
	case LimitMaxReplyBytes:
		return fmt.Sprintf("envelope: the reply holds %d bytes of text, over %s %d", e.Got, e.Limit, e.Max)
	case LimitMaxQuestionBytes:
		return fmt.Sprintf("envelope: the question's form is %d bytes as stored, over %s %d", e.Got, e.Limit, e.Max)
	case LimitPromptChars:
		return fmt.Sprintf("envelope: the question's field %s would show %d characters in one message, over the platform's %s %d", e.Field, e.Got, e.Limit, e.Max)
	}
	return fmt.Sprintf("envelope: %d bubbles, over %s %d", e.Got, e.Limit, e.Max)
}

// ErrCapabilities is returned (wrapped) by Build when the platform
// capabilities cannot be planned for: an unknown Counting.
var ErrCapabilities = errors.New("envelope: unusable platform capabilities")

func perr(reason Reason, path string, off int, detail string) *ParseError {
	return &ParseError{Reason: reason, Path: path, Offset: off, Detail: detail}
}
