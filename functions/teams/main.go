// Command teams is the Microsoft Teams messaging endpoint: it verifies the
// Bot Framework connector's token, claims the activity's dedupe key,
// enqueues it on inbound.fifo and only then answers 200. Served by a Lambda
// Function URL (the stack's TeamsUrl).
package main

import (
	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/platform/teams"
)

func main() { app.StartIngress(teams.Adapter) }
