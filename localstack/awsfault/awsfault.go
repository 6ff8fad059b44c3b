// Package awsfault injects failures into real AWS calls, for tests that crash
// Parley at each durable step boundary. It is an Initialize middleware, which
// the SDK's clients run once per call, outside their retries. A fault
// either stops a call before it is sent (the write never happens) or, After,
// lets it succeed and then loses the answer (the write happened; the caller
// thinks it failed — a crash right after the step, as far as the caller can
// tell).
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
	// (e.g. *ddb.UpdateItemInput for one key prefix).
	Match func(input any) bool
	// After lets the call succeed, then returns ErrInjected.
	After bool
	// Times is how many matching calls fail. Defaults to 1.
	Times int
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
// use of it.
func (in *Injector) take(op string, input any) *armed {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, a := range in.faults {
		if a.left > 0 && a.Op == op && (a.Match == nil || a.Match(input)) {
			a.left--
			a.fired++
			return a
		}
	}
	return nil
}

// Attach returns a copy of cfg whose clients pass through the injector.
func (in *Injector) Attach(cfg aws.Config) aws.Config {
	cfg = cfg.Copy()
	cfg.APIOptions = append(cfg.APIOptions, func(s *middleware.Stack) error {
		// Initialize runs once per call, outside the SDK's retry loop, so an
		// injected failure is final, as a crash would be.
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("ParleyFault",
			func(ctx context.Context, mi middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				op := awsmiddleware.GetServiceID(ctx) + "." + awsmiddleware.GetOperationName(ctx)
				f := in.take(op, mi.Parameters)
				if f == nil {
					return next.HandleInitialize(ctx, mi)
				}
				if !f.After {
					return middleware.InitializeOutput{}, middleware.Metadata{}, fmt.Errorf("%s before the call: %w", op, ErrInjected)
				}
				out, md, err := next.HandleInitialize(ctx, mi)
				if err != nil {
					return out, md, err
				}
				return middleware.InitializeOutput{}, md, fmt.Errorf("%s after the call: %w", op, ErrInjected)
			}), middleware.Before)
	})
	return cfg
}
