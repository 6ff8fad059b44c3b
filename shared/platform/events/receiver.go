package events

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// GitHub's delivery headers.
const (
	HeaderGitHubSignature = "X-Hub-Signature-256"
	HeaderGitHubDelivery  = "X-GitHub-Delivery"
	HeaderGitHubEvent     = "X-GitHub-Event"
)

// QueryTarget is the query parameter older configurations used to give a
// GitHub delivery its target. GitHub's signature does not cover the URL, so
// it is refused: a source's target is configured.
const QueryTarget = "target"

// Sources: the Account of an events Event, which scopes its event id.
const (
	// SourceGitHub is the source GITHUB_WEBHOOK_SECRET declares.
	SourceGitHub = "github"
)

// Limits on a payload's fields, in bytes.
const (
	MaxIDLen     = 256
	MaxSourceLen = 64
	MaxKeyPart   = 128
	MaxTextLen   = 32 << 10
	MaxDataLen   = 256 << 10
)

// Ignored reasons.
const reasonPing = "ping"

var _ platform.Receiver = (*Receiver)(nil)

// Receiver is the events webhook's receive half. A request is a source's
// when that source's secret verifies it; it may reach only the targets that
// source was configured for.
type Receiver struct {
	// Sources are the senders accepted (ParseSources). None: every
	// request is refused.
	Sources []Source
	// Tolerance is how far webhook-timestamp may be from now. Defaults to 5
	// minutes.
	Tolerance time.Duration
	// Canonical puts a payload's target in its platform's canonical form,
	// per chat platform Parley sends on. A target on any other platform is
	// refused.
	Canonical map[message.Platform]platform.Canonicalizer
}

// Validate reports every configuration problem at once.
func (r *Receiver) Validate() error {
	var errs []error
	for i, s := range r.Sources {
		if len(s.Secrets) == 0 || len(s.Targets) == 0 {
			errs = append(errs, fmt.Errorf("events: source %q needs a secret and a target", s.Name))
		}
		for _, o := range r.Sources[:i] {
			if o.Name == s.Name {
				errs = append(errs, fmt.Errorf("events: source %q is declared twice", s.Name))
			}
			if o.Scheme == SchemeGitHub && s.Scheme == SchemeGitHub && shareSecret(o, s) {
				// A delivery verified by both could go to either target.
				errs = append(errs, fmt.Errorf("events: GitHub sources %q and %q share a secret: give each its own", o.Name, s.Name))
			}
		}
	}
	return errors.Join(errs...)
}

func shareSecret(a, b Source) bool {
	for _, x := range a.Secrets {
		for _, y := range b.Secrets {
			if x.Equal(y) {
				return true
			}
		}
	}
	return false
}

// Platform returns message.Events.
func (r *Receiver) Platform() message.Platform { return message.Events }

func schemeOf(h http.Header) Scheme {
	switch {
	case h.Get(standardwebhooks.HeaderID) != "" || h.Get(standardwebhooks.HeaderSignature) != "" || h.Get(standardwebhooks.HeaderTimestamp) != "":
		return SchemeStandard
	case h.Get(HeaderGitHubSignature) != "":
		return SchemeGitHub
	}
	return ""
}

// Verify authenticates a request by either scheme and records, in
// req.Verified, the sources whose secrets verified it.
func (r *Receiver) Verify(req *platform.Request) error {
	var (
		verified []*Source
		err      error
	)
	switch schemeOf(req.Header) {
	case SchemeStandard:
		verified, err = r.verifyStandard(req)
	case SchemeGitHub:
		verified, err = r.verifyGitHub(req)
	default:
		return fmt.Errorf("%w: send webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks) or %s (GitHub)",
			platform.ErrUnauthorized, HeaderGitHubSignature)
	}
	if err != nil {
		return err
	}
	req.Verified = verified
	return nil
}

func (r *Receiver) verifyStandard(req *platform.Request) ([]*Source, error) {
	var verified []*Source
	var stale error
	any := false
	for i := range r.Sources {
		s := &r.Sources[i]
		if s.Scheme != SchemeStandard {
			continue
		}
		any = true
		v := standardwebhooks.Verifier{Secrets: s.Secrets, Tolerance: r.Tolerance}
		_, err := v.Verify(req.Header, req.Body, req.Now)
		switch {
		case err == nil:
			verified = append(verified, s)
		case errors.Is(err, standardwebhooks.ErrStale):
			stale = fmt.Errorf("%w: %w", platform.ErrStale, err)
		case errors.Is(err, standardwebhooks.ErrBadTimestamp):
			return nil, fmt.Errorf("%w: %w", platform.ErrMalformed, err)
		}
	}
	switch {
	case !any:
		return nil, fmt.Errorf("%w: no Standard Webhooks source is configured", platform.ErrUnauthorized)
	case len(verified) > 0:
		return verified, nil
	case stale != nil:
		return nil, stale
	}
	return nil, fmt.Errorf("%w: no configured source's secret matches webhook-signature", platform.ErrUnauthorized)
}

func (r *Receiver) verifyGitHub(req *platform.Request) ([]*Source, error) {
	got := req.Header.Values(HeaderGitHubSignature)
	hexSig, ok := strings.CutPrefix(got[0], "sha256=")
	sig, err := hex.DecodeString(hexSig)
	if len(got) != 1 || !ok || err != nil || len(sig) != sha256.Size {
		return nil, fmt.Errorf("%w: %s must be sha256=<64 hex digits>", platform.ErrUnauthorized, HeaderGitHubSignature)
	}
	var verified []*Source
	any := false
	for i := range r.Sources {
		s := &r.Sources[i]
		if s.Scheme != SchemeGitHub {
			continue
		}
		any = true
		for _, k := range s.Secrets {
			if hmac.Equal(sig, k.MAC(req.Body)) {
				verified = append(verified, s)
				break
			}
		}
	}
	switch {
	case !any:
		return nil, fmt.Errorf("%w: no GitHub source is configured", platform.ErrUnauthorized)
	case len(verified) == 0:
		return nil, fmt.Errorf("%w: no configured GitHub source's secret matches %s", platform.ErrUnauthorized, HeaderGitHubSignature)
	}
	return verified, nil
}

// Parse decodes a verified request into one proactive event.
func (r *Receiver) Parse(req *platform.Request) (platform.Parsed, error) {
	verified, _ := req.Verified.([]*Source)
	if len(verified) == 0 {
		return platform.Parsed{}, fmt.Errorf("%w: request not verified", platform.ErrUnauthorized)
	}
	switch schemeOf(req.Header) {
	case SchemeStandard:
		return r.parseStandard(req, verified)
	case SchemeGitHub:
		return r.parseGitHub(req, verified)
	}
	return platform.Parsed{}, fmt.Errorf("%w: no signature headers", platform.ErrMalformed)
}

// target canonicalizes t and checks it against src's targets.
func (r *Receiver) target(src *Source, t message.Thread) (message.Thread, error) {
	if !validKeyPart(string(t.Platform)) || !validKeyPart(t.Account) || !validKeyPart(t.Chat) || (t.Thread != "" && !validKeyPart(t.Thread)) {
		return message.Thread{}, fmt.Errorf("%w: target needs platform, account and chat (and optionally thread): 1-%d visible ASCII characters each, without ':'",
			platform.ErrMalformed, MaxKeyPart)
	}
	canon, ok := r.Canonical[t.Platform]
	if !ok || t.Platform == message.Events {
		return message.Thread{}, fmt.Errorf("%w: source %q may not reach %s: not a platform Parley sends on here", platform.ErrForbidden, src.Name, t.Platform)
	}
	c, err := canon(t, false)
	if err != nil {
		return message.Thread{}, fmt.Errorf("%w: target: %v", platform.ErrMalformed, err)
	}
	for _, p := range src.Targets {
		if p.Match(c) {
			return c, nil
		}
	}
	return message.Thread{}, fmt.Errorf("%w: source %q may not reach %s: it is outside the targets configured for its secret", platform.ErrForbidden, src.Name, c.Key())
}

// Payload is the JSON body of a Standard Webhooks proactive event.
type Payload struct {
	// ID is optional; when present it must equal webhook-id, which is the
	// event id (the idempotency key the signature covers).
	ID string `json:"id,omitempty"`
	// Source names the sender ("alertmanager", "cron"). It is optional:
	// the source is the one whose secret signed the request, and a payload
	// may only name one of those (several sources may share a secret). It
	// scopes event ids, and is the event's Account.
	Source string `json:"source,omitempty"`
	// Target is the conversation the agent acts in, one of those its
	// source was configured to reach. Required.
	Target *Target `json:"target"`
	// Text is the content for the agent, at most MaxTextLen bytes of UTF-8.
	// Text or Data is required.
	Text string `json:"text,omitempty"`
	// Data is structured content for the agent: a JSON object of at most
	// MaxDataLen bytes.
	Data json.RawMessage `json:"data,omitempty"`
	// Owner, when set, is who may answer a question the agent asks in this
	// turn: a user id on the target's platform (the Telegram user id, the
	// Slack user id). Unset: the person of a one-to-one chat; in a group
	// the question is not asked (package turn). At most MaxOwnerLen bytes.
	Owner string `json:"owner,omitempty"`
}

// MaxOwnerLen bounds Payload.Owner.
const MaxOwnerLen = 64

// Target names a conversation: message.Thread's fields.
type Target struct {
	Platform string `json:"platform"`
	Account  string `json:"account"`
	Chat     string `json:"chat"`
	Thread   string `json:"thread,omitempty"`
}

func (r *Receiver) parseStandard(req *platform.Request, verified []*Source) (platform.Parsed, error) {
	id := req.Header.Get(standardwebhooks.HeaderID)
	if !validID(id) {
		return platform.Parsed{}, fmt.Errorf("%w: %s must be 1-%d visible ASCII characters", platform.ErrMalformed, standardwebhooks.HeaderID, MaxIDLen)
	}
	p, err := decodePayload(req.Body)
	if err != nil {
		return platform.Parsed{}, err
	}
	if p.ID != "" && p.ID != id {
		return platform.Parsed{}, fmt.Errorf("%w: body id differs from %s", platform.ErrMalformed, standardwebhooks.HeaderID)
	}
	// The source is the one whose secret verified the request; a payload
	// may only choose among those (sources that share a secret).
	var src *Source
	switch {
	case p.Source != "":
		for _, v := range verified {
			if v.Name == p.Source {
				src = v
			}
		}
		if src == nil {
			return platform.Parsed{}, fmt.Errorf("%w: source %q is not one this request's secret belongs to", platform.ErrForbidden, truncate(p.Source, MaxSourceLen))
		}
	case len(verified) == 1:
		src = verified[0]
	default:
		return platform.Parsed{}, fmt.Errorf("%w: several sources share this secret: name yours in \"source\"", platform.ErrMalformed)
	}
	if p.Target == nil {
		return platform.Parsed{}, fmt.Errorf("%w: target is required", platform.ErrMalformed)
	}
	th, err := r.target(src, message.Thread{Platform: message.Platform(p.Target.Platform), Account: p.Target.Account, Chat: p.Target.Chat, Thread: p.Target.Thread})
	if err != nil {
		return platform.Parsed{}, err
	}
	if len(p.Text) > MaxTextLen || !utf8.ValidString(p.Text) {
		return platform.Parsed{}, fmt.Errorf("%w: text must be UTF-8 of at most %d bytes", platform.ErrMalformed, MaxTextLen)
	}
	data, err := decodeData(p.Data)
	if err != nil {
		return platform.Parsed{}, err
	}
	if strings.TrimSpace(p.Text) == "" && len(data) == 0 {
		return platform.Parsed{}, fmt.Errorf("%w: text or data is required", platform.ErrMalformed)
	}
	if p.Owner != "" && !ValidOwner(p.Owner) {
		return platform.Parsed{}, fmt.Errorf("%w: owner must be 1-%d visible ASCII characters", platform.ErrMalformed, MaxOwnerLen)
	}
	ts, _ := strconv.ParseInt(req.Header.Get(standardwebhooks.HeaderTimestamp), 10, 64) // verified
	return platform.Parsed{Events: []message.Event{{
		Platform: message.Events, Account: src.Name, EventID: id, Kind: message.KindProactive,
		Thread: th, Sender: message.Sender{ID: src.Name, Name: src.Name},
		Text: p.Text, Time: time.Unix(ts, 0).UTC(), Data: data, Owner: p.Owner,
	}}}, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "?")
}

// payloadFields and targetFields are the keys a payload may hold.
var (
	payloadFields = []string{"id", "source", "target", "text", "data", "owner"}
	targetFields  = []string{"platform", "account", "chat", "thread"}
)

// decodePayload decodes exactly one JSON object into a Payload, refusing
// unknown fields (named in the error: they are the sender's own keys) and
// trailing data.
func decodePayload(body []byte) (Payload, error) {
	var p Payload
	fields, err := decodeObject(body, "body")
	if err != nil {
		return p, err
	}
	if err := onlyFields(fields, payloadFields, ""); err != nil {
		return p, err
	}
	if raw, ok := fields["target"]; ok && string(raw) != "null" {
		tf, err := decodeObject(raw, "target")
		if err != nil {
			return p, err
		}
		if err := onlyFields(tf, targetFields, "target."); err != nil {
			return p, err
		}
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return p, fmt.Errorf("%w: body: %s", platform.ErrMalformed, jsonProblem(err))
	}
	return p, nil
}

func decodeObject(b []byte, what string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var m map[string]json.RawMessage
	if err := dec.Decode(&m); err != nil || m == nil {
		if err == nil {
			return nil, fmt.Errorf("%w: %s must be a JSON object", platform.ErrMalformed, what)
		}
		return nil, fmt.Errorf("%w: %s: %s", platform.ErrMalformed, what, jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s: trailing data after the JSON object", platform.ErrMalformed, what)
	}
	return m, nil
}

func onlyFields(m map[string]json.RawMessage, known []string, prefix string) error {
	for k := range m {
		if !slices.Contains(known, k) {
			if len(k) > 64 || !utf8.ValidString(k) {
				k = k[:min(len(k), 64)]
				k = strings.ToValidUTF8(k, "?")
			}
			return fmt.Errorf("%w: unknown field %q", platform.ErrMalformed, prefix+k)
		}
	}
	return nil
}

// jsonProblem describes a decoding error without quoting the body.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return "must be a JSON object"
		}
		return fmt.Sprintf("field %q must be %s", typ.Field, typ.Type)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "not a complete JSON object"
	}
	return "not a JSON object of the expected shape"
}

func decodeData(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if len(raw) > MaxDataLen {
		return nil, fmt.Errorf("%w: data is larger than %d bytes", platform.ErrMalformed, MaxDataLen)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep large integers exact for the agent
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: data must be a JSON object", platform.ErrMalformed)
	}
	return m, nil
}

// ParseTarget reads a target written as a thread key,
// "platform:account:chat[:thread]".
func ParseTarget(s string) (message.Thread, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 3 || len(parts) > 4 {
		return message.Thread{}, fmt.Errorf("%w: target must be platform:account:chat[:thread]", platform.ErrMalformed)
	}
	t := message.Thread{Platform: message.Platform(parts[0]), Account: parts[1], Chat: parts[2]}
	if len(parts) == 4 {
		t.Thread = parts[3]
		if t.Thread == "" {
			return message.Thread{}, fmt.Errorf("%w: target's thread part is empty", platform.ErrMalformed)
		}
	}
	return t, nil
}

// ValidOwner reports whether s may name a question's owner: 1 to
// MaxOwnerLen visible ASCII characters, a user id on the target platform.
func ValidOwner(s string) bool { return len(s) <= MaxOwnerLen && validID(s) }

func validID(s string) bool {
	return len(s) >= 1 && len(s) <= MaxIDLen && visible(s)
}

func validKeyPart(s string) bool {
	return len(s) >= 1 && len(s) <= MaxKeyPart && visible(s) && !strings.Contains(s, ":")
}

func visible(s string) bool {
	for i := range len(s) {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

func validSource(s string) bool {
	if len(s) < 1 || len(s) > MaxSourceLen {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}
