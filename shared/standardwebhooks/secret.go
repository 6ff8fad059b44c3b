package standardwebhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// SecretPrefix marks a secret in the Standard Webhooks serialization: the rest
// is the base64-encoded key.
const SecretPrefix = "whsec_"

// ErrBadSecret is returned by ParseSecret. Its message never holds the secret.
var ErrBadSecret = errors.New("invalid webhook secret")

const redacted = "[redacted]"

// Secret is an HMAC key. Its zero value holds no key and signs nothing useful;
// build one with ParseSecret. It never prints its key: fmt (every verb), slog
// and encoding/json all show "[redacted]".
type Secret struct {
	key []byte
}

// ParseSecret reads a secret as configured. "whsec_<base64>" (the Standard
// Webhooks form, padded or not) decodes to its key bytes; any other string is
// used as the key byte for byte, so a plain PARLEY_AGENT_SECRET works.
//
// It refuses an empty key, a whsec_ secret whose rest is not base64, and
// surrounding whitespace (almost always a stray newline from a file or a
// shell, which would silently change the key).
func ParseSecret(s string) (Secret, error) {
	if s == "" {
		return Secret{}, fmt.Errorf("%w: empty", ErrBadSecret)
	}
	if strings.TrimSpace(s) != s {
		return Secret{}, fmt.Errorf("%w: surrounding whitespace", ErrBadSecret)
	}
	rest, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return Secret{key: []byte(s)}, nil
	}
	key, err := base64.StdEncoding.Strict().DecodeString(rest)
	if err != nil {
		// The Python reference library accepts unpadded base64 too.
		key, err = base64.RawStdEncoding.Strict().DecodeString(rest)
	}
	if err != nil {
		// Not %w: base64.CorruptInputError is harmless, but keep the
		// chain free of anything derived from the secret.
		return Secret{}, fmt.Errorf("%w: the part after %s is not base64", ErrBadSecret, SecretPrefix)
	}
	if len(key) == 0 {
		return Secret{}, fmt.Errorf("%w: empty key after %s", ErrBadSecret, SecretPrefix)
	}
	return Secret{key: key}, nil
}

// IsZero reports whether s holds no key (it was never parsed).
func (s Secret) IsZero() bool { return len(s.key) == 0 }

// Equal reports whether two secrets hold the same key, in constant time.
func (s Secret) Equal(o Secret) bool { return hmac.Equal(s.key, o.key) }

// Len is the key's length in bytes: a key's strength, checked without
// exposing it.
func (s Secret) Len() int { return len(s.key) }

// MAC is HMAC-SHA256 of msg under the key, for schemes that sign the body
// alone (GitHub's X-Hub-Signature-256).
func (s Secret) MAC(msg []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(msg)
	return m.Sum(nil)
}

// String returns "[redacted]".
func (s Secret) String() string { return redacted }

// Format prints "[redacted]" for every verb, so that neither %v nor %d nor
// %#v can reveal the key.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// LogValue keeps the key out of slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText keeps the key out of JSON and other text encodings.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
