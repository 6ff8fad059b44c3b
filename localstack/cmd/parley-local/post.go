package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// post signs a sample webhook the way its platform would and posts it to the
// runner. The platform is the file's parent folder under events/ unless given.
func post(ctx context.Context, out io.Writer, getenv config.Getenv, args []string) error {
	fs := flags("post", out)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if args = fs.Args(); len(args) < 1 || len(args) > 2 {
		fs.Usage()
		return errors.New("post takes FILE and, optionally, its platform")
	}
	file := args[0]
	platform := filepath.Base(filepath.Dir(file))
	if len(args) == 2 {
		platform = args[1]
	}
	body, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	now := time.Now()
	// Dated now: Parley ignores a sample of 2025 as a replay past its
	// dedupe window, and a WhatsApp reply to it would be outside the
	// person's 24-hour window.
	body = fakeplatform.Dated(message.Platform(platform), body, now)
	var hdr http.Header
	switch platform {
	case "events":
		secret, githubSecret, err := eventsSecrets(getenv, body)
		if err != nil {
			return err
		}
		hdr, err = events.SampleHeaders(filepath.Base(file), body, secret, githubSecret, now)
		if err != nil {
			return err
		}
	default:
		if _, ok := registry.Lookup(message.Platform(platform)); !ok {
			return fmt.Errorf("cannot tell the platform of %s: pass telegram, slack, discord, line, whatsapp, teams, googlechat or events", file)
		}
		w, err := signer(getenv).Sign(message.Platform(platform), body, now)
		if err != nil {
			return err
		}
		body, hdr = w.Body, w.Header
	}
	return send(ctx, out, getenv, platform, hdr, body)
}

// send posts a signed webhook to the runner's route of platform, and prints
// the answer.
func send(ctx context.Context, out io.Writer, getenv config.Getenv, platform string, hdr http.Header, body []byte) error {
	url := "http://" + cmp.Or(getenv("PARLEY_LISTEN"), "127.0.0.1:8787") + "/" + platform
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("post to %s (is make run running?): %w", url, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	fmt.Fprintf(out, "%s %s\nParley-Ack: %s\n%s", resp.Proto, resp.Status, resp.Header.Get("Parley-Ack"), answer)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	if platform == "telegram" {
		// What Telegram does with the answer: a Bot API method in it (a
		// press's answerCallbackQuery) is called for the bot.
		env := func(k string) string { return cmp.Or(getenv(k), demo[k]) }
		base := cmp.Or(getenv(telegram.SettingAPIBaseURL), "http://"+cmp.Or(getenv("PARLEY_LISTEN"), "127.0.0.1:8787")+fakeRoot+"/telegram")
		if err := faketelegram.ActOnAnswer(ctx, http.DefaultClient, base, env(telegram.SettingBotToken), resp.StatusCode, resp.Header.Get("Content-Type"), answer); err != nil {
			fmt.Fprintln(out, "(Telegram, acting on the answer:", err.Error()+")")
		}
	}
	return nil
}

// eventsSecrets finds the secrets to sign an events sample with: the one of
// the source the payload names, from PARLEY_EVENTS_SECRETS (the demo secret
// when unset), and GITHUB_WEBHOOK_SECRET (the demo one when unset).
func eventsSecrets(getenv config.Getenv, body []byte) (secret, github standardwebhooks.Secret, err error) {
	if github, err = standardwebhooks.ParseSecret(cmp.Or(getenv(resources.SecretGitHubWebhookSecret), demoGitHubSecret)); err != nil {
		return secret, github, fmt.Errorf("%s: %w", resources.SecretGitHubWebhookSecret, err)
	}
	raw := getenv(resources.SecretEventsSecrets)
	if raw == "" {
		secret, err = standardwebhooks.ParseSecret(demoEventsSecret)
		return secret, github, err
	}
	var p struct {
		Source string `json:"source"`
	}
	_ = json.Unmarshal(body, &p)
	var bySource map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &bySource); err != nil {
		return secret, github, fmt.Errorf("%s is not a JSON object of source names to secrets", resources.SecretEventsSecrets)
	}
	v, ok := bySource[p.Source]
	if !ok {
		return secret, github, fmt.Errorf("%s has no secret for the sample's source %q", resources.SecretEventsSecrets, p.Source)
	}
	var one string
	var many []string
	if json.Unmarshal(v, &one) != nil {
		if json.Unmarshal(v, &many) != nil || len(many) == 0 {
			return secret, github, fmt.Errorf("%s: source %q: want a secret or a list of secrets", resources.SecretEventsSecrets, p.Source)
		}
		one = many[0]
	}
	secret, err = standardwebhooks.ParseSecret(one)
	return secret, github, err
}

// signer signs webhooks as the platforms do, with make run's settings (the
// user's, else the demo's), for the fakes of the runner at PARLEY_LISTEN.
func signer(getenv config.Getenv) fakeplatform.Signer {
	return fakeplatform.Signer{
		Env:      func(k string) string { return cmp.Or(getenv(k), demo[k]) },
		FakeRoot: "http://" + cmp.Or(getenv("PARLEY_LISTEN"), "127.0.0.1:8787") + fakeRoot,
	}
}
