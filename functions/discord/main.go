// Command discord is the Discord interactions ingress function: it verifies
// an interaction, claims its dedupe key, enqueues it on inbound.fifo and
// only then answers with Discord's deferred response. Served by a Lambda
// Function URL, which is the application's Interactions Endpoint URL.
package main

import (
	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/platform/discord"
)

func main() { app.StartIngress(discord.Adapter) }
