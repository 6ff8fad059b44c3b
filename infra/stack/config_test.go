package stack

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/resources"
)

func TestConfigValidate(t *testing.T) {
	assets := t.TempDir()
	if err := writeZips(assets); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  Config
		want []string // substrings of the error; none: valid
	}{
		{name: "Defaults", cfg: Config{AssetDir: assets}},
		{name: "SecretPrefixAndAgent", cfg: Config{
			AssetDir: assets, SecretPrefix: "parley/prod_1+a=b.c@d-", IngressConcurrency: ptr(25),
			AgentURL: "https://agent.example.com", AlarmEmail: "ops@example.com",
		}},
		{name: "LongestSecretPrefix", cfg: Config{AssetDir: assets, SecretPrefix: strings.Repeat("p", 400)}},
		{name: "SecretPrefixTooLong", cfg: Config{AssetDir: assets, SecretPrefix: strings.Repeat("p", 401)},
			want: []string{ContextSecretPrefix, "401", "400"}},
		{name: "SecretPrefixSpace", cfg: Config{AssetDir: assets, SecretPrefix: "parley prod/"}, want: []string{ContextSecretPrefix}},
		{name: "SecretPrefixQuote", cfg: Config{AssetDir: assets, SecretPrefix: `parley"/`}, want: []string{ContextSecretPrefix}},
		{name: "SecretPrefixWildcard", cfg: Config{AssetDir: assets, SecretPrefix: "parley/*"}, want: []string{ContextSecretPrefix}},
		{name: "NoIngressConcurrency", cfg: Config{AssetDir: assets, IngressConcurrency: ptr(0)}},
		{name: "NegativeIngressConcurrency", cfg: Config{AssetDir: assets, IngressConcurrency: ptr(-1)},
			want: []string{ContextIngressConcurrency}},
		{name: "AgentNotAURL", cfg: Config{AssetDir: assets, AgentURL: "agent.example.com"}, want: []string{ContextAgentURL}},
		{name: "BadEmail", cfg: Config{AssetDir: assets, AlarmEmail: "not an address"}, want: []string{ContextAlarmEmail}},
		{name: "Settings", cfg: Config{AssetDir: assets, Env: map[string]string{"PARLEY_TRIAGE": `{"daily_cap":3}`, "SLACK_REPLY_IN_THREAD": "false"}}},
		{name: "SecretAsSetting", cfg: Config{AssetDir: assets, Env: map[string]string{slack.SettingBotToken: "xoxb-1"}},
			want: []string{ContextEnv, slack.SettingBotToken, "Secrets Manager"}},
		{name: "StackOwnedSetting", cfg: Config{AssetDir: assets, Env: map[string]string{resources.EnvTable: "t", EnvAgentURL: "x"}},
			want: []string{resources.EnvTable, ContextAgentURL}},
		{name: "SecretsAsSetting", cfg: Config{AssetDir: assets, Env: map[string]string{resources.EnvSecrets: `{"SLACK_BOT_TOKEN":"x"}`}},
			want: []string{ContextEnv, resources.EnvSecrets, "set by the stack"}},
		{name: "NotAVariableName", cfg: Config{AssetDir: assets, Env: map[string]string{"bad-name": "x"}}, want: []string{"bad-name"}},
		{name: "EveryProblemAtOnce", cfg: Config{AssetDir: t.TempDir(), AgentURL: "ftp://x", AlarmEmail: "@"},
			want: append([]string{ContextAgentURL, ContextAlarmEmail, "make build"}, functionNames()...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.WithDefaults().Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate accepted an invalid config")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func functionNames() []string {
	var names []string
	for _, fn := range registry.Functions() {
		names = append(names, "function "+fn.Name)
	}
	return names
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.WithDefaults()
	if c.AssetDir != DefaultAssetDir || c.AgentURL != DefaultAgentURL || c.SecretPrefix != "" || c.AlarmEmail != "" ||
		c.IngressConcurrency == nil || *c.IngressConcurrency != 10 {
		t.Errorf("defaults: %+v", c)
	}
	c = Config{AssetDir: "x", AgentURL: "https://a", SecretPrefix: "p/", IngressConcurrency: ptr(0)}.WithDefaults()
	if c.AssetDir != "x" || c.AgentURL != "https://a" || c.SecretPrefix != "p/" || *c.IngressConcurrency != 0 {
		t.Errorf("WithDefaults overrode set fields: %+v", c)
	}
}

func TestConfigFromContext(t *testing.T) {
	assets := t.TempDir()
	if err := writeZips(assets); err != nil {
		t.Fatal(err)
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{
		ContextAssetDir:   assets,
		ContextAgentURL:   " https://agent.example.com ",
		ContextStackName:  "ParleyDev",
		ContextAlarmEmail: 42, // not a string
	}})
	_, err := ConfigFromContext(app.Node())
	if err == nil || !strings.Contains(err.Error(), ContextAlarmEmail) {
		t.Fatalf("non-string context: err = %v", err)
	}
	app = awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{
		ContextAssetDir: assets,
		ContextAgentURL: " https://agent.example.com ",
	}})
	c, err := ConfigFromContext(app.Node())
	if err != nil {
		t.Fatal(err)
	}
	if c.AssetDir != assets || c.AgentURL != "https://agent.example.com" {
		t.Errorf("config %+v", c)
	}
	// parley:env as an object (cdk.json) and as JSON text (-c).
	for _, v := range []any{map[string]any{"PARLEY_BUBBLE_DELAY": "800ms"}, `{"PARLEY_BUBBLE_DELAY":"800ms"}`} {
		envApp := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{ContextAssetDir: assets, ContextEnv: v}})
		c, err := ConfigFromContext(envApp.Node())
		if err != nil || c.Env["PARLEY_BUBBLE_DELAY"] != "800ms" {
			t.Errorf("%s %T: env %v, err %v", ContextEnv, v, c.Env, err)
		}
	}
	for _, v := range []any{`{"PARLEY_MAX_ATTEMPTS": 3}`, `not json`, 42} {
		envApp := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{ContextAssetDir: assets, ContextEnv: v}})
		if _, err := ConfigFromContext(envApp.Node()); err == nil || !strings.Contains(err.Error(), ContextEnv) {
			t.Errorf("%s %v: err = %v, want a refusal naming the key", ContextEnv, v, err)
		}
	}
	// parley:secretPrefix as given; parley:ingressConcurrency as a number
	// (cdk.json) or its text (-c), 0 included.
	for v, want := range map[any]int{25: 25, float64(7): 7, "25": 25, " 0 ": 0, 0: 0} {
		app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{
			ContextAssetDir: assets, ContextSecretPrefix: " parley/dev/ ", ContextIngressConcurrency: v,
		}})
		c, err := ConfigFromContext(app.Node())
		if err != nil {
			t.Errorf("%s %#v: %v", ContextIngressConcurrency, v, err)
			continue
		}
		if c.SecretPrefix != "parley/dev/" || c.IngressConcurrency == nil || *c.IngressConcurrency != want {
			t.Errorf("%s %#v: prefix %q, concurrency %v, want %d", ContextIngressConcurrency, v, c.SecretPrefix, c.IngressConcurrency, want)
		}
	}
	for _, v := range []any{-1, "-1", 2.5, "2.5", "ten", true, 1e12, map[string]any{"n": 1}} {
		app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{ContextAssetDir: assets, ContextIngressConcurrency: v}})
		if _, err := ConfigFromContext(app.Node()); err == nil || !strings.Contains(err.Error(), ContextIngressConcurrency) {
			t.Errorf("%s %#v: err = %v, want a refusal naming the key", ContextIngressConcurrency, v, err)
		}
	}
	for _, v := range []any{"parley prod/", 42} {
		app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{ContextAssetDir: assets, ContextSecretPrefix: v}})
		if _, err := ConfigFromContext(app.Node()); err == nil || !strings.Contains(err.Error(), ContextSecretPrefix) {
			t.Errorf("%s %#v: err = %v, want a refusal naming the key", ContextSecretPrefix, v, err)
		}
	}
	// A setting no Lambda timeout can hold fails the synth, naming it.
	envApp := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{ContextAssetDir: assets, ContextEnv: `{"PARLEY_AGENT_TIMEOUT":"15m"}`}})
	if _, err := ConfigFromContext(envApp.Node()); err == nil || !strings.Contains(err.Error(), "PARLEY_AGENT_TIMEOUT") {
		t.Errorf("a 15m agent timeout: err = %v, want a refusal naming PARLEY_AGENT_TIMEOUT", err)
	}
	if got := StackName(app.Node()); got != DefaultStackName {
		t.Errorf("stack name %s, want %s", got, DefaultStackName)
	}
	app = awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{ContextStackName: "ParleyDev"}})
	if got := StackName(app.Node()); got != "ParleyDev" {
		t.Errorf("stack name %s, want ParleyDev", got)
	}
}

// New refuses an invalid config before it defines anything.
func TestNewRejectsMissingBuild(t *testing.T) {
	app := awscdk.NewApp(nil)
	s, err := New(app, "Parley", nil, Config{AssetDir: t.TempDir()})
	if err == nil || s != nil {
		t.Fatalf("New = %v, %v; want an error", s, err)
	}
	if n := len(*app.Node().Children()); n != 0 {
		t.Errorf("app has %d children after a refused New", n)
	}
}

func TestQueueNameLimit(t *testing.T) {
	assets := t.TempDir()
	if err := writeZips(assets); err != nil {
		t.Fatal(err)
	}
	app := awscdk.NewApp(nil)
	_, err := New(app, strings.Repeat("P", 70), nil, Config{AssetDir: assets})
	if err == nil || !strings.Contains(err.Error(), "80") {
		t.Fatalf("a stack name too long for SQS: err = %v", err)
	}
}

func TestConstructID(t *testing.T) {
	for in, want := range map[string]string{"inbound": "Inbound", "inbound-dlq": "InboundDlq", "a_b.c": "ABC", "State": "State"} {
		if got := constructID(in); got != want {
			t.Errorf("constructID(%q) = %q, want %q", in, got, want)
		}
	}
}
