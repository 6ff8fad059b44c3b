package config_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/platform/discord"
	"github.com/parleyhq/parley/shared/platform/googlechat"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/teams"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
	"github.com/parleyhq/parley/shared/resources"
)

// Secrets Manager has no emulator on these machines. secretsServer speaks its
// wire protocol (JSON 1.1, GetSecretValue only; one secret per key) so Load
// runs with the client functions use (the SDK's Secrets Manager client) end to end: request,
// response, error and all.
type secretsServer struct {
	mu       sync.Mutex
	secrets  map[string]string // SecretId -> SecretString
	fail     map[string]string // SecretId -> error type answered
	requests []string          // SecretIds asked for
}

func (s *secretsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" {
		http.Error(w, "unexpected operation "+r.Header.Get("X-Amz-Target"), http.StatusBadRequest)
		return
	}
	var in struct{ SecretId string }
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &in)
	s.mu.Lock()
	s.requests = append(s.requests, in.SecretId)
	secret, ok := s.secrets[in.SecretId]
	failure := s.fail[in.SecretId]
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if failure != "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"` + failure + `","Message":"no"}`))
		return
	}
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"ResourceNotFoundException","Message":"Secrets Manager can't find the specified secret."}`))
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"ARN": in.SecretId, "Name": "parley", "SecretString": secret})
}

// awsConfigFor returns Load's AWS config callback pointed at srv, counting
// its calls.
func awsConfigFor(srv *httptest.Server, calls *int) func(context.Context) (aws.Config, error) {
	return func(context.Context) (aws.Config, error) {
		*calls++
		return aws.Config{
			Region: "us-east-1", Credentials: aws.AnonymousCredentials{},
			BaseEndpoint: aws.String(srv.URL), HTTPClient: srv.Client(),
		}, nil
	}
}

// secretID names a test secret the way the stack names one: <stack>/<KEY>.
func secretID(key string) string { return "Parley/" + key }

// clearEnv sets every variable Load may read to empty for this test, so the
// developer's own environment cannot leak in.
func clearEnv(t *testing.T) {
	for _, k := range append(registry.SecretKeys(), resources.EnvSecrets, resources.EnvTable,
		resources.EnvInboundQueueURL, resources.EnvOutboundQueueURL, "PARLEY_AGENT_URL", "PARLEY_AGENT_TIMEOUT",
		"PARLEY_LOG_LEVEL", "PARLEY_DEDUPE_TTL", "PARLEY_TRIAGE", "PARLEY_UNKNOWN_SEND_POLICY") {
		t.Setenv(k, "")
	}
}

func secretsEnv(t *testing.T, keys ...string) {
	m := map[string]string{}
	for _, k := range keys {
		m[k] = secretID(k)
	}
	b, _ := json.Marshal(m)
	t.Setenv(resources.EnvSecrets, string(b))
}

// Load reads the process environment, so these tests cannot run in parallel.

func TestLoadWithoutSecretsReadsTheEnvironmentOnly(t *testing.T) {
	clearEnv(t)
	t.Setenv(resources.EnvTable, "parley-State")
	t.Setenv(telegram.SettingBotToken, "7000000001:env")
	calls := 0
	c, err := config.Load(t.Context(), func(context.Context) (aws.Config, error) {
		calls++
		return aws.Config{}, errors.New("must not be called")
	}, registry.MustFunction("telegram").Secrets)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Fatalf("AWS config loaded %d times without %s", calls, resources.EnvSecrets)
	}
	if c.Table != "parley-State" || c.Platforms(telegram.SettingBotToken) != "7000000001:env" || c.DedupeTTL != 192*time.Hour {
		t.Fatalf("config = table %q, token %q, ttl %v", c.Table, c.Platforms(telegram.SettingBotToken), c.DedupeTTL)
	}
}

// TestLoadReadsOnlyTheFunctionsOwnSecrets (finding 9.5): one secret per key,
// so each function reads (and IAM lets it read) only its own.
func TestLoadReadsOnlyTheFunctionsOwnSecrets(t *testing.T) {
	sm := &secretsServer{secrets: map[string]string{
		secretID(telegram.SettingBotToken):    "7000000001:from-secret", // the environment wins
		secretID(slack.SettingBotToken):       "xoxb-from-secret",       // fills an empty variable
		secretID(resources.SecretAgentSecret): "agent-from-secret",
	}}
	srv := httptest.NewServer(sm)
	defer srv.Close()

	clearEnv(t)
	secretsEnv(t, registry.MustFunction(resources.Turn.Name).Secrets...) // the agent secret and both bot tokens
	t.Setenv(telegram.SettingBotToken, "7000000001:from-env")
	calls := 0
	c, err := config.Load(t.Context(), awsConfigFor(srv, &calls), registry.MustFunction(resources.Turn.Name).Secrets)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(sm.requests)
	want := []string{secretID(discord.SettingBotToken), secretID(googlechat.SettingServiceAccount), secretID(line.SettingChannelAccessToken),
		secretID(resources.SecretAgentSecret), secretID(slack.SettingBotToken), secretID(teams.SettingAppPassword),
		secretID(telegram.SettingBotToken), secretID(whatsapp.SettingAccessToken)}
	if calls != 1 || !slices.Equal(sm.requests, want) {
		t.Fatalf("AWS config loaded %d times, secrets asked for %v; want one config and %v", calls, sm.requests, want)
	}
	checks := []struct{ name, got, want string }{
		{"Telegram.BotToken (environment wins)", c.Platforms(telegram.SettingBotToken), "7000000001:from-env"},
		{"Slack.BotToken (from its secret)", c.Platforms(slack.SettingBotToken), "xoxb-from-secret"},
		{"Agent.Secret (from its secret)", c.Agent.Secret, "agent-from-secret"},
		{"Slack.SigningSecret (not this function's)", c.Platforms(slack.SettingSigningSecret), ""},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %q, want %q", ck.name, ck.got, ck.want)
		}
	}

	// A key the function does not read is refused, before any read.
	clearEnv(t)
	secretsEnv(t, slack.SettingSigningSecret)
	sm.requests = nil
	if _, err := config.Load(t.Context(), awsConfigFor(srv, &calls), registry.MustFunction("telegram").Secrets); err == nil || !strings.Contains(err.Error(), slack.SettingSigningSecret) {
		t.Fatalf("a secret of another function: %v", err)
	}
	if len(sm.requests) != 0 {
		t.Fatalf("read %v", sm.requests)
	}
}

func TestLoadFailures(t *testing.T) {
	const leaked = "s3cr3t-token-value"
	sm := &secretsServer{secrets: map[string]string{
		secretID(resources.SecretAgentSecret): leaked,
	}, fail: map[string]string{
		secretID(telegram.SettingBotToken): "AccessDeniedException",
		secretID(slack.SettingBotToken):    "DecryptionFailure",
	}}
	srv := httptest.NewServer(sm)
	defer srv.Close()

	// A platform the operator does not use has no secrets. Under a grant on
	// <name>-?????? AWS answers a missing secret with AccessDeniedException
	// (no full ARN exists to match), so both codes leave the key unset and
	// are reported, never fatal.
	t.Run("MissingSecretIsUnset", func(t *testing.T) {
		clearEnv(t)
		secretsEnv(t, telegram.SettingBotToken, resources.SecretAgentSecret)
		t.Setenv(resources.EnvSecrets, strings.Replace(os.Getenv(resources.EnvSecrets), "}",
			`,"SLACK_BOT_TOKEN":"Parley/never-created"}`, 1))
		calls := 0
		c, err := config.Load(t.Context(), awsConfigFor(srv, &calls), registry.MustFunction(resources.Turn.Name).Secrets)
		if err != nil || c.Platforms(slack.SettingBotToken) != "" || c.Platforms(telegram.SettingBotToken) != "" || c.Agent.Secret != leaked {
			t.Fatalf("Load = %v; slack token %q, telegram token %q", err, c.Platforms(slack.SettingBotToken), c.Platforms(telegram.SettingBotToken))
		}
		want := []config.UnreadSecret{
			{Key: slack.SettingBotToken, SecretID: "Parley/never-created", Code: "ResourceNotFoundException"},
			{Key: telegram.SettingBotToken, SecretID: secretID(telegram.SettingBotToken), Code: "AccessDeniedException"},
		}
		if !slices.Equal(c.Unread, want) {
			t.Fatalf("Unread = %+v, want %+v", c.Unread, want)
		}
	})
	t.Run("ReadFailureNamesTheKeyNotTheValue", func(t *testing.T) {
		clearEnv(t)
		secretsEnv(t, slack.SettingBotToken, resources.SecretAgentSecret)
		calls := 0
		_, err := config.Load(t.Context(), awsConfigFor(srv, &calls), registry.MustFunction(resources.Turn.Name).Secrets)
		if err == nil || !strings.Contains(err.Error(), slack.SettingBotToken) || !strings.Contains(err.Error(), "DecryptionFailure") {
			t.Fatalf("Load = %v", err)
		}
		if strings.Contains(err.Error(), leaked) {
			t.Errorf("error holds a secret's content: %v", err)
		}
	})
	t.Run("NotJSON", func(t *testing.T) {
		clearEnv(t)
		t.Setenv(resources.EnvSecrets, "Parley/TELEGRAM_BOT_TOKEN")
		calls := 0
		if _, err := config.Load(t.Context(), awsConfigFor(srv, &calls), registry.MustFunction(resources.Turn.Name).Secrets); err == nil || !strings.Contains(err.Error(), resources.EnvSecrets) {
			t.Fatalf("Load = %v", err)
		}
	})
	t.Run("AWSConfigFails", func(t *testing.T) {
		clearEnv(t)
		secretsEnv(t, resources.SecretAgentSecret)
		cause := errors.New("no credentials")
		_, err := config.Load(t.Context(), func(context.Context) (aws.Config, error) { return aws.Config{}, cause }, registry.MustFunction(resources.Turn.Name).Secrets)
		if !errors.Is(err, cause) || !strings.Contains(err.Error(), "load AWS config") {
			t.Fatalf("err = %v, want the AWS config error wrapped", err)
		}
	})
}
