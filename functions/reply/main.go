// Command reply serves the agent's POST /reply: the reply to a turn it
// answered with 202, recorded on the waiting turn, which then delivers it.
// Served by a Lambda Function URL.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/functionurl"
	"github.com/parleyhq/parley/shared/resources"
)

func main() {
	deps, err := app.Load(context.Background(), resources.Reply.Name)
	if err != nil {
		app.Fatal(nil, err)
	}
	h, err := app.Reply(deps)
	if err != nil {
		app.Fatal(deps.Log, err)
	}
	lambda.StartHandlerFunc(functionurl.Handler(h))
}
