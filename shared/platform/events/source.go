package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// Scheme is how a source signs its requests.
type Scheme string

const (
	// SchemeStandard is Standard Webhooks: webhook-id, webhook-timestamp and
	// webhook-signature over "<id>.<timestamp>.<body>". The default.
	SchemeStandard Scheme = "standard"
	// SchemeGitHub is GitHub's X-Hub-Signature-256 over the body alone.
	SchemeGitHub Scheme = "github"
)

// MinSecretBytes is the shortest secret a source may have: a guessable key
// makes every other check moot.
const MinSecretBytes = 24

// Source is one sender the events webhook accepts: its name (the events'
// Account, which scopes their ids), how it signs, the secrets that prove a
// request is its, and the targets it may reach. Nothing a request says on
// its own chooses a source or a target: the secret does, and the operator's
// configuration.
type Source struct {
	Name    string
	Scheme  Scheme
	Secrets []standardwebhooks.Secret
	// Targets are the conversations the source may reach. A Standard
	// Webhooks payload names its target, which must match one of them; a
	// GitHub delivery cannot, and goes to the one target its source has.
	Targets []Pattern
}

// Pattern is a target a source may reach: a thread key, whose last part may
// be "*" for "any from here on". "telegram:7000000001:-1001000000001" is that
// chat's main timeline, "telegram:7000000001:-1001000000001:77" one forum
// topic, "…:-1001000000001:*" the chat and every thread in it,
// "telegram:7000000001:*" every chat of that bot. The account is never a
// wildcard.
type Pattern struct {
	Thread message.Thread
	// AnyChat and AnyThread are the trailing "*".
	AnyChat, AnyThread bool
}

// String is the pattern as written.
func (p Pattern) String() string {
	switch {
	case p.AnyChat:
		return string(p.Thread.Platform) + ":" + p.Thread.Account + ":*"
	case p.AnyThread:
		return p.Thread.Key() + ":*"
	}
	return p.Thread.Key()
}

// Match reports whether t, canonical, is one of the pattern's targets.
func (p Pattern) Match(t message.Thread) bool {
	if t.Platform != p.Thread.Platform || t.Account != p.Thread.Account {
		return false
	}
	switch {
	case p.AnyChat:
		return true
	case p.AnyThread:
		return t.Chat == p.Thread.Chat
	}
	return t.Chat == p.Thread.Chat && t.Thread == p.Thread.Thread
}

// Exact reports whether the pattern names one conversation.
func (p Pattern) Exact() bool { return !p.AnyChat && !p.AnyThread }

// ParsePattern reads a pattern and puts its fixed parts in canonical form
// with canon (the target's platform's own rules; nil: the platform is not
// one Parley sends on).
func ParsePattern(s string, canon platform.Canonicalizer) (Pattern, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 3 || len(parts) > 4 {
		return Pattern{}, fmt.Errorf("target %q: want platform:account:chat[:thread], whose last part may be *", s)
	}
	for i, x := range parts {
		switch {
		case x == "*" && (i < 2 || i != len(parts)-1):
			return Pattern{}, fmt.Errorf("target %q: only the last part may be *, and never the account", s)
		case x != "*" && !validKeyPart(x):
			return Pattern{}, fmt.Errorf("target %q: each part is 1-%d visible ASCII characters", s, MaxKeyPart)
		}
	}
	var p Pattern
	t := message.Thread{Platform: message.Platform(parts[0]), Account: parts[1], Chat: parts[2]}
	switch {
	case len(parts) == 3 && parts[2] == "*":
		p.AnyChat, t.Chat = true, ""
	case len(parts) == 4 && parts[3] == "*":
		p.AnyThread = true
	case len(parts) == 4:
		t.Thread = parts[3]
	}
	if canon == nil || t.Platform == message.Events {
		return Pattern{}, fmt.Errorf("target %q: %q is not a chat platform Parley is configured to send on", s, t.Platform)
	}
	c, err := canon(t, p.AnyChat)
	if err != nil {
		return Pattern{}, fmt.Errorf("target %q: %w", s, err)
	}
	p.Thread = c
	return p, nil
}

// sourcesJSON and secretsJSON are PARLEY_EVENTS_SOURCES and
// PARLEY_EVENTS_SECRETS as written.
type sourceJSON struct {
	Scheme  Scheme   `json:"scheme,omitempty"`
	Targets []string `json:"targets"`
}

// ParseSources builds the sources from their configuration:
//
//   - sources is PARLEY_EVENTS_SOURCES, a JSON object of source names to
//     {"scheme": "standard"|"github", "targets": [patterns]} (scheme
//     defaults to standard);
//   - secrets is PARLEY_EVENTS_SECRETS, a JSON object of source names to a
//     secret or a list of secrets (the new one first while rotating), each
//     "whsec_<base64>" or a plain string of at least MinSecretBytes bytes;
//   - githubSecret and githubTarget are GITHUB_WEBHOOK_SECRET and
//     PARLEY_GITHUB_TARGET: a shorthand for a source named "github" with the
//     GitHub scheme and that one target.
//
// canon maps each chat platform Parley sends on to its platform.Canonicalizer. Every
// problem is reported, naming the variable and the source; secrets are never
// quoted.
func ParseSources(sources, secrets, githubSecret, githubTarget string, canon map[message.Platform]platform.Canonicalizer) ([]Source, error) {
	var errs []error
	decls := map[string]sourceJSON{}
	if strings.TrimSpace(sources) != "" {
		if err := strictJSON(sources, &decls); err != nil {
			errs = append(errs, fmt.Errorf("PARLEY_EVENTS_SOURCES: want a JSON object of source names to {\"targets\": [...]}: %v", err))
		}
	}
	keys := map[string][]string{}
	if strings.TrimSpace(secrets) != "" {
		var raw map[string]json.RawMessage
		if !strings.HasPrefix(strings.TrimSpace(secrets), "{") || json.Unmarshal([]byte(secrets), &raw) != nil {
			// Never echo the value: it is a secret.
			errs = append(errs, errors.New(`PARLEY_EVENTS_SECRETS: want a JSON object of source names to a secret or a list of secrets, {"alertmanager": "whsec_…"} (a comma-separated list is no longer read: a secret may hold a comma)`))
		}
		for name, v := range raw {
			var one string
			var many []string
			switch {
			case json.Unmarshal(v, &one) == nil:
				many = []string{one}
			case json.Unmarshal(v, &many) == nil && len(many) > 0:
			default:
				errs = append(errs, fmt.Errorf("PARLEY_EVENTS_SECRETS: source %q: want a secret or a non-empty list of secrets", name))
				continue
			}
			keys[name] = many
		}
	}
	if githubSecret != "" || githubTarget != "" {
		if _, ok := decls[SourceGitHub]; ok {
			errs = append(errs, fmt.Errorf("GITHUB_WEBHOOK_SECRET and PARLEY_GITHUB_TARGET declare the source %q, which PARLEY_EVENTS_SOURCES declares too: keep one", SourceGitHub))
		}
		switch {
		case githubSecret == "":
			errs = append(errs, errors.New("PARLEY_GITHUB_TARGET is set but GITHUB_WEBHOOK_SECRET is not"))
		case githubTarget == "":
			errs = append(errs, errors.New("GITHUB_WEBHOOK_SECRET is set but PARLEY_GITHUB_TARGET is not: a GitHub delivery cannot name its target, so the source needs one"))
		}
		decls[SourceGitHub] = sourceJSON{Scheme: SchemeGitHub, Targets: []string{githubTarget}}
		keys[SourceGitHub] = append(keys[SourceGitHub], githubSecret)
	}

	names := make([]string, 0, len(decls))
	for name := range decls {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []Source
	for _, name := range names {
		d := decls[name]
		src := Source{Name: name, Scheme: d.Scheme}
		if src.Scheme == "" {
			src.Scheme = SchemeStandard
		}
		if !validSource(name) {
			errs = append(errs, fmt.Errorf("PARLEY_EVENTS_SOURCES: source name %q: want 1-%d of a-z 0-9 . _ -, starting with a letter or digit", name, MaxSourceLen))
			continue
		}
		if src.Scheme != SchemeStandard && src.Scheme != SchemeGitHub {
			errs = append(errs, fmt.Errorf("PARLEY_EVENTS_SOURCES: source %q: scheme %q: want standard or github", name, src.Scheme))
			continue
		}
		if len(keys[name]) == 0 {
			errs = append(errs, fmt.Errorf("source %q has no secret: add it to PARLEY_EVENTS_SECRETS", name))
		}
		for i, k := range keys[name] {
			sec, err := standardwebhooks.ParseSecret(k)
			if err != nil {
				errs = append(errs, fmt.Errorf("source %q: secret %d: %w", name, i+1, err))
				continue
			}
			if sec.Len() < MinSecretBytes {
				errs = append(errs, fmt.Errorf("source %q: secret %d is %d bytes; at least %d are required", name, i+1, sec.Len(), MinSecretBytes))
				continue
			}
			src.Secrets = append(src.Secrets, sec)
		}
		if len(d.Targets) == 0 {
			errs = append(errs, fmt.Errorf("source %q has no targets: list the conversations it may reach", name))
		}
		for _, ts := range d.Targets {
			platform, _, _ := strings.Cut(ts, ":")
			p, err := ParsePattern(ts, canon[message.Platform(platform)])
			if err != nil {
				errs = append(errs, fmt.Errorf("source %q: %w", name, err))
				continue
			}
			src.Targets = append(src.Targets, p)
		}
		if src.Scheme == SchemeGitHub && (len(src.Targets) != 1 || !src.Targets[0].Exact()) {
			errs = append(errs, fmt.Errorf("source %q (GitHub): give exactly one target, a thread key without *: a delivery cannot name its target", name))
		}
		out = append(out, src)
	}
	for name := range keys {
		if _, ok := decls[name]; !ok {
			errs = append(errs, fmt.Errorf("PARLEY_EVENTS_SECRETS names the source %q, which PARLEY_EVENTS_SOURCES does not declare", name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		// All or nothing: a half-read configuration serves no one.
		return nil, err
	}
	return out, nil
}

// strictJSON decodes one JSON value into v, refusing unknown fields.
func strictJSON(s string, v any) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}
