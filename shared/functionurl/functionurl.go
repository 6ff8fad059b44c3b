package functionurl

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/parleyhq/parley/shared/platform"
)

// Handler serves h for Function URL events. The body is handed to h exactly
// as the client sent it (base64-decoded when Lambda encoded it), so
// signatures verify on the raw bytes.
func Handler(h http.Handler) func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	return func(ctx context.Context, ev events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		r, err := toHTTP(ctx, ev)
		if err != nil {
			// The one refusal body of every endpoint.
			body, _ := json.Marshal(platform.Problem{Error: "malformed", Reason: err.Error()})
			return events.LambdaFunctionURLResponse{
				StatusCode: http.StatusBadRequest,
				Headers:    map[string]string{"Content-Type": "application/json"},
				Body:       string(body) + "\n",
			}, nil
		}
		w := &response{header: http.Header{}}
		h.ServeHTTP(w, r)
		return w.event(), nil
	}
}

func toHTTP(ctx context.Context, ev events.LambdaFunctionURLRequest) (*http.Request, error) {
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return nil, fmt.Errorf("body is not valid base64: %w", err)
		}
		body = b
	}
	path := ev.RawPath
	if path == "" {
		path = "/"
	}
	u := &url.URL{Path: path, RawQuery: ev.RawQueryString}
	if host := ev.Headers["host"]; host != "" {
		u.Host = host
	}
	method := ev.RequestContext.HTTP.Method
	if method == "" {
		method = http.MethodGet
	}
	r, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	for k, v := range ev.Headers {
		// Function URLs join repeated headers with commas.
		r.Header.Set(k, v)
	}
	for _, c := range ev.Cookies {
		r.Header.Add("Cookie", c)
	}
	r.RemoteAddr = ev.RequestContext.HTTP.SourceIP
	r.RequestURI = u.RequestURI()
	return r, nil
}

// response is the http.ResponseWriter a Function URL event is answered
// from. It keeps what net/http/httptest's recorder, which it replaces,
// kept: the header as it was at the status, the first status, and a
// sniffed Content-Type for an untyped body written before any status. (The
// recorder would link the flag package and a test certificate into every
// function.)
type response struct {
	header, sent http.Header
	status       int
	body         bytes.Buffer
}

func (w *response) Header() http.Header { return w.header }

func (w *response) WriteHeader(status int) {
	if w.sent != nil {
		return
	}
	w.status, w.sent = status, w.header.Clone()
}

func (w *response) Write(b []byte) (int, error) {
	if w.sent == nil {
		if _, typed := w.header["Content-Type"]; !typed && w.header.Get("Transfer-Encoding") == "" {
			w.header.Set("Content-Type", http.DetectContentType(b))
		}
		w.WriteHeader(http.StatusOK)
	}
	return w.body.Write(b)
}

func (w *response) event() events.LambdaFunctionURLResponse {
	w.WriteHeader(http.StatusOK)
	resp := events.LambdaFunctionURLResponse{StatusCode: w.status, Headers: map[string]string{}}
	for k, v := range w.sent {
		if k == "Set-Cookie" {
			resp.Cookies = append(resp.Cookies, v...)
			continue
		}
		resp.Headers[k] = strings.Join(v, ",")
	}
	if b := w.body.Bytes(); utf8.Valid(b) {
		resp.Body = string(b)
	} else {
		resp.Body = base64.StdEncoding.EncodeToString(b)
		resp.IsBase64Encoded = true
	}
	return resp
}

// ToEvent translates an HTTP request into the event a Function URL would
// deliver: lower-cased headers joined with commas, the body base64-encoded
// when it is not valid UTF-8 text. It reads r.Body.
func ToEvent(r *http.Request, maxBody int64) (events.LambdaFunctionURLRequest, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return events.LambdaFunctionURLRequest{}, fmt.Errorf("read body: %w", err)
	}
	if int64(len(body)) > maxBody {
		return events.LambdaFunctionURLRequest{}, fmt.Errorf("body over %d bytes", maxBody)
	}
	ev := events.LambdaFunctionURLRequest{
		Version:        "2.0",
		RawPath:        r.URL.Path,
		RawQueryString: r.URL.RawQuery,
		Headers:        map[string]string{},
		RequestContext: events.LambdaFunctionURLRequestContext{
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{
				Method: r.Method, Path: r.URL.Path, Protocol: r.Proto, SourceIP: r.RemoteAddr, UserAgent: r.UserAgent(),
			},
		},
	}
	for k, v := range r.Header {
		if strings.EqualFold(k, "Cookie") {
			ev.Cookies = append(ev.Cookies, v...)
			continue
		}
		ev.Headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	if r.Host != "" {
		ev.Headers["host"] = r.Host
	}
	if utf8.Valid(body) {
		ev.Body = string(body)
	} else {
		ev.Body = base64.StdEncoding.EncodeToString(body)
		ev.IsBase64Encoded = true
	}
	return ev, nil
}

// WriteResponse writes a Function URL response to w.
func WriteResponse(w http.ResponseWriter, resp events.LambdaFunctionURLResponse) error {
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(resp.Body)
		if err != nil {
			return fmt.Errorf("response body is not valid base64: %w", err)
		}
		body = b
	}
	status := resp.StatusCode
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, err := w.Write(body)
	return err
}
