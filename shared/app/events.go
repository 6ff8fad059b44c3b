package app

import (
	"fmt"
	"net/http"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/triage"
)

// EventsIngress is the proactive events webhook handler: Standard Webhooks
// or GitHub signatures, each source reaching only its configured targets,
// then dedupe, triage (quiet hours, cooldown, daily cap) and enqueue.
func EventsIngress(d Deps) (http.Handler, error) {
	r, err := d.eventsReceiver()
	if err != nil {
		return nil, err
	}
	p, err := d.pipeline(r)
	if err != nil {
		return nil, err
	}
	tr, err := triage.New(d.Config.Triage, d.store(), d.Log.With("function", "events"))
	if err != nil {
		return nil, fmt.Errorf("PARLEY_TRIAGE: %w", err)
	}
	p.Triage = tr
	return p, nil
}

// EventsTargets are the chat platforms an events source may target, each
// with the rules that put a target in its canonical form. The events
// function reads no bot token: the accounts are the operator's, in the
// sources' targets (and SLACK_TEAM_ID).
func (d Deps) EventsTargets() map[message.Platform]platform.Canonicalizer {
	out := map[message.Platform]platform.Canonicalizer{}
	for _, a := range registry.Chat() {
		out[a.Platform()] = platform.Canonicalizer(a.Targets(d.Config.Platforms))
	}
	return out
}

// eventsReceiver builds the events receiver from its sources' configuration.
func (d Deps) eventsReceiver() (*events.Receiver, error) {
	cfg := d.Config.Events
	canon := d.EventsTargets()
	sources, err := events.ParseSources(cfg.Sources, cfg.Secrets, cfg.GitHubSecret, cfg.GitHubTarget, canon)
	if err != nil {
		return nil, err
	}
	r := &events.Receiver{Sources: sources, Canonical: canon}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		d.Log.Warn("no events source is configured: every request to the events webhook is refused (PARLEY_EVENTS_SOURCES)")
	}
	return r, nil
}
