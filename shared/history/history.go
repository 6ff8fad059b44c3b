package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
)

// Role says who an entry is from.
type Role string

const (
	// RolePerson is a person in the thread: a message, an answer to a
	// question, a reaction.
	RolePerson Role = "person"
	// RoleAgent is a bubble of the agent's that Parley delivered (a reply,
	// or the agent's own send).
	RoleAgent Role = "agent"
	// RoleParley is a bubble of Parley's own that it delivered: the error
	// line, a question's re-prompt, a system send.
	RoleParley Role = "parley"
)

// Entry kinds.
const (
	KindMessage  = "message"
	KindAnswer   = "answer"
	KindReaction = "reaction"
	KindBubble   = "bubble"
)

// Entry is one line of a thread's transcript, as kept and as the agent
// gets it in a turn request's history.
type Entry struct {
	// ID is unique in the thread: a person's event key, or a bubble's unit
	// key (<turn id>#<unit id>).
	ID   string `json:"id"`
	Role Role   `json:"role"`
	// Kind is message, answer or reaction for a person, bubble for what
	// Parley delivered.
	Kind string `json:"kind"`
	// Text is what was said, exactly as delivered (a bubble's text as it
	// reached the platform; a question's prompt).
	Text string `json:"text,omitempty"`
	// Sender is who wrote a person's entry.
	Sender *message.Sender `json:"sender,omitempty"`
	// MessageIDs are the platform's ids of the message: a person's, or
	// every message a bubble became (its receipt).
	MessageIDs []string `json:"message_ids,omitempty"`
	// TurnID is the turn a bubble answered.
	TurnID string `json:"turn_id,omitempty"`
	// Time is when the person wrote (as Parley received it), or when the
	// platform accepted the bubble.
	Time time.Time `json:"time"`
	// Answer is what an answer entry answered.
	Answer *Answer `json:"answer,omitempty"`
	// Reaction is what a reaction entry reported.
	Reaction *message.Reaction `json:"reaction,omitempty"`
	// Files are the files the entry carried: a person's attachments, a
	// media bubble's file (its caption is Text). Described only: a URL
	// given to an agent expires long before the transcript does.
	Files []File `json:"files,omitempty"`
	// Edited is true when the person edited the message since.
	Edited bool `json:"edited,omitempty"`
	// Truncated is true when files were left out or Text was cut to fit
	// the transcript's bound.
	Truncated bool `json:"truncated,omitempty"`
}

// File describes a file in the transcript.
type File struct {
	// Kind is an attachment's kind (message.AttachmentKind) or a media
	// bubble's (message.MediaKind).
	Kind string `json:"kind"`
	// Name is the file's name, at most MaxFileName bytes.
	Name string `json:"name,omitempty"`
	MIME string `json:"mime_type,omitempty"`
}

// MaxFileName bounds a File's name: the rest is cut, at a character
// boundary.
const MaxFileName = 255

// MaxFileType bounds a File's media type and kind the same way (RFC 6838
// names a type or subtype in at most 127 characters).
const MaxFileType = 127

// NewFile is a File of kind, name and type, each bounded.
func NewFile(kind, name, mime string) File {
	return File{Kind: cut(kind, MaxFileType), Name: cut(name, MaxFileName), MIME: cut(mime, MaxFileType)}
}

// cut is s's longest start of at most n bytes ending at a character
// boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Answer is an answer to one of the agent's questions, as the agent got it
// (agent.Answer's shape).
type Answer struct {
	QuestionID string         `json:"question_id"`
	Action     string         `json:"action"`
	Content    map[string]any `json:"content,omitempty"`
}

// Config is PARLEY_HISTORY and PARLEY_HISTORY_TTL.
type Config struct {
	// Entries is how many entries a thread's transcript keeps, the newest.
	// Zero: no history is kept, and nothing of it is read or written.
	Entries int
	// Bytes bounds the transcript, encoded as JSON: the oldest entries are
	// dropped first to fit it. Defaults to DefaultBytes; at most MaxBytes.
	Bytes int
	// TTL is how long a transcript is kept after its last write. Defaults
	// to DefaultTTL.
	TTL time.Duration
}

// Bounds of Config.
const (
	// DefaultBytes is the transcript's default bound.
	DefaultBytes = 16 << 10
	// MaxBytes keeps the transcript's item well under DynamoDB's 400 KB
	// whatever else it holds, and a turn request carrying all of it well
	// under what an agent is sent.
	MaxBytes = 256 << 10
	// MinBytes leaves room for one entry of some length.
	MinBytes = 1 << 10
	// MaxEntries bounds Entries.
	MaxEntries = 1000
	// DefaultTTL is as long as send intents are kept.
	DefaultTTL = 30 * 24 * time.Hour
)

// On reports whether history is kept.
func (c Config) On() bool { return c.Entries > 0 }

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.Bytes == 0 {
		c.Bytes = DefaultBytes
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	return c
}

// Validate reports every problem with c (call it on WithDefaults' result).
func (c Config) Validate() error {
	var errs []error
	if c.Entries < 0 || c.Entries > MaxEntries {
		errs = append(errs, fmt.Errorf("history entries %d: want 0 to %d", c.Entries, MaxEntries))
	}
	if c.Bytes < MinBytes || c.Bytes > MaxBytes {
		errs = append(errs, fmt.Errorf("history bytes %d: want %d to %d", c.Bytes, MinBytes, MaxBytes))
	}
	if c.TTL <= 0 {
		errs = append(errs, fmt.Errorf("history TTL %s: want more than 0", c.TTL))
	}
	return errors.Join(errs...)
}

// Parse reads PARLEY_HISTORY: "off" (or empty), a number of entries ("20"),
// or entries and a byte bound ("20,32768").
func Parse(s string) (Config, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "off" {
		return Config{}, nil
	}
	n, b, hasBytes := strings.Cut(s, ",")
	var c Config
	var err error
	if c.Entries, err = strconv.Atoi(strings.TrimSpace(n)); err != nil || c.Entries <= 0 {
		return Config{}, fmt.Errorf("want off, a number of entries (20), or entries and a byte bound (20,32768), got %q", s)
	}
	if hasBytes {
		if c.Bytes, err = strconv.Atoi(strings.TrimSpace(b)); err != nil || c.Bytes <= 0 {
			return Config{}, fmt.Errorf("want off, a number of entries (20), or entries and a byte bound (20,32768), got %q", s)
		}
	}
	return c, nil
}

// Size is t's size as kept and as sent: its JSON encoding's bytes.
func Size(t []Entry) int {
	b, _ := json.Marshal(t)
	return len(b)
}

// Merge adds the entries of add that t does not hold yet (by ID), in time
// order (an entry keeps its place among entries of the same time), and
// trims the result to c: the newest c.Entries, then the oldest dropped
// until it fits c.Bytes. An entry that alone is over the bound keeps the
// start of its text (Truncated).
func (c Config) Merge(t []Entry, add ...Entry) []Entry {
	out := slices.Clone(t)
	for _, e := range add {
		if slices.ContainsFunc(out, func(x Entry) bool { return x.ID == e.ID }) {
			continue
		}
		i := len(out)
		for i > 0 && out[i-1].Time.After(e.Time) {
			i--
		}
		out = slices.Insert(out, i, e)
	}
	return c.Trim(out)
}

// Trim bounds t to c, dropping the oldest entries first.
func (c Config) Trim(t []Entry) []Entry {
	c = c.WithDefaults()
	if c.Entries > 0 && len(t) > c.Entries {
		t = t[len(t)-c.Entries:]
	}
	for len(t) > 1 && Size(t) > c.Bytes {
		t = t[1:]
	}
	if len(t) == 1 && Size(t) > c.Bytes {
		t = []Entry{truncate(t[0], c.Bytes)}
	}
	return t
}

// truncate makes e alone encode within limit bytes: its last files are
// left out first (a description of a file weighs less than what the person
// wrote), then its text is cut, at a character boundary, to its longest
// start that fits.
func truncate(e Entry, limit int) Entry {
	e.Truncated = true
	e.Files = slices.Clone(e.Files)
	for len(e.Files) > 0 && Size([]Entry{e}) > limit {
		e.Files = e.Files[:len(e.Files)-1]
	}
	if len(e.Files) == 0 {
		e.Files = nil
	}
	text := e.Text
	at := func(n int) string { return cut(text, n) }
	lo, hi := 0, len(text)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		e.Text = at(mid)
		if Size([]Entry{e}) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	e.Text = at(lo)
	return e
}

// Find is the entry of t whose message the platform knows by messageID:
// a person's message, or a bubble one of whose messages it is.
func Find(t []Entry, messageID string) (Entry, bool) {
	if messageID == "" {
		return Entry{}, false
	}
	for i := len(t) - 1; i >= 0; i-- {
		if slices.Contains(t[i].MessageIDs, messageID) {
			return t[i], true
		}
	}
	return Entry{}, false
}

// Edit sets the text of the person's message messageID to text, marked
// Edited; it reports whether t held it.
func Edit(t []Entry, messageID, text string) ([]Entry, bool) {
	out := slices.Clone(t)
	for i := range out {
		if out[i].Role == RolePerson && out[i].Kind == KindMessage && slices.Contains(out[i].MessageIDs, messageID) {
			out[i].Text, out[i].Edited, out[i].Truncated = text, true, false
			return out, true
		}
	}
	return out, false
}

// Delete removes the person's message messageID; it reports whether t held
// it.
func Delete(t []Entry, messageID string) ([]Entry, bool) {
	out := slices.DeleteFunc(slices.Clone(t), func(e Entry) bool {
		return e.Role == RolePerson && e.Kind == KindMessage && slices.Contains(e.MessageIDs, messageID)
	})
	return out, len(out) != len(t)
}

// Recent is the newest entries of t, skipping those skip names, that fit
// budget bytes encoded: the oldest are dropped first. In t's order.
func Recent(t []Entry, budget int, skip func(Entry) bool) []Entry {
	var keep []Entry
	for _, e := range t {
		if skip == nil || !skip(e) {
			keep = append(keep, e)
		}
	}
	for len(keep) > 0 && Size(keep) > budget {
		keep = keep[1:]
	}
	return keep
}

// Quote is what e says of the message it holds, as a message.Quote.
func Quote(e Entry, messageID string) *message.Quote {
	q := &message.Quote{MessageID: messageID, Text: e.Text, Sender: e.Sender}
	if e.Role != RolePerson {
		q.Parley, q.TurnID = true, e.TurnID
	}
	return q
}
