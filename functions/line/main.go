// Command line is the LINE webhook ingress function: it verifies a batch of
// events, claims each event's dedupe key, enqueues them on inbound.fifo and
// only then answers 200. Served by a Lambda Function URL.
package main

import (
	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/platform/line"
)

func main() { app.StartIngress(line.Adapter) }
