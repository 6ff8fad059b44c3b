package agentapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/envelope"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// A send's event names its thread as its account: the idempotency key (its
// EventID) is unique per thread, so one key used in two threads is two
// sends, and the same key and thread is the same send.

// Relations a send may name; the first is the default.
var relations = []string{"followup", "broadcast", "system"}

// checkIdempotencyKey says what is wrong with s as an idempotency key, 1
// to 128 of A-Z a-z 0-9 . _ : -, or nil.
func checkIdempotencyKey(s string) error {
	const want = "1-128 of A-Z a-z 0-9 . _ : -"
	if len(s) < 1 || len(s) > 128 {
		return fmt.Errorf("%w: idempotency_key has %d characters: want %s", ErrBadPost, utf8.RuneCountInString(s), want)
	}
	for i, c := range s {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return fmt.Errorf("%w: idempotency_key has %q at byte %d: want %s", ErrBadPost, c, i, want)
		}
	}
	return nil
}

// SendReceiver is the receive half of POST /send, an agent's own message
// into a thread: signed with the agent secret, scoped to the threads
// PARLEY_SEND_TARGETS allows, and checked against the envelope's limits
// before anything is written. The webhook core dedupes it on its
// idempotency key for the dedupe TTL, triages it when asked, and enqueues
// it in its thread's inbound group, so it is delivered in order with the
// thread's replies.
type SendReceiver struct {
	Verifier standardwebhooks.Verifier
	// Targets are the threads a send may reach (PARLEY_SEND_TARGETS).
	Targets []events.Pattern
	// Canon puts a thread key's parts in each platform's canonical form.
	Canon        map[message.Platform]platform.Canonicalizer
	Envelope     envelope.Config
	Capabilities func(message.Platform) (message.Capabilities, bool)
	// Private tells a one-to-one chat from a group by its thread, and names
	// the person in it (registry.Private). A question into a group needs an
	// owner; in a private chat the person owns it. Nil: every thread is a
	// group.
	Private func(message.Thread) (person string, private bool)
	Now     func() time.Time
}

// Platform is Parley: a send is Parley's own event on the thread it names.
func (r *SendReceiver) Platform() message.Platform { return message.Parley }

// Verify checks the agent's Standard Webhooks signature on the raw body.
func (r *SendReceiver) Verify(req *platform.Request) error {
	if _, err := r.Verifier.Verify(req.Header, req.Body, r.now()); err != nil {
		if errors.Is(err, standardwebhooks.ErrStale) {
			return fmt.Errorf("%w: %w", platform.ErrStale, err)
		}
		return fmt.Errorf("%w: %w", platform.ErrUnauthorized, err)
	}
	return nil
}

// SendBody is a decoded POST /send body.
type SendBody struct {
	ThreadKey      string
	IdempotencyKey string
	Relation       string
	Triage         bool
	// Owner is who may answer a question the send asks.
	Owner string
	// ContentType and Body are the reply: an envelope or text.
	ContentType string
	Body        []byte
}

// ParseSend decodes a POST /send body: thread_key, idempotency_key, exactly
// one of envelope (an object) and text, and optionally relation, triage and
// owner. Unknown fields are refused.
func ParseSend(body []byte) (SendBody, error) {
	var raw struct {
		ThreadKey      *string         `json:"thread_key"`
		IdempotencyKey *string         `json:"idempotency_key"`
		Envelope       json.RawMessage `json:"envelope"`
		Text           *string         `json:"text"`
		Relation       *string         `json:"relation"`
		Triage         *bool           `json:"triage"`
		Owner          *string         `json:"owner"`
	}
	if err := decodeStrict(body, &raw); err != nil {
		return SendBody{}, err
	}
	s := SendBody{Relation: relations[0]}
	switch {
	case raw.ThreadKey == nil || *raw.ThreadKey == "":
		return SendBody{}, fmt.Errorf("%w: thread_key is required", ErrBadPost)
	case raw.IdempotencyKey == nil:
		return SendBody{}, fmt.Errorf("%w: idempotency_key is required: 1-128 of A-Z a-z 0-9 . _ : -", ErrBadPost)
	case checkIdempotencyKey(*raw.IdempotencyKey) != nil:
		return SendBody{}, checkIdempotencyKey(*raw.IdempotencyKey)
	case raw.Relation != nil && !contains(relations, *raw.Relation):
		return SendBody{}, fmt.Errorf("%w: relation must be followup, broadcast or system", ErrBadPost)
	case raw.Owner != nil && !events.ValidOwner(*raw.Owner):
		return SendBody{}, fmt.Errorf("%w: owner must be 1-%d visible ASCII characters, a user id on the thread's platform", ErrBadPost, events.MaxOwnerLen)
	}
	if raw.Owner != nil {
		s.Owner = *raw.Owner
	}
	s.ThreadKey, s.IdempotencyKey = *raw.ThreadKey, *raw.IdempotencyKey
	if raw.Relation != nil {
		s.Relation = *raw.Relation
	}
	s.Triage = raw.Triage != nil && *raw.Triage
	var err error
	s.ContentType, s.Body, err = content(raw.Envelope, raw.Text)
	return s, err
}

// content is a body's reply: its envelope or its text, exactly one.
func content(env json.RawMessage, text *string) (string, []byte, error) {
	switch {
	case text != nil && env != nil:
		return "", nil, fmt.Errorf("%w: give envelope or text, not both", ErrBadPost)
	case text != nil:
		if *text == "" {
			return "", nil, fmt.Errorf("%w: text is empty", ErrBadPost)
		}
		return "text/plain; charset=utf-8", []byte(*text), nil
	case env == nil || bytes.Equal(bytes.TrimSpace(env), []byte("null")):
		return "", nil, fmt.Errorf("%w: envelope or text is required", ErrBadPost)
	case env[0] != '{':
		return "", nil, fmt.Errorf("%w: envelope must be an object", ErrBadPost)
	}
	return "application/json", []byte(env), nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// Parse turns a verified send into its event, or refuses it: 400 for a
// malformed body or thread key, 403 for a thread no target allows, 422 for
// a reply over the envelope's limits.
func (r *SendReceiver) Parse(req *platform.Request) (platform.Parsed, error) {
	s, err := ParseSend(req.Body)
	if err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: %w", platform.ErrMalformed, err)
	}
	t, err := events.ParseTarget(s.ThreadKey)
	if err != nil {
		return platform.Parsed{}, fmt.Errorf("thread_key: %w", err)
	}
	canon, ok := r.Canon[t.Platform]
	if !ok {
		return platform.Parsed{}, fmt.Errorf("%w: thread_key: %q is not a chat platform Parley sends on", platform.ErrForbidden, t.Platform)
	}
	if t, err = canon(t, false); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: thread_key: %w", platform.ErrMalformed, err)
	}
	allowed := false
	for _, p := range r.Targets {
		allowed = allowed || p.Match(t)
	}
	if !allowed {
		return platform.Parsed{}, fmt.Errorf("%w: thread_key %s is not among PARLEY_SEND_TARGETS", platform.ErrForbidden, t.Key())
	}
	caps, ok := r.Capabilities(t.Platform)
	if !ok {
		return platform.Parsed{}, fmt.Errorf("%w: thread_key: %q is not configured", platform.ErrForbidden, t.Platform)
	}
	plan, err := envelope.Build(envelope.Reply{Body: s.Body, ContentType: s.ContentType}, r.Envelope, caps)
	var limit *envelope.LimitError
	switch {
	// The codes /reply refuses the same reply with.
	case errors.As(err, &limit):
		return platform.Parsed{}, platform.Refusal("over_limit", fmt.Errorf("%w: %s: %d, at most %d", platform.ErrUnprocessable, limit.Limit, limit.Got, limit.Max))
	case err != nil:
		return platform.Parsed{}, platform.Refusal("invalid_reply", fmt.Errorf("%w: %w", platform.ErrUnprocessable, err))
	case plan.Problem != nil:
		return platform.Parsed{}, platform.Refusal("invalid_envelope", fmt.Errorf("%w: %w", platform.ErrUnprocessable, plan.Problem))
	}
	owner := s.Owner
	if plan.Next.Type == envelope.NextAsk && owner == "" {
		// A question nobody owns is an approval anyone in a group can give.
		person, private := "", false
		if r.Private != nil {
			person, private = r.Private(t)
		}
		if !private {
			return platform.Parsed{}, fmt.Errorf("%w: a question into a group chat needs an owner: name who may answer it in owner", platform.ErrUnprocessable)
		}
		owner = person // the one person in the chat; unnamed: whoever is in it
	}
	ev := message.Event{
		Platform: message.Parley, Account: t.Key(), EventID: s.IdempotencyKey, Kind: message.KindSend,
		Thread: t, Time: r.now(), Owner: owner,
		Send: &message.Send{ContentType: s.ContentType, Body: string(s.Body), Relation: s.Relation, Triage: s.Triage},
	}
	return platform.Parsed{Events: []message.Event{ev}, Intents: true}, nil
}

var _ platform.Digester = (*SendReceiver)(nil)

// Digest fingerprints what a send's idempotency key stands for: its
// content, its relation, whether it is triaged, and who owns a question it
// asks. The same key with any of them changed is another send, refused
// (409), never answered as a duplicate.
func (r *SendReceiver) Digest(ev message.Event) string {
	if ev.Send == nil {
		return ""
	}
	b, _ := json.Marshal(struct {
		Send  message.Send `json:"send"`
		Owner string       `json:"owner"`
	}{*ev.Send, ev.Owner})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func (r *SendReceiver) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
