package app

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/parleyhq/parley/shared/functionurl"
	"github.com/parleyhq/parley/shared/platform"
)

// StartIngress is the whole main of a chat platform's ingress function:
// load its settings and secrets, build its webhook handler, and serve it
// behind a Function URL. A start-up failure is logged and ends the process
// (Lambda reports an init error).
func StartIngress(a platform.Adapter) {
	deps, err := Load(context.Background(), string(a.Platform()))
	if err != nil {
		Fatal(nil, err)
	}
	h, err := Ingress(deps, a)
	if err != nil {
		Fatal(deps.Log, err)
	}
	lambda.StartHandlerFunc(functionurl.Handler(h))
}
