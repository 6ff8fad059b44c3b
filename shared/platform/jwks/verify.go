package jwks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MaxToken bounds a bearer token, in bytes: platform tokens are 1–2 KB.
const MaxToken = 16 << 10

// Errors Verify answers with, beside ErrUnknownKey and ErrUnavailable.
var (
	// ErrInvalid: the token is no token, is not signed by a key of the set,
	// or names another issuer or audience.
	ErrInvalid = errors.New("jwks: invalid token")
	// ErrExpired: a true token outside its validity (expired, or not yet
	// valid), beyond the leeway.
	ErrExpired = errors.New("jwks: token outside its validity")
)

// Expect is what a token must say.
type Expect struct {
	// Issuers are the accepted iss values (one must match exactly).
	Issuers []string
	// Audience is the accepted aud value.
	Audience string
	// Leeway is the clock skew allowed on exp, nbf and iat.
	Leeway time.Duration
	// Now is the time to check against. Defaults to the set's clock.
	Now time.Time
	// Methods are the accepted signing algorithms. Defaults to RS256,
	// which every platform Parley verifies signs with.
	Methods []string
}

// Verify checks raw, a compact JWS, with golang-jwt against the set's
// keys: the algorithm, the signature (the key its kid names, fetched as Key
// says), then the claims (iss, aud, exp required, nbf and iat if present).
// claims receives the payload; Verify returns the key that signed it.
// Errors wrap ErrInvalid, ErrExpired, ErrUnknownKey or ErrUnavailable.
func (s *Set) Verify(ctx context.Context, raw string, exp Expect, claims jwt.Claims) (Key, error) {
	return s.verify(raw, exp, claims, func(kid string, issued time.Time) (Key, error) { return s.Key(ctx, kid, issued) })
}

// VerifyHeld is Verify with the keys the set holds now, without any I/O:
// a key it does not hold is ErrUnavailable.
func (s *Set) VerifyHeld(raw string, exp Expect, claims jwt.Claims) (Key, error) {
	return s.verify(raw, exp, claims, func(kid string, _ time.Time) (Key, error) {
		if k, ok := s.Held(kid); ok {
			return k, nil
		}
		return Key{}, fmt.Errorf("%w: key %q is not held", ErrUnavailable, clip(kid))
	})
}

func (s *Set) verify(raw string, exp Expect, claims jwt.Claims, key func(kid string, issued time.Time) (Key, error)) (Key, error) {
	if raw == "" || len(raw) > MaxToken || strings.Count(raw, ".") != 2 {
		return Key{}, fmt.Errorf("%w: not a compact JWS of at most %d bytes", ErrInvalid, MaxToken)
	}
	now := exp.Now
	if now.IsZero() {
		now = s.now()
	}
	methods := exp.Methods
	if len(methods) == 0 {
		methods = []string{jwt.SigningMethodRS256.Alg()}
	}
	if exp.Audience == "" || len(exp.Issuers) == 0 {
		return Key{}, fmt.Errorf("%w: no audience or issuer to check against", ErrInvalid)
	}
	p := jwt.NewParser(
		jwt.WithValidMethods(methods),
		jwt.WithAudience(exp.Audience),
		jwt.WithLeeway(exp.Leeway),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(func() time.Time { return now }),
	)
	var used Key
	_, err := p.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, fmt.Errorf("%w: the token names no key (kid)", ErrInvalid)
		}
		// The claims are parsed, not yet verified: the issue time only
		// chooses how soon an unknown key may be fetched.
		var issued time.Time
		if iat, err := t.Claims.GetIssuedAt(); err == nil && iat != nil {
			issued = iat.Time
		}
		k, err := key(kid, issued)
		if err != nil {
			return nil, err
		}
		used = k
		return k.Public, nil
	})
	if err != nil {
		switch {
		case errors.Is(err, ErrUnavailable):
			return Key{}, fmt.Errorf("%w: the platform's signing keys could not be fetched", ErrUnavailable)
		case errors.Is(err, ErrUnknownKey):
			return Key{}, fmt.Errorf("%w: the token's key is not in the set", ErrUnknownKey)
		case errors.Is(err, jwt.ErrTokenExpired), errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
			return Key{}, fmt.Errorf("%w: %v", ErrExpired, err)
		}
		return Key{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	iss, err := claims.GetIssuer()
	if err != nil || !slices.Contains(exp.Issuers, iss) {
		return Key{}, fmt.Errorf("%w: issuer %q is not the platform's", ErrInvalid, clip(iss))
	}
	return used, nil
}

// clip keeps an outside value short and printable in an error.
func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
