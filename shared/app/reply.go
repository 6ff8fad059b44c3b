package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/triage"
)

// Reply is the handler of what an agent calls: POST /reply (the reply to a
// turn it answered with 202: verified, checked against the envelope's
// limits, recorded on the waiting turn, which it wakes) and POST /send (its
// own message into a thread PARLEY_SEND_TARGETS allows: deduped on its
// idempotency key, optionally triaged, and enqueued in the thread's order
// like any webhook), POST /media (a presigned PUT for a file the agent
// will send, and its upload_id), and POST /history/erase (forget a
// thread's transcript).
func Reply(d Deps) (http.Handler, error) {
	d = d.withBucket()
	if err := d.Config.RequireStore(); err != nil {
		return nil, err
	}
	for _, q := range []resources.QueueSpec{resources.Inbound, resources.Outbound} {
		if err := d.Config.RequireQueue(q); err != nil {
			return nil, err
		}
	}
	secret, err := standardwebhooks.ParseSecret(d.Config.Agent.Secret)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", resources.SecretAgentSecret, err)
	}
	verifier := standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{secret}}
	caps := func(p message.Platform) (message.Capabilities, bool) {
		a, ok := registry.Lookup(p)
		if !ok {
			return message.Capabilities{}, false
		}
		return a.Capabilities(), true
	}
	log := d.Log.With("function", resources.Reply.Name)
	canon := d.EventsTargets()
	targets, err := sendTargets(d.Config.SendTargets, canon)
	if err != nil {
		return nil, fmt.Errorf("PARLEY_SEND_TARGETS: %w", err)
	}
	sends, err := d.pipeline(&agentapi.SendReceiver{
		Verifier: verifier, Targets: targets, Canon: canon, Envelope: d.Config.Envelope, Capabilities: caps,
		Private: registry.Private, Now: d.Now,
	})
	if err != nil {
		return nil, err
	}
	tr, err := triage.New(d.Config.Triage, d.store(), log)
	if err != nil {
		return nil, fmt.Errorf("PARLEY_TRIAGE: %w", err)
	}
	sends.Triage = tr
	senders, err := d.senders()
	if err != nil {
		return nil, err
	}
	previewers := map[message.Platform]agentapi.Previewer{}
	for p, s := range senders {
		if pr, ok := s.(platform.Previewer); ok {
			previewers[p] = pr
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/reply", &agentapi.Handler{
		Verifier: verifier, Awaits: d.store(), Intents: d.store(), Outbox: queue.New(d.SQS, d.Config.OutboundQueueURL),
		Waker:  queue.New(d.SQS, d.Config.InboundQueueURL),
		Claims: d.store(), AsyncTimeout: d.Config.AsyncTimeout,
		Envelope: d.Config.Envelope, Capabilities: caps, Previews: d.store(), Previewers: previewers, Now: d.Now, Log: log,
	})
	mux.Handle("/reply/preview", &agentapi.PreviewHandler{
		Verifier: verifier, Awaits: d.store(), Previews: d.store(), Previewers: previewers, Claims: d.store(),
		Config: d.Config.Preview, TTL: d.turnConfig().WithDefaults().IntentTTL, Now: d.Now, Log: log,
	})
	mux.Handle("/send", sends)
	mux.Handle("/media", &agentapi.MediaHandler{
		Verifier: verifier, Objects: d.uploads(), Config: d.Config.Media, Now: d.Now, Log: log,
	})
	mux.Handle("/history/erase", &agentapi.EraseHandler{
		Verifier: verifier, Store: d.store(), Now: d.Now, Log: log,
		Sends: func(p message.Platform) bool { _, ok := registry.Lookup(p); return ok },
	})
	return mux, nil
}

// sendTargets reads PARLEY_SEND_TARGETS: a JSON list of thread keys whose
// last part may be *.
func sendTargets(raw string, canon map[message.Platform]platform.Canonicalizer) ([]events.Pattern, error) {
	if raw == "" {
		return nil, nil
	}
	var keys []string
	if err := json.Unmarshal([]byte(raw), &keys); err != nil {
		return nil, errors.New(`want a JSON list of thread keys, e.g. ["telegram:<bot id>:*"]`)
	}
	out := make([]events.Pattern, 0, len(keys))
	for _, k := range keys {
		var c platform.Canonicalizer
		if t, err := events.ParseTarget(k); err == nil {
			c = canon[t.Platform]
		}
		p, err := events.ParsePattern(k, c)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
