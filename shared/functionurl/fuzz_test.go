package functionurl_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/parleyhq/parley/shared/functionurl"
)

// Body encodings the fuzzer picks from.
const (
	encRaw      = iota // Body holds the bytes; IsBase64Encoded false
	encBase64          // Body holds their base64; IsBase64Encoded true
	encFlagOnly        // Body holds the bytes; IsBase64Encoded true (usually invalid)
	encodings
)

// plain reports whether s has no control characters, which a URL may not hold.
func plain(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// FuzzHandler feeds Handler arbitrary events. It must never panic or return an
// error; a request it can build reaches the handler with the body byte-exact,
// and the handler's answer comes back byte-exact too.
func FuzzHandler(f *testing.F) {
	f.Add("POST", "/telegram", "", "x-telegram-bot-api-secret-token", "s3cret", "", []byte(`{"update_id":1}`), uint8(encRaw), "abc.lambda-url.us-east-1.on.aws")
	f.Add("POST", "/slack", "a=1&b=%2F", "x-slack-signature", "v0=00", "session=1", []byte{0xff, 0x00, 0xfe}, uint8(encBase64), "h")
	f.Add("GET", "", "hub.challenge=42", "", "", "", []byte(nil), uint8(encRaw), "")
	f.Add("POST", "/", "", "content-type", "text/plain", "", []byte("not base64!"), uint8(encFlagOnly), "h")
	f.Add("BAD METHOD", "//double/slash", "#frag", "bad key", "v\r\nx", "=", []byte("\xc3\x28"), uint8(encRaw), "h:99999")
	f.Add("PUT", "/a b/%zz", "q=%zz", "Host", "other", "a=b; c=d", []byte("ok"), uint8(encBase64), "[::1]:80")
	f.Fuzz(func(t *testing.T, method, path, query, hk, hv, cookie string, body []byte, enc uint8, host string) {
		ev := events.LambdaFunctionURLRequest{
			RawPath: path, RawQueryString: query,
			Headers: map[string]string{},
			RequestContext: events.LambdaFunctionURLRequestContext{HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{
				Method: method,
			}},
		}
		if hk != "" {
			ev.Headers[hk] = hv
		}
		if host != "" {
			ev.Headers["host"] = host
		}
		if cookie != "" {
			ev.Cookies = []string{cookie}
		}
		switch enc % encodings {
		case encRaw:
			ev.Body = string(body)
		case encBase64:
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		case encFlagOnly:
			ev.Body, ev.IsBase64Encoded = string(body), true
		}

		var got []byte
		called := false
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			called = true
			got, _ = io.ReadAll(r.Body)
			_, _ = w.Write(got)
		})
		resp, err := functionurl.Handler(h)(t.Context(), ev)
		if err != nil {
			t.Fatalf("Handler returned an error: %v", err)
		}
		if !called {
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("handler not called, status %d; want a 400", resp.StatusCode)
			}
			// Only an undecodable body or an unbuildable request is refused:
			// never a well-formed request with an ordinary URL.
			if enc%encodings != encFlagOnly && http.CanonicalHeaderKey(hk) != "Host" && host == "" && plain(path) && plain(query) && validMethod(method) {
				t.Fatalf("well-formed event refused: %q", resp.Body)
			}
			return
		}
		want := body
		if enc%encodings == encFlagOnly {
			want, _ = base64.StdEncoding.DecodeString(string(body))
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("handler got body %x, want %x", got, want)
		}
		back := []byte(resp.Body)
		if resp.IsBase64Encoded {
			back, err = base64.StdEncoding.DecodeString(resp.Body)
			if err != nil {
				t.Fatalf("response marked base64 but is not: %v", err)
			}
		} else if !utf8.ValidString(resp.Body) {
			t.Fatalf("response body is not UTF-8 and not marked base64")
		}
		if !bytes.Equal(back, want) {
			t.Fatalf("response body %x, want %x", back, want)
		}
	})
}

// validMethod is net/http's rule for a method: a non-empty token, or empty
// (GET).
func validMethod(m string) bool {
	return !strings.ContainsFunc(m, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
	})
}
