package config_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/resources"
)

// Secrets Manager has no emulator on these machines. secretsServer speaks its
// wire protocol (JSON 1.1, GetSecretValue only) so Load runs with the real SDK
// client end to end: request, response, error and all.
type secretsServer struct {
	mu       sync.Mutex
	secrets  map[string]string // SecretId -> SecretString
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
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
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

const testARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:parley-AbC123"

// clearEnv sets every variable Load may read to empty for this test, so the
// developer's own environment cannot leak in.
func clearEnv(t *testing.T) {
	for _, k := range append(resources.SecretKeys(), resources.EnvSecretARN, resources.EnvTable,
		resources.EnvInboundQueueURL, resources.EnvOutboundQueueURL, "PARLEY_AGENT_URL", "PARLEY_AGENT_TIMEOUT",
		"PARLEY_LOG_LEVEL", "PARLEY_DEDUPE_TTL", "PARLEY_TRIAGE", "PARLEY_UNKNOWN_SEND_POLICY") {
		t.Setenv(k, "")
	}
}

// Load reads the process environment, so these tests cannot run in parallel.

func TestLoadWithoutSecretReadsTheEnvironmentOnly(t *testing.T) {
	clearEnv(t)
	t.Setenv(resources.EnvTable, "parley-State")
	t.Setenv(resources.SecretTelegramBotToken, "7000000001:env")
	calls := 0
	c, err := config.Load(t.Context(), func(context.Context) (aws.Config, error) {
		calls++
		return aws.Config{}, errors.New("must not be called")
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Fatalf("AWS config loaded %d times without %s", calls, resources.EnvSecretARN)
	}
	if c.Table != "parley-State" || c.Telegram.BotToken != "7000000001:env" || c.DedupeTTL != 168*time.Hour {
		t.Fatalf("config = table %q, token %q, ttl %v", c.Table, c.Telegram.BotToken, c.DedupeTTL)
	}
}

func TestLoadOverlaysTheSecret(t *testing.T) {
	secret, _ := json.Marshal(map[string]string{
		resources.SecretTelegramBotToken: "7000000001:from-secret", // the environment wins
		resources.SecretSlackBotToken:    "xoxb-from-secret",       // fills an empty variable
		resources.SecretAgentSecret:      "agent-from-secret",
		"PARLEY_AGENT_TIMEOUT":           "7s", // any variable may come from the secret
	})
	sm := &secretsServer{secrets: map[string]string{testARN: string(secret)}}
	srv := httptest.NewServer(sm)
	defer srv.Close()

	clearEnv(t)
	t.Setenv(resources.EnvSecretARN, testARN)
	t.Setenv(resources.SecretTelegramBotToken, "7000000001:from-env")
	calls := 0
	c, err := config.Load(t.Context(), awsConfigFor(srv, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || len(sm.requests) != 1 || sm.requests[0] != testARN {
		t.Fatalf("AWS config loaded %d times, secrets asked for %v; want one read of %s", calls, sm.requests, testARN)
	}
	checks := []struct{ name, got, want string }{
		{"Telegram.BotToken (environment wins)", c.Telegram.BotToken, "7000000001:from-env"},
		{"Slack.BotToken (from the secret)", c.Slack.BotToken, "xoxb-from-secret"},
		{"Agent.Secret (from the secret)", c.Agent.Secret, "agent-from-secret"},
		{"Agent.Timeout (from the secret)", c.Agent.Timeout.String(), "7s"},
		{"Slack.SigningSecret (in neither)", c.Slack.SigningSecret, ""},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %q, want %q", ck.name, ck.got, ck.want)
		}
	}
}

func TestLoadFailures(t *testing.T) {
	const leaked = "s3cr3t-token-value"
	sm := &secretsServer{secrets: map[string]string{
		testARN + "-numbers": `{"TELEGRAM_BOT_TOKEN":"` + leaked + `","PARLEY_MAX_BUBBLES":4}`,
		testARN + "-array":   `["` + leaked + `"]`,
		testARN + "-bad":     `{"PARLEY_AGENT_TIMEOUT":"forever","SLACK_BOT_TOKEN":"` + leaked + `"}`,
	}}
	srv := httptest.NewServer(sm)
	defer srv.Close()

	cases := []struct {
		name, arn string
		want      []string
	}{
		{"SecretNotAnObjectOfStrings", testARN + "-numbers", []string{testARN + "-numbers", "not a JSON object of strings"}},
		{"SecretNotAnObject", testARN + "-array", []string{"not a JSON object of strings"}},
		{"SecretMissing", testARN + "-gone", []string{"read secret " + testARN + "-gone", "ResourceNotFoundException"}},
		{"MalformedValueFromTheSecret", testARN + "-bad", []string{"PARLEY_AGENT_TIMEOUT", `"forever"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(resources.EnvSecretARN, tc.arn)
			calls := 0
			_, err := config.Load(t.Context(), awsConfigFor(srv, &calls))
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q: %v", w, err)
				}
			}
			if strings.Contains(err.Error(), leaked) {
				t.Errorf("error holds the secret's content: %v", err)
			}
		})
	}

	t.Run("AWSConfigFails", func(t *testing.T) {
		clearEnv(t)
		t.Setenv(resources.EnvSecretARN, testARN)
		cause := errors.New("no credentials")
		_, err := config.Load(t.Context(), func(context.Context) (aws.Config, error) { return aws.Config{}, cause })
		if !errors.Is(err, cause) || !strings.Contains(err.Error(), "load AWS config") {
			t.Fatalf("err = %v, want the AWS config error wrapped", err)
		}
	})
}
