// Command slack is the Slack Events API ingress function: it verifies an
// event, answers url_verification, claims the event's dedupe key, enqueues it
// on inbound.fifo and only then answers 200. Served by a Lambda Function URL.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/functionurl"
	"github.com/parleyhq/parley/shared/resources"
)

func main() {
	deps, err := app.Load(context.Background(), resources.Slack)
	if err != nil {
		app.Fatal(nil, err)
	}
	h, err := app.SlackIngress(deps)
	if err != nil {
		app.Fatal(deps.Log, err)
	}
	lambda.StartHandlerFunc(functionurl.Handler(h))
}
