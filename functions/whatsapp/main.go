// Command whatsapp is the WhatsApp Cloud API ingress function: it answers
// Meta's verification GET, verifies a webhook's X-Hub-Signature-256, claims
// each message's and status's dedupe key, enqueues them on inbound.fifo and
// only then answers 200. Served by a Lambda Function URL.
package main

import (
	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
)

func main() { app.StartIngress(whatsapp.Adapter) }
