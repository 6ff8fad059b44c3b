// Package awsjson calls AWS services that speak the AWS JSON protocol —
// DynamoDB (through package ddb), SQS and Secrets Manager, for Parley — with
// one SigV4-signed POST per attempt.
//
// Parley's functions use five DynamoDB operations, four SQS ones and one of
// Secrets Manager. The SDK's clients for them are generated for every
// operation of their service, and their package initialisation is part of
// every cold start (ADR 0012, docs/capacity.md). The protocol itself is small: a POST to the
// service's endpoint, the operation in X-Amz-Target, the input as a JSON
// object, the output or an error ({"__type": ..., "message": ...}) as one.
// The signing, the credentials and the configuration are the SDK's core
// modules', as a generated client uses them.
//
// A configuration's APIOptions apply too, to their Initialize step: it runs
// once per call, outside the retries, with the operation's input as its
// Parameters and the service id and operation name in the context, as in an
// SDK client. That is where tests count calls and inject crashes
// (localstack/callcount, localstack/awsfault). The other steps are the
// SDK's own and are not run.
//
// A call is attempted up to three times when its failure is transient: a
// throttle, a 5xx, or a connection that broke. Callers must make their calls
// idempotent (SQS FIFO sends are, by their deduplication ids; visibility
// changes and reads are by nature).
package awsjson

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"github.com/parleyhq/parley/shared/wait"
)

// Service is an AWS service that speaks the JSON protocol.
type Service struct {
	// ID is the SDK's service id: AWS_ENDPOINT_URL_<ID, in capitals, spaces
	// as underscores> names its endpoint.
	ID string
	// SigningName is the service's name in a SigV4 credential scope.
	SigningName string
	// EndpointPrefix is the host's first label in the region's endpoint.
	EndpointPrefix string
	// TargetPrefix comes before the operation in X-Amz-Target.
	TargetPrefix string
	// Version is the protocol's: "1.0" or "1.1".
	Version string
}

var (
	// SQS is Amazon SQS (its JSON protocol, which the SDK uses since 2023).
	SQS = Service{ID: "SQS", SigningName: "sqs", EndpointPrefix: "sqs", TargetPrefix: "AmazonSQS", Version: "1.0"}
	// SecretsManager is AWS Secrets Manager.
	SecretsManager = Service{ID: "Secrets Manager", SigningName: "secretsmanager", EndpointPrefix: "secretsmanager", TargetPrefix: "secretsmanager", Version: "1.1"}
)

const (
	maxAttempts = 3
	// baseDelay and throttleDelay start a retry's backoff (full jitter,
	// doubling per attempt), as the SDK's standard retryer does.
	baseDelay     = 50 * time.Millisecond
	throttleDelay = time.Second
	maxDelay      = 20 * time.Second
	// maxResponse bounds what is read of an answer: SQS's largest, ten
	// received messages of 1 MiB each, fits well under it.
	maxResponse = 32 << 20
)

// Client calls one service. Safe for concurrent use.
type Client struct {
	svc      Service
	endpoint string
	region   string
	creds    aws.CredentialsProvider
	http     aws.HTTPClient
	signer   *v4.Signer
	options  []func(*middleware.Stack) error
	// sleep waits between attempts; tests shorten it.
	sleep func(context.Context, time.Duration) error
}

// New returns a client for svc configured by cfg: its region, credentials
// and HTTP client, and its endpoint found as the SDK's clients find it —
// AWS_ENDPOINT_URL_<SERVICE> through cfg.ConfigSources (shared/awsenv puts
// the environment there), else cfg.BaseEndpoint, else the region's endpoint.
func New(cfg aws.Config, svc Service) *Client {
	hc := cfg.HTTPClient
	if hc == nil {
		// Its own transport: more idle connections to one endpoint than
		// http.DefaultTransport keeps (2), for batches' parallel calls.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 16
		hc = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	}
	return &Client{
		svc: svc, endpoint: endpoint(cfg, svc), region: cfg.Region, creds: cfg.Credentials,
		http: hc, signer: v4.NewSigner(), options: cfg.APIOptions, sleep: wait.For,
	}
}

// Endpoint is the URL calls are posted to.
func (c *Client) Endpoint() string { return c.endpoint }

// serviceEndpoints is what a configuration source offers when it knows a
// service's own endpoint (the SDK's internal/configsources asks the same).
type serviceEndpoints interface {
	GetServiceBaseEndpoint(ctx context.Context, sdkID string) (string, bool, error)
}

func endpoint(cfg aws.Config, svc Service) string {
	for _, s := range cfg.ConfigSources {
		if se, ok := s.(serviceEndpoints); ok {
			if u, found, err := se.GetServiceBaseEndpoint(context.Background(), svc.ID); err == nil && found {
				return u
			}
		}
	}
	if cfg.BaseEndpoint != nil && *cfg.BaseEndpoint != "" {
		return *cfg.BaseEndpoint
	}
	suffix := "amazonaws.com"
	if strings.HasPrefix(cfg.Region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	return "https://" + svc.EndpointPrefix + "." + cfg.Region + "." + suffix
}

// Call invokes op with in (marshalled as JSON) and unmarshals the answer
// into out (nil: the answer is discarded). A refusal is an *APIError.
func (c *Client) Call(ctx context.Context, op string, in, out any) error {
	if len(c.options) == 0 {
		return c.call(ctx, op, in, out)
	}
	stack := middleware.NewStack(op, func() any { return nil })
	for _, o := range c.options {
		if err := o(stack); err != nil {
			return fmt.Errorf("%s %s: API options: %w", c.svc.ID, op, err)
		}
	}
	ctx = middleware.ClearStackValues(ctx)
	ctx = awsmiddleware.SetServiceID(ctx, c.svc.ID)
	ctx = awsmiddleware.SetOperationName(ctx, op)
	_, _, err := stack.Initialize.HandleMiddleware(ctx, in, middleware.HandlerFunc(func(ctx context.Context, _ any) (any, middleware.Metadata, error) {
		return out, middleware.Metadata{}, c.call(ctx, op, in, out)
	}))
	return err
}

func (c *Client) call(ctx context.Context, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s %s: encode the input: %w", c.svc.ID, op, err)
	}
	for attempt := 1; ; attempt++ {
		err := c.attempt(ctx, op, body, out)
		delay, retry := retryable(err)
		if !retry || attempt == maxAttempts || ctx.Err() != nil {
			return err
		}
		if serr := c.sleep(ctx, backoff(delay, attempt)); serr != nil {
			return fmt.Errorf("%w (no retry: %w)", err, serr)
		}
	}
}

func (c *Client) attempt(ctx context.Context, op string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s: %w", c.svc.ID, op, err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-"+c.svc.Version)
	req.Header.Set("X-Amz-Target", c.svc.TargetPrefix+"."+op)
	req.Header.Set("User-Agent", "parley-awsjson")
	if err := c.sign(ctx, req, body); err != nil {
		return fmt.Errorf("%s %s: sign: %w", c.svc.ID, op, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return &transportError{op: c.svc.ID + " " + op, err: err}
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return &transportError{op: c.svc.ID + " " + op, err: err}
	}
	if resp.StatusCode/100 != 2 {
		return decodeError(c.svc.ID, op, resp, answer)
	}
	if out == nil || len(bytes.TrimSpace(answer)) == 0 {
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", c.svc.ID, op, err)
	}
	return nil
}

// sign signs req as SigV4 over body, unless the credentials are anonymous.
func (c *Client) sign(ctx context.Context, req *http.Request, body []byte) error {
	if c.creds == nil {
		return nil
	}
	if _, anonymous := c.creds.(aws.AnonymousCredentials); anonymous {
		return nil
	}
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("retrieve credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	return c.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), c.svc.SigningName, c.region, time.Now())
}

// APIError is a service's refusal of a call.
type APIError struct {
	Service, Operation string
	// Status is the HTTP status of the answer.
	Status int
	// Code is the error's shape name (ResourceNotFoundException,
	// ReceiptHandleIsInvalid), without the namespace the protocol puts
	// before it.
	Code      string
	Message   string
	RequestID string
	// Body is the answer as sent, for the members a service adds to an
	// error (DynamoDB's failed condition carries the item it found).
	Body []byte
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s %s: %s (HTTP %d", e.Service, e.Operation, e.Code, e.Status)
	if e.RequestID != "" {
		s += ", request " + e.RequestID
	}
	return s + "): " + e.Message
}

// ErrorCode, ErrorMessage and ErrorFault make an APIError a smithy.APIError,
// as the SDK's clients' errors are.
func (e *APIError) ErrorCode() string    { return e.Code }
func (e *APIError) ErrorMessage() string { return e.Message }
func (e *APIError) ErrorFault() smithy.ErrorFault {
	if e.Status >= 500 {
		return smithy.FaultServer
	}
	return smithy.FaultClient
}

// Throttled reports whether the service refused the call for its rate.
func (e *APIError) Throttled() bool {
	if e.Status == http.StatusTooManyRequests {
		return true
	}
	switch e.Code {
	case "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException", "ProvisionedThroughputExceededException",
		"TooManyRequestsException", "RequestThrottled", "RequestLimitExceeded", "KmsThrottled",
		"LimitExceededException", "SlowDown", "PriorRequestNotComplete":
		return true
	}
	return false
}

func decodeError(service, op string, resp *http.Response, body []byte) error {
	var shape struct {
		Type     string `json:"__type"`
		Code     string `json:"code"`
		Message  string `json:"message"`
		MessageU string `json:"Message"`
	}
	_ = json.Unmarshal(body, &shape)
	code := resp.Header.Get("X-Amzn-ErrorType")
	if code == "" {
		code = shape.Type
	}
	if code == "" {
		code = shape.Code
	}
	e := &APIError{
		Service: service, Operation: op, Status: resp.StatusCode, Code: shapeName(code),
		Message: shape.Message, RequestID: resp.Header.Get("X-Amzn-RequestId"), Body: body,
	}
	if e.Message == "" {
		e.Message = shape.MessageU
	}
	if e.Code == "" {
		e.Code = http.StatusText(resp.StatusCode)
	}
	if e.Code == "" {
		e.Code = fmt.Sprintf("HTTP%d", resp.StatusCode)
	}
	return e
}

// shapeName strips what the protocol may put around an error's name:
// "com.amazonaws.sqs#QueueDoesNotExist", "ResourceNotFoundException:http://…".
func shapeName(code string) string {
	if i := strings.IndexByte(code, ':'); i >= 0 {
		code = code[:i]
	}
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	return strings.TrimSpace(code)
}

// transportError is a call that got no answer: the connection failed, or
// broke while the answer was read.
type transportError struct {
	op  string
	err error
}

func (e *transportError) Error() string { return e.op + ": " + e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// retryable says whether err is worth another attempt, and the backoff's
// base delay if it is.
func retryable(err error) (time.Duration, bool) {
	if err == nil {
		return 0, false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 0, false
	}
	var api *APIError
	if errors.As(err, &api) {
		if api.Throttled() {
			return throttleDelay, true
		}
		return baseDelay, api.Status >= 500
	}
	var te *transportError
	return baseDelay, errors.As(err, &te)
}

// backoff is a full-jitter delay for the attempt after attempt.
func backoff(base time.Duration, attempt int) time.Duration {
	ceiling := min(base<<(attempt-1), maxDelay)
	return rand.N(ceiling) + 1
}
