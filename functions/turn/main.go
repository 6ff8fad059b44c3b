// Command turn consumes inbound.fifo: for each event it claims the turn, calls
// the agent, persists one send intent and enqueues its units on
// outbound.fifo. Invoked by an SQS event source mapping with
// ReportBatchItemFailures.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/resources"
)

func main() {
	deps, err := app.Load(context.Background(), resources.Turn.Name)
	if err != nil {
		app.Fatal(nil, err)
	}
	c, err := app.Turn(deps)
	if err != nil {
		app.Fatal(deps.Log, err)
	}
	lambda.StartHandlerFunc(c.HandleSQS)
}
