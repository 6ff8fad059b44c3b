package platform_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/parleyhq/parley/shared/platform"
)

func TestStatusOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want int
	}{
		{platform.ErrUnauthorized, http.StatusUnauthorized},
		{platform.ErrStale, http.StatusUnauthorized},
		{platform.ErrMalformed, http.StatusBadRequest},
		{platform.ErrMethod, http.StatusMethodNotAllowed},
		{platform.ErrTooLarge, http.StatusRequestEntityTooLarge},
		{platform.ErrUnprocessable, http.StatusUnprocessableEntity},
		{platform.ErrForbidden, http.StatusForbidden},
		{fmt.Errorf("%w: missing X-Slack-Signature", platform.ErrUnauthorized), http.StatusUnauthorized},
		{fmt.Errorf("telegram: %w", fmt.Errorf("%w: not JSON", platform.ErrMalformed)), http.StatusBadRequest},
		{errors.Join(errors.New("other"), platform.ErrUnprocessable), http.StatusUnprocessableEntity},
		{errors.New("dynamodb unavailable"), 0},
		{nil, 0},
	}
	for _, tc := range cases {
		if got := platform.StatusOf(tc.err); got != tc.want {
			t.Errorf("StatusOf(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestCodeOfNamesEverySentinel: every refusal's body names its sentinel's
// code; a 409 is "conflict", never the "malformed" of an unknown error.
func TestCodeOfNamesEverySentinel(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want string
	}{
		{platform.ErrUnauthorized, "unauthorized"},
		{platform.ErrStale, "unauthorized"},
		{platform.ErrMalformed, "malformed"},
		{platform.ErrMethod, "method"},
		{platform.ErrTooLarge, "too_large"},
		{platform.ErrUnprocessable, "unprocessable"},
		{platform.ErrForbidden, "forbidden"},
		{fmt.Errorf("%w: key used before", platform.ErrConflict), "conflict"},
		{fmt.Errorf("%w: keys unreachable", platform.ErrUnavailable), "unavailable"},
		{errors.New("anything else"), "malformed"},
	}
	for _, tc := range cases {
		if got := platform.CodeOf(tc.err); got != tc.want {
			t.Errorf("CodeOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestHMACSHA256: RFC 4231's test case 2, its data given in two parts.
func TestHMACSHA256(t *testing.T) {
	t.Parallel()
	got := hex.EncodeToString(platform.HMACSHA256("Jefe", []byte("what do ya want "), []byte("for nothing?")))
	if want := "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"; got != want {
		t.Fatalf("HMACSHA256 = %s, want %s", got, want)
	}
}
