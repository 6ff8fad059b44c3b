package awsjson

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

var creds = credentials.NewStaticCredentialsProvider("AKIDPARLEY", "parley-secret-key", "parley-session")

// server answers every request with answer(n, r), n counting from 1, and
// keeps each request's body.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	n      int
	bodies []string
	reqs   []*http.Request
}

func newServer(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.n++
		n := s.n
		s.bodies = append(s.bodies, string(b))
		s.reqs = append(s.reqs, r)
		s.mu.Unlock()
		answer(n, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func client(s *server, svc Service) *Client {
	c := New(aws.Config{Region: "eu-west-1", Credentials: creds, BaseEndpoint: aws.String(s.URL), HTTPClient: s.Client()}, svc)
	c.sleep = func(context.Context, time.Duration) error { return nil }
	return c
}

func TestCallSendsTheOperationSignedAndDecodesTheAnswer(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = io.WriteString(w, `{"MessageId":"m-1","SequenceNumber":"18"}`)
	})
	var out struct{ MessageId, SequenceNumber string }
	in := map[string]string{"QueueUrl": "https://sqs.eu-west-1.amazonaws.com/1/q.fifo", "MessageBody": "hi"}
	if err := client(s, SQS).Call(t.Context(), "SendMessage", in, &out); err != nil {
		t.Fatal(err)
	}
	if out.MessageId != "m-1" || out.SequenceNumber != "18" {
		t.Fatalf("answer decoded as %+v", out)
	}
	r := s.reqs[0]
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		t.Errorf("request %s %s; want POST /", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("X-Amz-Target"); got != "AmazonSQS.SendMessage" {
		t.Errorf("X-Amz-Target %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/x-amz-json-1.0" {
		t.Errorf("Content-Type %q", got)
	}
	if s.bodies[0] != `{"MessageBody":"hi","QueueUrl":"https://sqs.eu-west-1.amazonaws.com/1/q.fifo"}` {
		t.Errorf("body %s", s.bodies[0])
	}
	if got := r.Header.Get("X-Amz-Security-Token"); got != "parley-session" {
		t.Errorf("session token %q", got)
	}

	// The signature is what SigV4 computes over the request as it arrived:
	// the body sent is the body signed, with the scope of the region and
	// the service's signing name.
	auth := r.Header.Get("Authorization")
	if !strings.Contains(auth, "Credential=AKIDPARLEY/") || !strings.Contains(auth, "/eu-west-1/sqs/aws4_request") {
		t.Fatalf("Authorization %q: want the key id and the eu-west-1/sqs scope", auth)
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := http.NewRequest(r.Method, s.URL+r.URL.Path, strings.NewReader(s.bodies[0]))
	for _, h := range []string{"Content-Type", "X-Amz-Target", "User-Agent"} {
		again.Header.Set(h, r.Header.Get(h))
	}
	c, _ := creds.Retrieve(t.Context())
	if err := v4.NewSigner().SignHTTP(t.Context(), c, again, sha256Hex(s.bodies[0]), "sqs", "eu-west-1", when); err != nil {
		t.Fatal(err)
	}
	if want := again.Header.Get("Authorization"); auth != want {
		t.Errorf("signature over the received request differs:\n got %s\nwant %s", auth, want)
	}
}

func TestAnonymousCredentialsSendNoSignature(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{}`) })
	c := New(aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}, BaseEndpoint: aws.String(s.URL)}, SecretsManager)
	if err := c.Call(t.Context(), "GetSecretValue", map[string]string{"SecretId": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if a := s.reqs[0].Header.Get("Authorization"); a != "" {
		t.Errorf("anonymous call signed: %q", a)
	}
	if got := s.reqs[0].Header.Get("Content-Type"); got != "application/x-amz-json-1.1" {
		t.Errorf("Content-Type %q for JSON 1.1", got)
	}
}

func TestRefusalsAreAPIErrorsWithTheirShapeName(t *testing.T) {
	cases := []struct {
		name   string
		status int
		header string
		body   string
		code   string
		msg    string
	}{
		{"namespaced type", 400, "", `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`, "QueueDoesNotExist", "The specified queue does not exist."},
		{"plain type, capital Message", 400, "", `{"__type":"ResourceNotFoundException","Message":"Secrets Manager can't find the specified secret."}`, "ResourceNotFoundException", "Secrets Manager can't find the specified secret."},
		{"header with a URI", 400, "AccessDeniedException:http://internal.amazon.com/coral/", `{"message":"denied"}`, "AccessDeniedException", "denied"},
		{"code field", 400, "", `{"code":"InvalidParameterValue","message":"bad"}`, "InvalidParameterValue", "bad"},
		{"no body", 403, "", ``, "Forbidden", ""},
		{"not JSON", 502, "", `<html>bad gateway</html>`, "Bad Gateway", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				if tc.header != "" {
					w.Header().Set("X-Amzn-ErrorType", tc.header)
				}
				w.Header().Set("X-Amzn-RequestId", "req-7")
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			err := client(s, SQS).Call(t.Context(), "GetQueueUrl", struct{}{}, nil)
			var api *APIError
			if !errors.As(err, &api) {
				t.Fatalf("error %v (%T) is not an *APIError", err, err)
			}
			if api.Code != tc.code || api.Message != tc.msg || api.Status != tc.status || api.RequestID != "req-7" || api.Operation != "GetQueueUrl" {
				t.Errorf("got %+v; want code %q, message %q, status %d", api, tc.code, tc.msg, tc.status)
			}
			var sa smithy.APIError
			if !errors.As(err, &sa) || sa.ErrorCode() != tc.code {
				t.Errorf("not a smithy.APIError with code %q: %v", tc.code, err)
			}
			if want := smithy.FaultClient; tc.status >= 500 {
				if sa.ErrorFault() != smithy.FaultServer {
					t.Errorf("fault %v for HTTP %d", sa.ErrorFault(), tc.status)
				}
			} else if sa.ErrorFault() != want {
				t.Errorf("fault %v for HTTP %d", sa.ErrorFault(), tc.status)
			}
		})
	}
}

func TestTransientFailuresAreRetriedAndOthersAreNot(t *testing.T) {
	fail := func(status int, typ string) func(int, http.ResponseWriter, *http.Request) {
		return func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status)
			_, _ = fmt.Fprintf(w, `{"__type":%q}`, typ)
		}
	}
	cases := []struct {
		name   string
		answer func(int, http.ResponseWriter, *http.Request)
		calls  int
		ok     bool
	}{
		{"5xx then success", func(n int, w http.ResponseWriter, r *http.Request) {
			if n < 3 {
				fail(500, "InternalError")(n, w, r)
				return
			}
			_, _ = io.WriteString(w, `{}`)
		}, 3, true},
		{"throttled every time", fail(400, "com.amazonaws.sqs#ThrottlingException"), maxAttempts, false},
		{"429", fail(429, "TooManyRequests"), maxAttempts, false},
		{"a client error", fail(400, "InvalidParameterValue"), 1, false},
		{"a missing secret", fail(400, "ResourceNotFoundException"), 1, false},
		{"connection cut, then success", func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				conn, _, _ := w.(http.Hijacker).Hijack()
				_ = conn.Close()
				return
			}
			_, _ = io.WriteString(w, `{}`)
		}, 2, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.answer)
			err := client(s, SQS).Call(t.Context(), "ChangeMessageVisibility", struct{}{}, nil)
			if (err == nil) != tc.ok {
				t.Fatalf("error %v; want ok=%v", err, tc.ok)
			}
			if s.calls() != tc.calls {
				t.Errorf("%d attempts; want %d", s.calls(), tc.calls)
			}
			for i, b := range s.bodies {
				if b != "{}" {
					t.Errorf("attempt %d sent %q: every attempt sends the whole input", i+1, b)
				}
			}
		})
	}
}

func TestACanceledCallIsNotRetried(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s := newServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		cancel()
		w.WriteHeader(500)
	})
	c := client(s, SQS)
	var waited atomic.Bool
	c.sleep = func(context.Context, time.Duration) error { waited.Store(true); return nil }
	if err := c.Call(ctx, "SendMessage", struct{}{}, nil); err == nil {
		t.Fatal("a canceled call succeeded")
	}
	if s.calls() != 1 || waited.Load() {
		t.Errorf("%d attempts (waited: %v) after the caller gave up; want 1", s.calls(), waited.Load())
	}
}

func TestBackoffIsJitteredUnderItsCeiling(t *testing.T) {
	for attempt := 1; attempt < maxAttempts+3; attempt++ {
		ceiling := min(baseDelay<<(attempt-1), maxDelay)
		seen := map[time.Duration]bool{}
		for range 200 {
			d := backoff(baseDelay, attempt)
			if d <= 0 || d > ceiling {
				t.Fatalf("attempt %d: delay %v outside (0, %v]", attempt, d, ceiling)
			}
			seen[d] = true
		}
		if len(seen) < 50 {
			t.Errorf("attempt %d: %d distinct delays in 200: not jittered", attempt, len(seen))
		}
	}
	if got := backoff(throttleDelay, 30); got > maxDelay {
		t.Errorf("delay %v above the %v cap", got, maxDelay)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// endpointSource offers one service's endpoint, as awsenv's source does.
type endpointSource map[string]string

func (e endpointSource) GetServiceBaseEndpoint(_ context.Context, id string) (string, bool, error) {
	u, ok := e[id]
	return u, ok, nil
}

func TestEndpointIsFoundAsTheSDKFindsIt(t *testing.T) {
	cases := []struct {
		name string
		cfg  aws.Config
		svc  Service
		want string
	}{
		{"the region's", aws.Config{Region: "ap-northeast-1"}, SQS, "https://sqs.ap-northeast-1.amazonaws.com"},
		{"China's partition", aws.Config{Region: "cn-north-1"}, SecretsManager, "https://secretsmanager.cn-north-1.amazonaws.com.cn"},
		{"the base endpoint", aws.Config{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:4566")}, SQS, "http://127.0.0.1:4566"},
		{"the service's own above the base", aws.Config{Region: "us-east-1", BaseEndpoint: aws.String("http://base"),
			ConfigSources: []any{"not a source", endpointSource{"SQS": "http://sqs-only"}}}, SQS, "http://sqs-only"},
		{"another service's is not used", aws.Config{Region: "us-east-1", BaseEndpoint: aws.String("http://base"),
			ConfigSources: []any{endpointSource{"SQS": "http://sqs-only"}}}, SecretsManager, "http://base"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := New(tc.cfg, tc.svc).Endpoint(); got != tc.want {
				t.Errorf("endpoint %q; want %q", got, tc.want)
			}
		})
	}
}

// FuzzDecodeError: whatever a service (or a proxy before it) answers, the
// error has a code and decoding never panics.
func FuzzDecodeError(f *testing.F) {
	f.Add(400, "", `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"gone"}`)
	f.Add(400, "ResourceNotFoundException:http://internal.amazon.com/", `{"Message":"x"}`)
	f.Add(503, "", ``)
	f.Add(500, "#", `{"__type":":"}`)
	f.Add(400, "", `{"__type":123,"message":["a"]}`)
	f.Fuzz(func(t *testing.T, status int, header, body string) {
		if status < 100 || status > 999 {
			status = 400
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{}}
		resp.Header.Set("X-Amzn-ErrorType", header)
		err := decodeError("SQS", "SendMessage", resp, []byte(body))
		var api *APIError
		if !errors.As(err, &api) {
			t.Fatalf("%T is not an *APIError", err)
		}
		if api.Code == "" || strings.ContainsAny(api.Code, "#:") {
			t.Errorf("code %q keeps the protocol's decoration", api.Code)
		}
		_ = api.Error()
	})
}

// TestAPIOptionsRunOnceAroundTheCall: an Initialize middleware sees the
// service, the operation and the input, once however often the call is
// attempted, and can stop the call before it is sent.
func TestAPIOptionsRunOnceAroundTheCall(t *testing.T) {
	s := newServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.WriteHeader(503)
			return
		}
		_, _ = io.WriteString(w, `{"MessageId":"m"}`)
	})
	var seen []string
	stop := errors.New("stopped")
	option := func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("Record",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				seen = append(seen, awsmiddleware.GetServiceID(ctx)+"."+awsmiddleware.GetOperationName(ctx)+" "+in.Parameters.(map[string]string)["QueueUrl"])
				if in.Parameters.(map[string]string)["QueueUrl"] == "stop" {
					return middleware.InitializeOutput{}, middleware.Metadata{}, stop
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
	c := New(aws.Config{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(s.URL), APIOptions: []func(*middleware.Stack) error{option}}, SQS)
	c.sleep = func(context.Context, time.Duration) error { return nil }
	var out struct{ MessageId string }
	if err := c.Call(t.Context(), "SendMessage", map[string]string{"QueueUrl": "q"}, &out); err != nil || out.MessageId != "m" {
		t.Fatalf("call: %v, %+v", err, out)
	}
	if err := c.Call(t.Context(), "SendMessage", map[string]string{"QueueUrl": "stop"}, nil); !errors.Is(err, stop) {
		t.Fatalf("stopped call: %v", err)
	}
	if want := []string{"SQS.SendMessage q", "SQS.SendMessage stop"}; !slices.Equal(seen, want) {
		t.Errorf("middleware saw %q; want %q", seen, want)
	}
	if s.calls() != 2 {
		t.Errorf("%d requests; want 2 (one retried call, one stopped before it was sent)", s.calls())
	}
}
