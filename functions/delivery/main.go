// Command delivery consumes outbound.fifo: it sends each unit of a send
// intent to its platform, in order, and commits the receipt. Invoked by an
// SQS event source mapping with ReportBatchItemFailures.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/resources"
)

func main() {
	deps, err := app.Load(context.Background(), resources.Delivery.Name)
	if err != nil {
		app.Fatal(nil, err)
	}
	c, err := app.Delivery(deps)
	if err != nil {
		app.Fatal(deps.Log, err)
	}
	lambda.StartHandlerFunc(c.HandleSQS)
}
