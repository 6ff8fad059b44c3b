package ingress

import (
	"errors"
	"net/http"
)

// Sentinel errors for refused requests. Platform receivers wrap them with a
// short, secret-free reason ("missing X-Slack-Signature"); the pipeline maps
// each to its HTTP status, answers with the reason, and writes nothing.
var (
	// ErrUnauthorized: a missing or wrong signature or secret token. 401.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrStale: a signed timestamp outside the replay window. 401.
	ErrStale = errors.New("stale timestamp")
	// ErrMalformed: a body or header that does not parse. 400.
	ErrMalformed = errors.New("malformed request")
	// ErrMethod: an HTTP method the endpoint does not take. 405.
	ErrMethod = errors.New("method not allowed")
	// ErrTooLarge: a body over the size limit. 413.
	ErrTooLarge = errors.New("request body too large")
	// ErrUnprocessable: well-formed, but names something Parley cannot
	// act on. 422.
	ErrUnprocessable = errors.New("unprocessable request")
	// ErrForbidden: authentic, but asks for what its sender may not do (a
	// target outside the ones its secret was configured for). 403.
	ErrForbidden = errors.New("forbidden")
)

// StatusOf maps a refusal to its HTTP status; 0 when err is none of the
// sentinels above (an internal failure: 5xx, so the platform retries).
func StatusOf(err error) int {
	switch {
	case errors.Is(err, ErrUnauthorized), errors.Is(err, ErrStale):
		return http.StatusUnauthorized
	case errors.Is(err, ErrMalformed):
		return http.StatusBadRequest
	case errors.Is(err, ErrMethod):
		return http.StatusMethodNotAllowed
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrUnprocessable):
		return http.StatusUnprocessableEntity
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	}
	return 0
}
