// Command telegram is the Telegram webhook ingress function: it verifies an
// update, claims its dedupe key, enqueues it on inbound.fifo and only then
// answers 200. Served by a Lambda Function URL.
package main

import (
	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/platform/telegram"
)

func main() { app.StartIngress(telegram.Adapter) }
