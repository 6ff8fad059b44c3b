package app

import (
	"fmt"
	"net/http"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/triage"
)

// EventsIngress is the proactive events webhook handler: Standard Webhooks
// or GitHub signatures, then dedupe, triage (quiet hours, cooldown, daily
// cap) and enqueue.
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

// eventsReceiver builds the events receiver. Events may target the chat
// platforms Parley can send on: Telegram (its bot's account only) when a
// bot token is set, Slack (any workspace) when a bot token is set.
func (d Deps) eventsReceiver() (*events.Receiver, error) {
	cfg := d.Config.Events
	r := &events.Receiver{GitHubSecret: cfg.GitHubSecret, Targets: map[message.Platform][]string{}}
	for i, s := range cfg.Secrets {
		secret, err := standardwebhooks.ParseSecret(s)
		if err != nil {
			return nil, fmt.Errorf("%s: secret %d: %w", resources.SecretEventsSecrets, i+1, err)
		}
		r.Secrets = append(r.Secrets, secret)
	}
	if tok := d.Config.Telegram.BotToken; tok != "" {
		id, err := telegram.BotIDFromToken(tok)
		if err != nil {
			return nil, err
		}
		r.Targets[message.Telegram] = []string{id}
	}
	if d.Config.Slack.BotToken != "" {
		r.Targets[message.Slack] = nil
	}
	if cfg.GitHubTarget != "" {
		t, err := events.ParseTarget(cfg.GitHubTarget)
		if err != nil {
			return nil, fmt.Errorf("PARLEY_GITHUB_TARGET: %w", err)
		}
		r.GitHubTarget = t
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}
