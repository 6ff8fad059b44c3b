package events_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// TestEventsIngressFromEnv builds the events function the way its main does,
// from variables, and posts the samples to it.
func TestEventsIngressFromEnv(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	// The events function reads no bot token (finding 9.5): the sources'
	// targets and SLACK_TEAM_ID say which accounts they reach.
	vars := map[string]string{
		resources.EnvTable:                  env.Resources.Table,
		resources.EnvInboundQueueURL:        env.Resources.InboundURL,
		"SLACK_TEAM_ID":                     team,
		"PARLEY_EVENTS_SOURCES":             testSources,
		resources.SecretEventsSecrets:       testSecrets,
		resources.SecretGitHubWebhookSecret: githubSecret,
		"PARLEY_GITHUB_TARGET":              githubTarget,
		"PARLEY_TRIAGE":                     `{"time_zone":"Europe/Berlin","daily_cap":10,"conversations":{"telegram:7000000001:42":{"daily_cap":1}}}`,
	}
	cfg, err := config.FromEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Events.Sources != testSources || cfg.Triage.Default.DailyCap != 10 || cfg.Events.GitHubTarget == "" {
		t.Fatalf("config = %+v", cfg.Events)
	}
	c := &clock{}
	c.Set(time.Now())
	var logs bytes.Buffer
	d := app.Deps{Config: cfg, Log: slog.New(slog.NewJSONHandler(&logs, nil)), DynamoDB: env.DynamoDB, SQS: env.SQS, Now: c.Now}
	h, err := app.EventsIngress(d)
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := standardwebhooks.ParseSecret(eventsSecret)
	post := func(name string) response {
		body := readFile(t, filepath.Join("../../../events/events", name))
		hdr, err := events.SampleHeaders(name, body, secret, ghSecret, c.Now())
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/events", bytes.NewReader(body))
		req.Header = hdr
		return serve(h, req)
	}
	for name, want := range map[string]string{
		"alert.json": "enqueued", "cron-tick.json": "enqueued", "deploy-slack.json": "enqueued",
		"github-push.json": "enqueued", "github-issues-opened.json": "enqueued", "github-ping.json": "ignored/ping",
	} {
		if got := post(name).outcome(); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	// Ada's chat has a cap of 1 of its own.
	body := payload("second", "again", ada)
	req := httptest.NewRequest(http.MethodPost, "/events", bytes.NewReader(body))
	req.Header = events.SignRequest(secret, "second", c.Now(), body)
	if got := serve(h, req).outcome(); got != "suppressed/daily_cap" {
		t.Fatalf("second event for Ada's chat: %s, want the override's daily_cap", got)
	}

	// What the function refuses to start with.
	for name, mut := range map[string]func(map[string]string){
		"a source without a secret": func(v map[string]string) { delete(v, resources.SecretEventsSecrets) },
		"bad secret":                func(v map[string]string) { v[resources.SecretEventsSecrets] = `{"alerts":"whsec_%%%"}` },
		"the old list form": func(v map[string]string) {
			v[resources.SecretEventsSecrets] = "whsec_b2xkLXNlY3JldA==, " + eventsSecret
		},
		"slack without its team":  func(v map[string]string) { delete(v, "SLACK_TEAM_ID") },
		"bad github target":       func(v map[string]string) { v["PARLEY_GITHUB_TARGET"] = "telegram:7000000001" },
		"github target elsewhere": func(v map[string]string) { v["PARLEY_GITHUB_TARGET"] = "discord:1:2" },
	} {
		t.Run(name, func(t *testing.T) {
			vv := map[string]string{}
			for k, v := range vars {
				vv[k] = v
			}
			mut(vv)
			cfg, err := config.FromEnv(func(k string) string { return vv[k] })
			if err != nil {
				t.Fatal(err)
			}
			d.Config = cfg
			if _, err := app.EventsIngress(d); err == nil {
				t.Fatal("EventsIngress started")
			} else if strings.Contains(err.Error(), eventsSecret) || strings.Contains(err.Error(), githubSecret) {
				t.Fatalf("error leaks a secret: %v", err)
			}
		})
	}
	vars["PARLEY_TRIAGE"] = `{"quiet_hours":"22-07","time_zone":"Mars/Base"}`
	_, err = config.FromEnv(func(k string) string { return vars[k] })
	if err == nil || !strings.Contains(err.Error(), "PARLEY_TRIAGE") || !strings.Contains(err.Error(), "Mars/Base") {
		t.Fatalf("bad PARLEY_TRIAGE: %v", err)
	}
}
