package agentapi

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxPreviewBytes bounds a preview post's body: a preview is shown, cut to
// the platform's limit, and never stored beyond its message.
const MaxPreviewBytes = 64 << 10

// MaxPreviewStatus bounds a preview's status line, in characters.
const MaxPreviewStatus = 200

// PreviewPost is a decoded POST /reply/preview body.
type PreviewPost struct {
	// TurnID is the turn_id of the waiting turn.
	TurnID string
	// Text is the reply as written so far (each post carries all of it:
	// the newest post wins); Status a line on what the agent is doing.
	// At least one is set.
	Text, Status string
}

// ParsePreview decodes a POST /reply/preview body: an object with turn_id,
// and text (the reply so far) and/or status (one line), each holding more
// than white space. Unknown fields are refused.
func ParsePreview(body []byte) (PreviewPost, error) {
	var raw struct {
		TurnID *string `json:"turn_id"`
		Text   *string `json:"text"`
		Status *string `json:"status"`
	}
	if err := decodeStrict(body, &raw); err != nil {
		return PreviewPost{}, err
	}
	switch {
	case raw.TurnID == nil:
		return PreviewPost{}, fmt.Errorf("%w: turn_id is required", ErrBadPost)
	case !isTurnID(*raw.TurnID):
		return PreviewPost{}, fmt.Errorf("%w: turn_id must be the 32 hex characters of the turn request's turn_id", ErrBadPost)
	case raw.Text == nil && raw.Status == nil:
		return PreviewPost{}, fmt.Errorf("%w: a preview carries text, status or both", ErrBadPost)
	case raw.Text != nil && blank(*raw.Text):
		return PreviewPost{}, fmt.Errorf("%w: text must hold more than white space", ErrBadPost)
	}
	p := PreviewPost{TurnID: *raw.TurnID}
	if raw.Text != nil {
		p.Text = *raw.Text
	}
	if raw.Status != nil {
		s := *raw.Status
		switch {
		case blank(s):
			return PreviewPost{}, fmt.Errorf("%w: status must hold more than white space", ErrBadPost)
		case strings.ContainsAny(s, "\r\n"):
			return PreviewPost{}, fmt.Errorf("%w: status is one line", ErrBadPost)
		case utf8.RuneCountInString(s) > MaxPreviewStatus:
			return PreviewPost{}, fmt.Errorf("%w: status is at most %d characters", ErrBadPost, MaxPreviewStatus)
		}
		p.Status = s
	}
	return p, nil
}

// blank reports whether s holds nothing but ASCII white space: the
// schema's pattern "[^\t\n\f\r ]", a character class that every regexp
// dialect reads alike (unlike \s).
func blank(s string) bool {
	return strings.Trim(s, "\t\n\f\r ") == ""
}
