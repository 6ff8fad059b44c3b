package platform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
)

// MaxResponseBytes bounds how much of a response body Do reads. Platform
// answers to a send are a few hundred bytes; the bound keeps a misbehaving
// server from exhausting memory.
const MaxResponseBytes = 1 << 20

// Response is a platform's complete answer: its status, headers and body.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends req with client (http.DefaultClient when nil) under ctx and reads
// the whole response. A failure before a complete response is returned as a
// *message.SendError:
//
//   - message.FailUnknown when the request was fully written (the platform may
//     have acted on it), or when a 2xx status arrived but its body did not;
//   - message.FailCancelled when ctx ended before the request was written;
//   - message.FailTransient for any other failure before the request was
//     written (dial, DNS, TLS handshake, a client timeout while connecting).
//
// Any HTTP status, 2xx or not, is a Response: classifying it is the adapter's
// job. Errors never hold the request URL (Telegram puts the bot token in the
// path), only its scheme and host.
func Do(ctx context.Context, client *http.Client, req *http.Request) (*Response, error) {
	if client == nil {
		client = http.DefaultClient
	}
	// wrote turns true once the request's last byte was handed to the
	// connection without error. The transport calls WroteRequest before it
	// reports any round-trip error (it waits for its write loop), so reading
	// it after client.Do returns is race-free.
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				wrote.Store(true)
			}
		},
	}
	req = req.WithContext(httptrace.WithClientTrace(ctx, trace))
	resp, err := client.Do(req)
	if err != nil {
		return nil, roundTripError(ctx, req.URL, err, wrote.Load())
	}
	defer resp.Body.Close()

	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	if err != nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// The platform accepted the request; only the receipt got lost.
		return nil, &message.SendError{
			Class:  message.FailUnknown,
			Status: resp.StatusCode,
			Reason: "response body cut off",
			Err:    scrub(req.URL, err),
		}
	}
	// A non-2xx answer whose body broke off is still a definite answer:
	// hand back what arrived and let the adapter classify the status.
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

func roundTripError(ctx context.Context, u *url.URL, err error, wrote bool) error {
	err = scrub(u, err)
	switch {
	case wrote:
		return &message.SendError{Class: message.FailUnknown, Reason: "no response after the request was sent", Err: err}
	case ctx.Err() != nil:
		return &message.SendError{Class: message.FailCancelled, Reason: "cancelled before the request was sent", Err: err}
	default:
		return &message.SendError{Class: message.FailTransient, Reason: "request not sent", Err: err}
	}
}

// scrub replaces a *url.Error's URL, which would print the full path, with the
// scheme and host only. The wrapped cause is kept for errors.Is/As.
func scrub(u *url.URL, err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	host := "request"
	if u != nil {
		host = u.Scheme + "://" + u.Host
	}
	return fmt.Errorf("%s: %w", host, err)
}

// StatusClass is the failure class an HTTP status means when a platform gives
// nothing more specific. Adapters refine it with their platform's error body.
func StatusClass(status int) message.FailureClass {
	switch {
	case status == http.StatusTooManyRequests:
		return message.FailRateLimit
	case status == http.StatusUnauthorized:
		return message.FailAuth
	case status == http.StatusForbidden:
		return message.FailPermission
	case status == http.StatusNotFound, status == http.StatusGone:
		return message.FailNotFound
	case status == http.StatusConflict:
		return message.FailConflict
	case status == http.StatusRequestTimeout, status >= 500:
		return message.FailTransient
	case status >= 400:
		return message.FailInvalidPayload
	}
	// A 1xx or 3xx the client did not resolve: the platform answered
	// something unexpected, and may have acted.
	return message.FailUnknown
}

// RetryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (relative to now). It returns 0 when the header is absent or unreadable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, maxRetrySeconds)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetrySeconds*time.Second)
	}
	return 0
}

// maxRetrySeconds caps a platform's requested wait so a hostile or buggy
// value cannot overflow a time.Duration or park a message for years.
const maxRetrySeconds = 24 * 60 * 60

// Seconds turns a platform's retry-after seconds into a Duration, capped at a
// day; 0 for values that are not positive.
func Seconds(s int64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(min(s, maxRetrySeconds)) * time.Second
}

// Reason shortens a platform's error code or description for a SendError: at
// most 200 bytes of valid UTF-8 on one line. Platforms' descriptions name the
// error, never the message text, but they are still outside input.
func Reason(s string) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	const limit = 200
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
