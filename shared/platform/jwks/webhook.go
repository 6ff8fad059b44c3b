package jwks

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/parleyhq/parley/shared/platform"
)

// Bearer is the token of an Authorization: Bearer header.
func Bearer(h http.Header) (string, bool) {
	scheme, tok, ok := strings.Cut(h.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// Refusal is a webhook's answer to a Verify error: keys that could not be
// had are platform.ErrUnavailable (503, retried), a true token outside its
// validity platform.ErrStale, anything else platform.ErrUnauthorized.
func Refusal(err error) error {
	switch {
	case errors.Is(err, ErrUnavailable):
		return fmt.Errorf("%w: %v", platform.ErrUnavailable, err)
	case errors.Is(err, ErrExpired):
		return fmt.Errorf("%w: %v", platform.ErrStale, err)
	}
	return fmt.Errorf("%w: %v", platform.ErrUnauthorized, err)
}
