// Command slack is the Slack Events API ingress function: it verifies a
// request's signature, answers url_verification, claims each event's dedupe
// key, enqueues it on inbound.fifo and only then answers 200. Served by a
// Lambda Function URL.
package main

import (
	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/platform/slack"
)

func main() { app.StartIngress(slack.Adapter) }
