package agentapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxPostBytes bounds a post's body. The post is kept on the await record
// until the turn plans it, and a DynamoDB item holds at most 400 KB.
const MaxPostBytes = 256 << 10

// Post is a decoded POST /reply body.
type Post struct {
	// TurnID is the turn_id of the turn request being answered.
	TurnID string
	// ContentType and Body are the reply as the turn plans it: the
	// envelope (application/json) or the text (text/plain).
	ContentType string
	Body        []byte
	// Final ends the turn (the default). A post with final false is
	// delivered at once and the turn waits on for more.
	Final bool
	// Replace is the id of a bubble an earlier post of the turn sent, which
	// this post's one bubble replaces.
	Replace string
}

// isBubbleID reports whether s is 1 to 64 characters, none of them '#' or
// white space. Hand-written, not a regexp: a bounded repetition compiles
// into one copy per count, at every cold start.
func isBubbleID(s string) bool {
	n := 0
	for _, r := range s {
		switch r {
		case '#', ' ', '\t', '\n', '\f', '\r':
			return false
		}
		n++
	}
	return n >= 1 && n <= 64
}

// ErrBadPost is wrapped by every refusal of a post's body.
var ErrBadPost = errors.New("bad post")

// isTurnID reports whether s is 32 lowercase hex digits.
func isTurnID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ParsePost decodes a POST /reply body: an object with turn_id, at most one
// of envelope (an object) and text (a non-empty string), and final (default
// true). Only a final post may carry neither: it just ends the turn.
// Unknown fields are refused, so a misspelt one is not silently ignored.
func ParsePost(body []byte) (Post, error) {
	var raw struct {
		TurnID   *string         `json:"turn_id"`
		Envelope json.RawMessage `json:"envelope"`
		Text     *string         `json:"text"`
		Final    *bool           `json:"final"`
		Replace  *string         `json:"replace"`
	}
	if err := decodeStrict(body, &raw); err != nil {
		return Post{}, err
	}
	switch {
	case raw.TurnID == nil:
		return Post{}, fmt.Errorf("%w: turn_id is required", ErrBadPost)
	case !isTurnID(*raw.TurnID):
		return Post{}, fmt.Errorf("%w: turn_id must be the 32 hex characters of the turn request's turn_id", ErrBadPost)
	}
	final := raw.Final == nil || *raw.Final
	replace := ""
	if raw.Replace != nil {
		if !isBubbleID(*raw.Replace) {
			return Post{}, fmt.Errorf("%w: replace must be the id of a bubble the turn sent", ErrBadPost)
		}
		if raw.Envelope == nil && raw.Text == nil {
			return Post{}, fmt.Errorf("%w: replace needs the bubble that replaces it", ErrBadPost)
		}
		replace = *raw.Replace
	}
	if final && raw.Envelope == nil && raw.Text == nil {
		// A final post may only end the turn, with no bubbles of its own.
		return Post{TurnID: *raw.TurnID, Final: true}, nil
	}
	ctype, b, err := content(raw.Envelope, raw.Text)
	if err != nil {
		return Post{}, err
	}
	return Post{TurnID: *raw.TurnID, ContentType: ctype, Body: b, Final: final, Replace: replace}, nil
}

// decodeStrict decodes one JSON object into v, refusing unknown members and
// anything after it.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrBadPost, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the object", ErrBadPost)
	}
	return nil
}
