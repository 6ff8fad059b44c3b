package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// post signs a sample webhook the way its platform would and posts it to the
// runner. The platform is the file's parent folder under events/ unless given.
func post(ctx context.Context, out io.Writer, getenv config.Getenv, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return fmt.Errorf("usage: parley-local post FILE [telegram|slack|events]")
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
	env := func(k string) string { return cmp.Or(getenv(k), demo[k]) }
	now := time.Now()
	var hdr http.Header
	switch platform {
	case "telegram":
		hdr = fakeplatform.TelegramHeaders(env(resources.SecretTelegramWebhookSecret))
	case "slack":
		hdr = fakeplatform.SignSlack(env(resources.SecretSlackSigningSecret), now, body)
	case "events":
		secrets := strings.FieldsFunc(env(resources.SecretEventsSecrets), func(r rune) bool { return r == ',' || r == ' ' })
		if len(secrets) == 0 {
			return fmt.Errorf("set %s to the secret the events function verifies with", resources.SecretEventsSecrets)
		}
		secret, err := standardwebhooks.ParseSecret(secrets[0])
		if err != nil {
			return err
		}
		hdr, err = events.SampleHeaders(filepath.Base(file), body, secret, env(resources.SecretGitHubWebhookSecret), now)
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("cannot tell the platform of %s: pass telegram, slack or events", file)
	}
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
	return nil
}
