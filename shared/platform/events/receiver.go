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

	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// GitHub's delivery headers.
const (
	HeaderGitHubSignature = "X-Hub-Signature-256"
	HeaderGitHubDelivery  = "X-GitHub-Delivery"
	HeaderGitHubEvent     = "X-GitHub-Event"
)

// QueryTarget names the query parameter that gives a GitHub delivery its
// target conversation, as a thread key: ?target=telegram:7000000001:42.
const QueryTarget = "target"

// Sources: the Account of an events Event, which scopes its event id.
const (
	// SourceGitHub is the source of every GitHub delivery. A Standard
	// Webhooks payload may not claim it.
	SourceGitHub = "github"
	// DefaultSource is the source of a Standard Webhooks payload that names
	// none.
	DefaultSource = "webhook"
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

var _ ingress.Receiver = (*Receiver)(nil)

// Receiver is the events webhook's receive half.
type Receiver struct {
	// Secrets verify Standard Webhooks requests; a signature by any of them
	// is accepted (list the new and the old one while rotating). Without
	// any, Standard Webhooks requests are refused.
	Secrets []standardwebhooks.Secret
	// Tolerance is how far webhook-timestamp may be from now. Defaults to 5
	// minutes.
	Tolerance time.Duration
	// GitHubSecret verifies X-Hub-Signature-256. Empty: GitHub deliveries
	// are refused.
	GitHubSecret string
	// GitHubTarget is where GitHub deliveries go when the URL has no
	// ?target=. Zero: such deliveries are refused (422).
	GitHubTarget message.Thread
	// Targets lists the platforms an event may target, each with the
	// accounts it may name (nil or empty: any account). A target outside
	// it is refused as unknown (422). Required.
	Targets map[message.Platform][]string
}

// Validate reports every configuration problem at once.
func (r *Receiver) Validate() error {
	var errs []error
	if len(r.Secrets) == 0 && r.GitHubSecret == "" {
		errs = append(errs, errors.New("events: no Standard Webhooks secret and no GitHub secret: every request would be refused"))
	}
	for i, s := range r.Secrets {
		if s.IsZero() {
			errs = append(errs, fmt.Errorf("events: secret %d is empty", i+1))
		}
	}
	if len(r.Targets) == 0 {
		errs = append(errs, errors.New("events: no target platform configured"))
	}
	if r.GitHubTarget != (message.Thread{}) {
		if err := r.checkTarget(r.GitHubTarget); err != nil {
			errs = append(errs, fmt.Errorf("events: GitHub target: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Platform returns message.Events.
func (r *Receiver) Platform() message.Platform { return message.Events }

type scheme int

const (
	schemeNone scheme = iota
	schemeStandard
	schemeGitHub
)

func schemeOf(h http.Header) scheme {
	switch {
	case h.Get(standardwebhooks.HeaderID) != "" || h.Get(standardwebhooks.HeaderSignature) != "" || h.Get(standardwebhooks.HeaderTimestamp) != "":
		return schemeStandard
	case h.Get(HeaderGitHubSignature) != "":
		return schemeGitHub
	}
	return schemeNone
}

// Verify authenticates a request by either scheme.
func (r *Receiver) Verify(req *ingress.Request) error {
	switch schemeOf(req.Header) {
	case schemeStandard:
		return r.verifyStandard(req)
	case schemeGitHub:
		return r.verifyGitHub(req)
	}
	return fmt.Errorf("%w: send webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks) or %s (GitHub)",
		ingress.ErrUnauthorized, HeaderGitHubSignature)
}

func (r *Receiver) verifyStandard(req *ingress.Request) error {
	if len(r.Secrets) == 0 {
		return fmt.Errorf("%w: no Standard Webhooks secret configured", ingress.ErrUnauthorized)
	}
	v := standardwebhooks.Verifier{Secrets: r.Secrets, Tolerance: r.Tolerance}
	_, err := v.Verify(req.Header, req.Body, req.Now)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, standardwebhooks.ErrStale):
		return fmt.Errorf("%w: %w", ingress.ErrStale, err)
	case errors.Is(err, standardwebhooks.ErrBadTimestamp):
		return fmt.Errorf("%w: %w", ingress.ErrMalformed, err)
	}
	return fmt.Errorf("%w: %w", ingress.ErrUnauthorized, err)
}

func (r *Receiver) verifyGitHub(req *ingress.Request) error {
	if r.GitHubSecret == "" {
		return fmt.Errorf("%w: no GitHub secret configured", ingress.ErrUnauthorized)
	}
	got := req.Header.Values(HeaderGitHubSignature)
	hexSig, ok := strings.CutPrefix(got[0], "sha256=")
	sig, err := hex.DecodeString(hexSig)
	if len(got) != 1 || !ok || err != nil || len(sig) != sha256.Size {
		return fmt.Errorf("%w: %s must be sha256=<64 hex digits>", ingress.ErrUnauthorized, HeaderGitHubSignature)
	}
	if !hmac.Equal(sig, githubMAC(r.GitHubSecret, req.Body)) {
		return fmt.Errorf("%w: wrong %s", ingress.ErrUnauthorized, HeaderGitHubSignature)
	}
	return nil
}

func githubMAC(secret string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return m.Sum(nil)
}

// Parse decodes a verified request into one proactive event.
func (r *Receiver) Parse(req *ingress.Request) (ingress.Parsed, error) {
	switch schemeOf(req.Header) {
	case schemeStandard:
		return r.parseStandard(req)
	case schemeGitHub:
		return r.parseGitHub(req)
	}
	return ingress.Parsed{}, fmt.Errorf("%w: no signature headers", ingress.ErrMalformed)
}

// Payload is the JSON body of a Standard Webhooks proactive event.
type Payload struct {
	// ID is optional; when present it must equal webhook-id, which is the
	// event id (the idempotency key the signature covers).
	ID string `json:"id,omitempty"`
	// Source names the sender ("alertmanager", "cron"): 1-64 of a-z 0-9
	// . _ -, starting with a letter or digit. It scopes event ids, and is
	// the event's Account. Defaults to DefaultSource.
	Source string `json:"source,omitempty"`
	// Target is the conversation the agent acts in. Required.
	Target *Target `json:"target"`
	// Text is the content for the agent, at most MaxTextLen bytes of UTF-8.
	// Text or Data is required.
	Text string `json:"text,omitempty"`
	// Data is structured content for the agent: a JSON object of at most
	// MaxDataLen bytes.
	Data json.RawMessage `json:"data,omitempty"`
}

// Target names a conversation: message.Thread's fields.
type Target struct {
	Platform string `json:"platform"`
	Account  string `json:"account"`
	Chat     string `json:"chat"`
	Thread   string `json:"thread,omitempty"`
}

func (r *Receiver) parseStandard(req *ingress.Request) (ingress.Parsed, error) {
	id := req.Header.Get(standardwebhooks.HeaderID)
	if !validID(id) {
		return ingress.Parsed{}, fmt.Errorf("%w: %s must be 1-%d visible ASCII characters", ingress.ErrMalformed, standardwebhooks.HeaderID, MaxIDLen)
	}
	p, err := decodePayload(req.Body)
	if err != nil {
		return ingress.Parsed{}, err
	}
	if p.ID != "" && p.ID != id {
		return ingress.Parsed{}, fmt.Errorf("%w: body id differs from %s", ingress.ErrMalformed, standardwebhooks.HeaderID)
	}
	source := p.Source
	if source == "" {
		source = DefaultSource
	}
	if !validSource(source) {
		return ingress.Parsed{}, fmt.Errorf("%w: source must be 1-%d of a-z 0-9 . _ -, starting with a letter or digit", ingress.ErrMalformed, MaxSourceLen)
	}
	if source == SourceGitHub {
		return ingress.Parsed{}, fmt.Errorf("%w: source %q is reserved for GitHub deliveries", ingress.ErrUnprocessable, SourceGitHub)
	}
	if p.Target == nil {
		return ingress.Parsed{}, fmt.Errorf("%w: target is required", ingress.ErrMalformed)
	}
	th := message.Thread{Platform: message.Platform(p.Target.Platform), Account: p.Target.Account, Chat: p.Target.Chat, Thread: p.Target.Thread}
	if err := r.checkTarget(th); err != nil {
		return ingress.Parsed{}, err
	}
	if len(p.Text) > MaxTextLen || !utf8.ValidString(p.Text) {
		return ingress.Parsed{}, fmt.Errorf("%w: text must be UTF-8 of at most %d bytes", ingress.ErrMalformed, MaxTextLen)
	}
	data, err := decodeData(p.Data)
	if err != nil {
		return ingress.Parsed{}, err
	}
	if strings.TrimSpace(p.Text) == "" && len(data) == 0 {
		return ingress.Parsed{}, fmt.Errorf("%w: text or data is required", ingress.ErrMalformed)
	}
	ts, _ := strconv.ParseInt(req.Header.Get(standardwebhooks.HeaderTimestamp), 10, 64) // verified
	return ingress.Parsed{Events: []message.Event{{
		Platform: message.Events, Account: source, EventID: id, Kind: message.KindProactive,
		Thread: th, Sender: message.Sender{ID: source, Name: source},
		Text: p.Text, Time: time.Unix(ts, 0).UTC(), Data: data,
	}}}, nil
}

// payloadFields and targetFields are the keys a payload may hold.
var (
	payloadFields = []string{"id", "source", "target", "text", "data"}
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
		return p, fmt.Errorf("%w: body: %s", ingress.ErrMalformed, jsonProblem(err))
	}
	return p, nil
}

func decodeObject(b []byte, what string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var m map[string]json.RawMessage
	if err := dec.Decode(&m); err != nil || m == nil {
		if err == nil {
			return nil, fmt.Errorf("%w: %s must be a JSON object", ingress.ErrMalformed, what)
		}
		return nil, fmt.Errorf("%w: %s: %s", ingress.ErrMalformed, what, jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s: trailing data after the JSON object", ingress.ErrMalformed, what)
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
			return fmt.Errorf("%w: unknown field %q", ingress.ErrMalformed, prefix+k)
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
		return nil, fmt.Errorf("%w: data is larger than %d bytes", ingress.ErrMalformed, MaxDataLen)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep large integers exact for the agent
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: data must be a JSON object", ingress.ErrMalformed)
	}
	return m, nil
}

// checkTarget refuses a malformed target (400) and one Parley does not serve
// (422).
func (r *Receiver) checkTarget(t message.Thread) error {
	if !validKeyPart(string(t.Platform)) || !validKeyPart(t.Account) || !validKeyPart(t.Chat) || (t.Thread != "" && !validKeyPart(t.Thread)) {
		return fmt.Errorf("%w: target needs platform, account and chat (and optionally thread): 1-%d visible ASCII characters each, without ':'",
			ingress.ErrMalformed, MaxKeyPart)
	}
	accounts, ok := r.Targets[t.Platform]
	if !ok || t.Platform == message.Events {
		return fmt.Errorf("%w: unknown target: platform %q is not configured", ingress.ErrUnprocessable, t.Platform)
	}
	if len(accounts) > 0 && !slices.Contains(accounts, t.Account) {
		return fmt.Errorf("%w: unknown target: account %q is not configured for %s", ingress.ErrUnprocessable, t.Account, t.Platform)
	}
	return nil
}

// ParseTarget reads a target written as a thread key,
// "platform:account:chat[:thread]".
func ParseTarget(s string) (message.Thread, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 3 || len(parts) > 4 {
		return message.Thread{}, fmt.Errorf("%w: target must be platform:account:chat[:thread]", ingress.ErrMalformed)
	}
	t := message.Thread{Platform: message.Platform(parts[0]), Account: parts[1], Chat: parts[2]}
	if len(parts) == 4 {
		t.Thread = parts[3]
		if t.Thread == "" {
			return message.Thread{}, fmt.Errorf("%w: target's thread part is empty", ingress.ErrMalformed)
		}
	}
	return t, nil
}

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
