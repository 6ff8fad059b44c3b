package app

import (
	"fmt"
	"net/http"

	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// Reply is the agent's POST /reply handler: it verifies the agent's
// signature, checks the post against the envelope's limits, records it on
// the waiting turn and wakes the turn.
func Reply(d Deps) (http.Handler, error) {
	if err := d.Config.RequireStore(); err != nil {
		return nil, err
	}
	if err := d.Config.RequireQueue(resources.Inbound); err != nil {
		return nil, err
	}
	secret, err := standardwebhooks.ParseSecret(d.Config.Agent.Secret)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", resources.SecretAgentSecret, err)
	}
	return &agentapi.Handler{
		Verifier: standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{secret}},
		Awaits:   d.store(),
		Waker:    queue.New(d.SQS, d.Config.InboundQueueURL),
		Envelope: d.Config.Envelope,
		Capabilities: func(p message.Platform) (message.Capabilities, bool) {
			a, ok := registry.Lookup(p)
			if !ok {
				return message.Capabilities{}, false
			}
			return a.Capabilities(), true
		},
		Now: d.Now,
		Log: d.Log.With("function", resources.Reply.Name),
	}, nil
}
