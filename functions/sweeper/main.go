// Command sweeper finds and mends stuck work: it re-drives send units nothing
// in flight will deliver, enqueues deferred proactive events when they are
// due, and reports turns cut off and never taken over. Invoked every minute
// by an EventBridge schedule.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/sweeper"
)

func main() {
	deps, err := app.Load(context.Background(), resources.Sweeper.Name)
	if err != nil {
		app.Fatal(nil, err)
	}
	s, err := app.Sweeper(deps)
	if err != nil {
		app.Fatal(deps.Log, err)
	}
	// A failed run is an invocation error (the Errors alarm fires); the next
	// minute's run, or EventBridge's retry, tries again: every sweep is
	// idempotent.
	lambda.StartHandlerFunc(func(ctx context.Context, _ events.EventBridgeEvent) (sweeper.Report, error) {
		return s.Run(ctx)
	})
}
