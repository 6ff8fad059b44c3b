package standardwebhooks

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of the scheme. net/http canonicalizes them (Webhook-Id); HTTP
// header names are case-insensitive, so receivers see the same thing.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// DefaultTolerance is how far a timestamp may be from the receiver's clock, in
// either direction: the specification's and every reference library's value.
const DefaultTolerance = 5 * time.Minute

// Verification failures. Verify wraps them with a short reason; none of them
// ever holds a secret or the body. Callers branch with errors.Is.
var (
	// ErrMissingHeaders: webhook-id, webhook-timestamp or webhook-signature
	// is absent or empty.
	ErrMissingHeaders = errors.New("missing webhook signature headers")
	// ErrBadTimestamp: webhook-timestamp is not unix seconds.
	ErrBadTimestamp = errors.New("invalid webhook timestamp")
	// ErrStale: the timestamp is further than the tolerance from now, in
	// the past (a replay) or the future.
	ErrStale = errors.New("webhook timestamp outside tolerance")
	// ErrNoMatch: no v1 signature in the header matches any secret.
	ErrNoMatch = errors.New("no matching webhook signature")
	// ErrNoSecrets: the Verifier has no secret, a configuration error.
	ErrNoSecrets = errors.New("webhook verifier has no secrets")
)

// Sign returns the v1 signature of a message: "v1," followed by the base64 of
// HMAC-SHA256(key, "<id>.<unix seconds>.<body>"). ts is truncated to seconds.
func Sign(secret Secret, id string, ts time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(mac(secret.key, id, ts.Unix(), body))
}

// SetHeaders sets the three Standard Webhooks headers of a request whose body
// is body. id should be stable across retries of the same message: receivers
// dedupe on it.
func SetHeaders(h http.Header, secret Secret, id string, ts time.Time, body []byte) {
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, Sign(secret, id, ts, body))
}

func mac(key []byte, id string, unix int64, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	// The signed content is "<id>.<timestamp>.<body>". The timestamp is
	// formatted canonically from its value, as the reference libraries do.
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write(strconv.AppendInt(nil, unix, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verifier checks Standard Webhooks signatures.
type Verifier struct {
	// Secrets are the keys a request may be signed with; a signature
	// matching any of them is accepted. List the new and the old secret
	// while rotating. Required.
	Secrets []Secret
	// Tolerance is how far webhook-timestamp may be from now, in either
	// direction. Defaults to 5 minutes (DefaultTolerance).
	Tolerance time.Duration
}

// Verify checks a request's headers against its raw body at time now, and
// returns its webhook-id. It checks, in order: the three headers are present
// (ErrMissingHeaders), the timestamp is unix seconds (ErrBadTimestamp) within
// the tolerance of now (ErrStale), and one of the space-separated v1
// signatures matches a secret (ErrNoMatch), compared in constant time.
// Entries of other versions (v1a, future ones) are skipped.
//
// Verify the raw bytes as received, before decoding: re-encoded JSON is not
// byte-identical.
func (v Verifier) Verify(h http.Header, body []byte, now time.Time) (string, error) {
	if len(v.Secrets) == 0 {
		return "", ErrNoSecrets
	}
	id := h.Get(HeaderID)
	ts := h.Get(HeaderTimestamp)
	sigs := strings.Join(h.Values(HeaderSignature), " ")
	if id == "" || ts == "" || strings.TrimSpace(sigs) == "" {
		return "", fmt.Errorf("%w: need %s, %s and %s", ErrMissingHeaders, HeaderID, HeaderTimestamp, HeaderSignature)
	}
	unix, err := parseUnix(ts)
	if err != nil {
		return "", err
	}
	tolerance := cmp.Or(max(v.Tolerance, 0), DefaultTolerance)
	switch age := now.Sub(time.Unix(unix, 0)); {
	case age > tolerance:
		return "", fmt.Errorf("%w: %s old, tolerance %s", ErrStale, age.Truncate(time.Second), tolerance)
	case age < -tolerance:
		return "", fmt.Errorf("%w: %s in the future, tolerance %s", ErrStale, (-age).Truncate(time.Second), tolerance)
	}

	want := make([][]byte, 0, len(v.Secrets))
	for _, s := range v.Secrets {
		if !s.IsZero() {
			want = append(want, mac(s.key, id, unix, body))
		}
	}
	if len(want) == 0 {
		return "", ErrNoSecrets
	}
	seenV1 := false
	for _, entry := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		seenV1 = true
		got, err := base64.StdEncoding.Strict().DecodeString(sig)
		if err != nil || len(got) != sha256.Size {
			continue
		}
		for _, w := range want {
			if hmac.Equal(got, w) {
				return id, nil
			}
		}
	}
	if !seenV1 {
		return "", fmt.Errorf("%w: no v1 signature in %s", ErrNoMatch, HeaderSignature)
	}
	return "", ErrNoMatch
}

// parseUnix accepts what senders write: decimal unix seconds. Signs, spaces
// and fractions are refused (the specification says integer), and 18 digits
// keep clear of int64 overflow.
func parseUnix(s string) (int64, error) {
	if len(s) > 18 || strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, fmt.Errorf("%w: want unix seconds", ErrBadTimestamp)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: want unix seconds", ErrBadTimestamp)
	}
	return n, nil
}
