// Package awsfault injects failures into real AWS calls made with the SDK's
// clients, for tests that crash Parley at each durable step boundary, or
// make the SDK retry a write that was applied. A fault does one of three
// things to a call:
//
//   - Before (the default): it fails before it is sent; the write never
//     happens.
//   - After: it succeeds, and then its answer is lost to the caller, who
//     sees an error: a crash right after the step, as far as the caller can
//     tell. Nothing retries it.
//   - LostAnswer: it is sent and applied, but its answer is lost on the way
//     back, as a broken connection or a 5xx after the write would lose it,
//     and the SDK's own retryer sends it again. The second attempt meets
//     what the first one wrote: a conditional write finds its condition
//     failed by its own earlier success.
//
// Before and After are an Initialize middleware, which runs once per call,
// outside the SDK's retry loop. LostAnswer is a Finalize middleware inside
// the retry loop: it turns the call's first successful answer into a
// retryable error, so the retryer's next attempt is a real second request.
package awsfault

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// ErrInjected is the error an injected fault returns.
var ErrInjected = errors.New("awsfault: injected failure")

// Fault describes one failure to inject.
type Fault struct {
	// Op is "Service.Operation", e.g. "SQS.SendMessage", "DynamoDB.UpdateItem".
	Op string
	// Match, when set, restricts the fault to calls whose input it accepts
	// (e.g. a *dynamodb.UpdateItemInput for one key prefix).
	Match func(input any) bool
	// After lets the call succeed, then returns ErrInjected.
	After bool
	// LostAnswer lets the call's first attempt be applied and loses its
	// answer as a retryable error, so the SDK sends the call again. It
	// counts as fired only when an answer was lost: a call whose first
	// attempt failed on its own was not applied, and is left alone.
	LostAnswer bool
	// Pass lets the call through unharmed: the fault is only its OnFire,
	// run just before the call (another actor's move, staged in the
	// window before a write).
	Pass bool
	// Times is how many matching calls fail. Defaults to 1.
	Times int
	// OnFire, when set, is called with the call's input each time the
	// fault fires.
	OnFire func(input any)
}

// Injector holds the faults of one test. Safe for concurrent use.
type Injector struct {
	mu     sync.Mutex
	faults []*armed
}

type armed struct {
	Fault
	left  int
	fired int
}

// New returns an Injector with no faults.
func New() *Injector { return &Injector{} }

// Add arms a fault and returns a function reporting how often it fired.
func (in *Injector) Add(f Fault) (fired func() int) {
	a := &armed{Fault: f, left: max(f.Times, 1)}
	in.mu.Lock()
	in.faults = append(in.faults, a)
	in.mu.Unlock()
	return func() int {
		in.mu.Lock()
		defer in.mu.Unlock()
		return a.fired
	}
}

// take returns the first armed fault matching op and input, and disarms one
// use of it. A LostAnswer fault is counted when it fires (lose).
func (in *Injector) take(op string, input any) *armed {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, a := range in.faults {
		if a.left > 0 && a.Op == op && (a.Match == nil || a.Match(input)) {
			a.left--
			if !a.LostAnswer {
				a.fired++
			}
			return a
		}
	}
	return nil
}

func (in *Injector) fire(a *armed, input any) {
	in.mu.Lock()
	a.fired++
	in.mu.Unlock()
	if a.OnFire != nil {
		a.OnFire(input)
	}
}

// lostKey is the stack value that carries a call's LostAnswer fault from its
// Initialize step into each of its attempts.
type lostKey struct{}

// pendingLoss is one call's LostAnswer fault: lost says whether an answer
// was lost already (only the first successful attempt's is).
type pendingLoss struct {
	fault *armed
	input any
	lost  bool
}

// LostAnswerError is what the SDK's retryer sees in place of an applied
// attempt's answer. It is retryable, as a broken connection or a 5xx is.
type LostAnswerError struct{ Op string }

func (e *LostAnswerError) Error() string {
	return e.Op + ": the answer was lost after the request was applied: " + ErrInjected.Error()
}

// RetryableError makes the SDK's retryer try again.
func (e *LostAnswerError) RetryableError() bool { return true }

func (e *LostAnswerError) Unwrap() error { return ErrInjected }

// Attach returns a copy of cfg whose clients pass through the injector:
// every call they send. A presigned request is built, not sent, so it is
// left alone (its URL is used by someone else, outside the SDK).
func (in *Injector) Attach(cfg aws.Config) aws.Config {
	cfg = cfg.Copy()
	cfg.APIOptions = append(cfg.APIOptions, func(s *middleware.Stack) error {
		if Presigning(s) {
			return nil
		}
		// Initialize runs once per call, outside the SDK's retry loop, so an
		// injected failure is final, as a crash would be.
		if err := s.Initialize.Add(middleware.InitializeMiddlewareFunc("ParleyFault",
			func(ctx context.Context, mi middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				op := awsmiddleware.GetServiceID(ctx) + "." + awsmiddleware.GetOperationName(ctx)
				f := in.take(op, mi.Parameters)
				if f != nil && !f.LostAnswer && f.OnFire != nil {
					f.OnFire(mi.Parameters)
				}
				switch {
				case f == nil || f.Pass:
					return next.HandleInitialize(ctx, mi)
				case f.LostAnswer:
					return next.HandleInitialize(middleware.WithStackValue(ctx, lostKey{}, &pendingLoss{fault: f, input: mi.Parameters}), mi)
				case !f.After:
					return middleware.InitializeOutput{}, middleware.Metadata{}, fmt.Errorf("%s before the call: %w", op, ErrInjected)
				}
				out, md, err := next.HandleInitialize(ctx, mi)
				if err != nil {
					return out, md, err
				}
				return middleware.InitializeOutput{}, md, fmt.Errorf("%s after the call: %w", op, ErrInjected)
			}), middleware.Before); err != nil {
			return err
		}
		// After the retryer, before signing: once per attempt, each
		// attempt a request sent and answered for real.
		return s.Finalize.Insert(middleware.FinalizeMiddlewareFunc("ParleyLostAnswer",
			func(ctx context.Context, fi middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleFinalize(ctx, fi)
				p, _ := middleware.GetStackValue(ctx, lostKey{}).(*pendingLoss)
				if err != nil || p == nil || p.lost {
					return out, md, err
				}
				p.lost = true
				in.fire(p.fault, p.input)
				op := awsmiddleware.GetServiceID(ctx) + "." + awsmiddleware.GetOperationName(ctx)
				return middleware.FinalizeOutput{}, md, &LostAnswerError{Op: op}
			}), "Retry", middleware.After)
	})
	return cfg
}

// Presigning reports whether s is a presigner's stack: one that builds a
// signed request and sends nothing, so it has no retry step (the SDK's
// presign clients take it out) and nothing to fail, lose or count.
func Presigning(s *middleware.Stack) bool {
	_, retries := s.Finalize.Get("Retry")
	return !retries
}
