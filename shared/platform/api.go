package platform

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// defaultHTTP bounds a call whose ctx has no deadline.
var defaultHTTP = &http.Client{Timeout: 30 * time.Second}

// API is a platform's JSON-over-HTTP API as a sender calls it: where it
// is, the credential every call carries and the client that sends. An
// adapter keeps only what is its platform's: the methods, where the token
// goes, and what its answers mean.
type API struct {
	// Name names the API in refusals: "Bot API", "Web API".
	Name string
	// BaseURL is the API's root. Defaults to DefaultBaseURL.
	BaseURL string
	// DefaultBaseURL is the platform's public root.
	DefaultBaseURL string
	// Token is the credential every call carries; the caller puts it where
	// its platform wants it (Telegram: in the path, Slack: a header). A call
	// without one is refused before anything is sent.
	Token string
	// HTTP sends the requests. Defaults to a client with a 30-second
	// timeout; deadlines normally come from ctx.
	HTTP *http.Client
}

// PostJSON posts args as a JSON body to path below the API's root, with
// header's fields added (Content-Type is application/json unless header
// sets it), and returns the platform's answer through Do. path may hold the
// token: no error ever shows it.
//
// Refused before anything is sent, as a *message.SendError: no Token or a
// root that is not an absolute URL (auth: the configuration is wrong and no
// retry helps), args that do not encode (invalid_payload).
func (a API) PostJSON(ctx context.Context, path string, header http.Header, args any) (*Response, error) {
	return a.SendJSON(ctx, http.MethodPost, path, header, args)
}

// SendJSON is PostJSON with another method (Discord edits with PATCH).
func (a API) SendJSON(ctx context.Context, method, path string, header http.Header, args any) (*Response, error) {
	body, err := json.Marshal(args)
	if err != nil {
		return nil, &message.SendError{Class: message.FailInvalidPayload, Reason: "arguments do not encode", Err: err}
	}
	return a.send(ctx, method, path, header, "application/json", body)
}

// send sends body of type typ (unless header sets Content-Type) with method
// to path below the API's root: SendJSON's, SendForm's and PostValues'
// refusals before anything is sent, and Do's answer.
func (a API) send(ctx context.Context, method, path string, header http.Header, typ string, body []byte) (*Response, error) {
	if a.Token == "" {
		return nil, &message.SendError{Class: message.FailAuth, Reason: "no bot token configured"}
	}
	base := strings.TrimRight(cmp.Or(a.BaseURL, a.DefaultBaseURL), "/")
	if u, err := url.Parse(base); err != nil || u.Scheme == "" || u.Host == "" {
		// The root alone is safe to name; a full URL may hold the token.
		return nil, &message.SendError{Class: message.FailAuth, Reason: "invalid " + a.Name + " base URL " + strconv.Quote(base)}
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
	if err != nil {
		// err quotes the URL, and with it a token in the path: dropped.
		return nil, &message.SendError{Class: message.FailAuth, Reason: "the " + a.Name + " URL does not parse with this token"}
	}
	req.Header.Set("Content-Type", typ)
	for k, v := range header {
		req.Header[k] = v
	}
	return Do(ctx, cmp.Or(a.HTTP, defaultHTTP), req)
}

// Decode reads a 200 answer's JSON body into v. A body that does not decode
// is message.FailUnknown: something answered 200 (a captive portal, a
// proxy), and the platform may or may not have acted on the request.
func (a API) Decode(resp *Response, v any) error {
	if err := json.Unmarshal(resp.Body, v); err != nil {
		return &message.SendError{Class: message.FailUnknown, Status: resp.Status, Reason: "answer is not a " + a.Name + " response"}
	}
	return nil
}

// StatusFailure classifies an answer by its HTTP status alone, the way the
// chat APIs mean it when their body says nothing more specific:
//
//	429  rate_limit, RetryAfter from the Retry-After header
//	404  auth: the method's URL is wrong (the base URL, or a token in the
//	     path); a missing chat is never a 404
//	5xx  unknown: an edge's 5xx may come after the message was posted
//	     (ADR 0003)
//	else StatusClass
//
// Reason is "HTTP <status>"; an adapter refines it from the error body.
func StatusFailure(status int, h http.Header) *message.SendError {
	se := &message.SendError{Class: StatusClass(status), Status: status, Reason: "HTTP " + strconv.Itoa(status)}
	switch {
	case status == http.StatusTooManyRequests:
		se.RetryAfter = RetryAfter(h, time.Now())
	case status == http.StatusNotFound:
		se.Class = message.FailAuth
	case status >= 500:
		se.Class = message.FailUnknown
	}
	return se
}

// CheckThread refuses, before any call, a thread a sender cannot post into:
// one without a chat, or one of another account than account, the bot or
// workspace the sender's credential belongs to, so that a token reaches
// only its own conversations (both invalid_payload). Accounts compare
// without case: Slack team ids reach Parley in either. An empty account
// scopes nothing.
func CheckThread(account string, t message.Thread) error {
	if t.Chat == "" {
		return &message.SendError{Class: message.FailInvalidPayload, Reason: "no chat"}
	}
	if account != "" && !strings.EqualFold(t.Account, account) {
		return &message.SendError{Class: message.FailInvalidPayload, Reason: "the thread belongs to another account than this sender's"}
	}
	return nil
}

// TextFor is what a text-only sender scoped to account checks before it
// sends m: CheckThread, then TextOf. It returns m's text.
func TextFor(account string, m message.Outgoing) (string, error) {
	if err := CheckThread(account, m.Thread); err != nil {
		return "", err
	}
	return TextOf(m.Content)
}

// TextOf returns c's text, refusing any other content (invalid_payload): a
// sender that is not an Asker gets questions already rendered as text, and
// content of a kind it does not know must not go out as something else.
func TextOf(c message.Content) (string, error) {
	if c.Kind() != message.ContentText {
		return "", &message.SendError{Class: message.FailInvalidPayload, Reason: "content is not text"}
	}
	return c.Text, nil
}

// GetFile downloads a file the platform serves at path below the API's root
// (a person's attachment), with header's fields added, reading at most max
// bytes. A body over max, by its Content-Length or as read, is
// ErrFileTooLarge; a 4xx answer, or a body shorter than its Content-Length,
// ErrFileUnavailable; anything else (5xx, no answer) an error to retry.
// Errors never hold the URL's path, where Telegram puts its token.
func (a API) GetFile(ctx context.Context, path string, header http.Header, max int64) ([]byte, error) {
	base := strings.TrimRight(cmp.Or(a.BaseURL, a.DefaultBaseURL), "/")
	return a.GetURL(ctx, base+path, header, max)
}

// GetURL is GetFile at an absolute URL the platform gave (Slack's
// url_private_download): the caller checks it may carry header there.
func (a API) GetURL(ctx context.Context, rawURL string, header http.Header, max int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: the %s file URL does not parse", ErrFileUnavailable, a.Name)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := cmp.Or(a.HTTP, defaultHTTP).Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s file download: %w", a.Name, scrub(req.URL, err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests:
		return nil, fmt.Errorf("%w: %s answered %d", ErrFileUnavailable, a.Name, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%s file download: HTTP %d", a.Name, resp.StatusCode)
	case resp.ContentLength > max:
		return nil, ErrFileTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%w: the download broke off", ErrFileUnavailable)
	case err != nil:
		return nil, fmt.Errorf("%s file download: %w", a.Name, scrub(req.URL, err))
	case int64(len(body)) > max:
		return nil, ErrFileTooLarge
	}
	return body, nil
}
