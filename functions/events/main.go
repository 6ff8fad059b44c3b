// Command events is the proactive events ingress function: it verifies a
// Standard Webhooks or GitHub signature, claims the event id, triages the
// event (quiet hours, cooldown, daily cap), enqueues it on inbound.fifo and
// only then answers 200. Served by a Lambda Function URL.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/functionurl"
	"github.com/parleyhq/parley/shared/resources"

	// Quiet hours read IANA time zones; provided.al2023 may lack zoneinfo.
	_ "time/tzdata"
)

func main() {
	deps, err := app.Load(context.Background(), resources.Events.Name)
	if err != nil {
		app.Fatal(nil, err)
	}
	h, err := app.EventsIngress(deps)
	if err != nil {
		app.Fatal(deps.Log, err)
	}
	lambda.StartHandlerFunc(functionurl.Handler(h))
}
