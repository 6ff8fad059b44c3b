// Command googlechat is the Google Chat app's HTTP endpoint: it verifies the
// bearer token Google signs, claims the event's dedupe key, enqueues it on
// inbound.fifo and only then answers. Served by a Lambda Function URL (the
// stack's GooglechatUrl).
package main

import (
	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/platform/googlechat"
)

func main() { app.StartIngress(googlechat.Adapter) }
