// Command telegram is the Telegram webhook ingress function: it verifies an
// update, claims its dedupe key, enqueues it on inbound.fifo and only then
// answers 200. Served by a Lambda Function URL.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/functionurl"
	"github.com/parleyhq/parley/shared/resources"
)

func main() {
	deps, err := app.Load(context.Background(), resources.Telegram)
	if err != nil {
		app.Fatal(nil, err)
	}
	h, err := app.TelegramIngress(deps)
	if err != nil {
		app.Fatal(deps.Log, err)
	}
	lambda.StartHandlerFunc(functionurl.Handler(h))
}
