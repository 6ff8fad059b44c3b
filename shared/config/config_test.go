package config_test

import (
	"errors"
	"log/slog"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/delivery"
	"github.com/parleyhq/parley/shared/envelope"
	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/turn"
)

// env is a Getenv over a map.
func env(vars map[string]string) config.Getenv {
	return func(k string) string { return vars[k] }
}

func TestFromEnvDefaults(t *testing.T) {
	t.Parallel()
	c, err := config.FromEnv(env(nil))
	if err != nil {
		t.Fatalf("FromEnv with nothing set: %v", err)
	}
	// Each default as its field's comment documents it.
	checks := []struct {
		name      string
		got, want any
	}{
		{"Table (no default)", c.Table, ""},
		{"InboundQueueURL (no default)", c.InboundQueueURL, ""},
		{"OutboundQueueURL (no default)", c.OutboundQueueURL, ""},
		{"LogLevel", c.LogLevel, slog.LevelInfo},
		{"DedupeTTL", c.DedupeTTL, 192 * time.Hour},
		{"MaxBodyBytes (0: each platform's own)", c.MaxBodyBytes, int64(0)},
		{"Agent.URL (required by turn, no default)", c.Agent.URL, ""},
		{"Agent.Timeout", c.Agent.Timeout, 25 * time.Second},
		{"Agent.MaxAge", c.Agent.MaxAge, 6 * time.Hour},
		{"Envelope.MaxUnits", c.Envelope.MaxUnits, 10},
		{"Envelope.MaxReplyBytes", c.Envelope.MaxReplyBytes, 64 << 10},
		{"Envelope.Mode", c.Envelope.Mode, envelope.ModeStructured},
		{"Envelope.MaxBubbles", c.Envelope.MaxBubbles, 4},
		{"Envelope.MaxBubbleChars", c.Envelope.MaxBubbleChars, 1200},
		{"Envelope.OnParseError", c.Envelope.OnParseError, envelope.PolicyFallbackText},
		{"Envelope.ErrorMessage", c.Envelope.ErrorMessage, envelope.DefaultErrorMessage},
		{"Delivery.BubbleDelay", c.Delivery.BubbleDelay, time.Second},
		{"Delivery.MaxInlineWait", c.Delivery.MaxInlineWait, 5 * time.Second},
		{"Delivery.SendTimeout", c.Delivery.SendTimeout, 10 * time.Second},
		{"Delivery.Lease (2 x SendTimeout)", c.Delivery.Lease, 20 * time.Second},
		{"Delivery.MaxAge", c.Delivery.MaxAge, 6 * time.Hour},
		{"Delivery.MaxResends", c.Delivery.MaxResends, 3},
		{"Delivery.ReplyBubbles", c.Delivery.ReplyBubbles, 5},
		{"Delivery.Unknown", c.Delivery.Unknown, delivery.UnknownHold},
		{"Delivery.UnknownByPlatform", len(c.Delivery.UnknownByPlatform), 0},
		// The adapters apply their own defaults (telegram.DefaultBaseURL,
		// slack.DefaultBaseURL): unset reads as empty.
		{"Platforms(TELEGRAM_API_BASE_URL)", c.Platforms(telegram.SettingAPIBaseURL), ""},
		{"Platforms(SLACK_REPLY_IN_THREAD)", c.Platforms(slack.SettingReplyInThread), ""},
		{"Events.Secrets", c.Events.Secrets, ""},
		{"Events.Sources", c.Events.Sources, ""},
		{"Events.GitHubTarget", c.Events.GitHubTarget, ""},
		{"Triage.Conversations", len(c.Triage.Conversations), 0},
		{"Triage.Default.Cooldown", c.Triage.Default.Cooldown, time.Duration(0)},
		{"Triage.Default.DailyCap", c.Triage.Default.DailyCap, 0},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
}

func TestFromEnvReadsEveryVariable(t *testing.T) {
	t.Parallel()
	c, err := config.FromEnv(env(map[string]string{
		resources.EnvTable:                  "parley-State",
		resources.EnvInboundQueueURL:        "http://q/inbound.fifo",
		resources.EnvOutboundQueueURL:       "http://q/outbound.fifo",
		"PARLEY_LOG_LEVEL":                  "debug",
		"PARLEY_DEDUPE_TTL":                 "72h",
		"PARLEY_MAX_BODY_BYTES":             "4096",
		"PARLEY_AGENT_URL":                  "builtin:echo",
		resources.SecretAgentSecret:         "agent-secret",
		"PARLEY_AGENT_TIMEOUT":              "9s",
		"PARLEY_REPLY_MODE":                 "text",
		"PARLEY_MAX_BUBBLES":                "6",
		"PARLEY_MAX_BUBBLE_CHARS":           "500",
		"PARLEY_ON_PARSE_ERROR":             "error_message",
		"PARLEY_ERROR_MESSAGE":              "Oops.",
		"PARLEY_BUBBLE_DELAY":               "250ms",
		"PARLEY_SEND_TIMEOUT":               "3s",
		"PARLEY_SEND_MAX_AGE":               "45m",
		"PARLEY_MAX_RESENDS":                "2",
		"PARLEY_REPLY_BUBBLES":              "1",
		telegram.SettingBotToken:            "7000000001:tok",
		telegram.SettingWebhookSecret:       "tg-hook",
		"TELEGRAM_API_BASE_URL":             "http://tg",
		slack.SettingSigningSecret:          "slack-sign",
		slack.SettingBotToken:               "xoxb-1",
		"SLACK_API_BASE_URL":                "http://slack",
		"SLACK_REPLY_IN_THREAD":             "false",
		resources.SecretEventsSecrets:       `{"a":"whsec_a"}`,
		"PARLEY_EVENTS_SOURCES":             `{"a":{"targets":["telegram:1:2"]}}`,
		"SLACK_TEAM_ID":                     "T0TEAM0001",
		"SLACK_TRUST_AGENT_MARKUP":          "true",
		resources.SecretGitHubWebhookSecret: "gh-secret",
		"PARLEY_GITHUB_TARGET":              "telegram:1:2",
		"PARLEY_TRIAGE":                     `{"cooldown":"10m","daily_cap":3}`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Table", c.Table, "parley-State"},
		{"InboundQueueURL", c.InboundQueueURL, "http://q/inbound.fifo"},
		{"OutboundQueueURL", c.OutboundQueueURL, "http://q/outbound.fifo"},
		{"LogLevel", c.LogLevel, slog.LevelDebug},
		{"DedupeTTL", c.DedupeTTL, 72 * time.Hour},
		{"MaxBodyBytes", c.MaxBodyBytes, int64(4096)},
		{"Agent.URL", c.Agent.URL, "builtin:echo"},
		{"Agent.Secret", c.Agent.Secret, "agent-secret"},
		{"Agent.Timeout", c.Agent.Timeout, 9 * time.Second},
		{"Envelope.Mode", c.Envelope.Mode, envelope.ModeText},
		{"Envelope.MaxBubbles", c.Envelope.MaxBubbles, 6},
		{"Envelope.MaxBubbleChars", c.Envelope.MaxBubbleChars, 500},
		{"Envelope.OnParseError", c.Envelope.OnParseError, envelope.PolicyErrorMessage},
		{"Envelope.ErrorMessage", c.Envelope.ErrorMessage, "Oops."},
		{"Delivery.BubbleDelay", c.Delivery.BubbleDelay, 250 * time.Millisecond},
		{"Delivery.SendTimeout", c.Delivery.SendTimeout, 3 * time.Second},
		{"Delivery.Lease", c.Delivery.Lease, 6 * time.Second},
		{"Delivery.MaxAge", c.Delivery.MaxAge, 45 * time.Minute},
		{"Delivery.MaxResends", c.Delivery.MaxResends, 2},
		{"Delivery.ReplyBubbles", c.Delivery.ReplyBubbles, 1},
		{"Platforms(TELEGRAM_BOT_TOKEN)", c.Platforms(telegram.SettingBotToken), "7000000001:tok"},
		{"Platforms(TELEGRAM_WEBHOOK_SECRET)", c.Platforms(telegram.SettingWebhookSecret), "tg-hook"},
		{"Platforms(TELEGRAM_API_BASE_URL)", c.Platforms(telegram.SettingAPIBaseURL), "http://tg"},
		{"Platforms(SLACK_SIGNING_SECRET)", c.Platforms(slack.SettingSigningSecret), "slack-sign"},
		{"Platforms(SLACK_BOT_TOKEN)", c.Platforms(slack.SettingBotToken), "xoxb-1"},
		{"Platforms(SLACK_API_BASE_URL)", c.Platforms(slack.SettingAPIBaseURL), "http://slack"},
		{"Platforms(SLACK_REPLY_IN_THREAD)", c.Platforms(slack.SettingReplyInThread), "false"},
		{"Events.Secrets", c.Events.Secrets, `{"a":"whsec_a"}`},
		{"Events.Sources", c.Events.Sources, `{"a":{"targets":["telegram:1:2"]}}`},
		{"Platforms(SLACK_TEAM_ID)", c.Platforms(slack.SettingTeamID), "T0TEAM0001"},
		{"Platforms(SLACK_TRUST_AGENT_MARKUP)", c.Platforms(slack.SettingTrustAgentMarkup), "true"},
		{"Events.GitHubSecret", c.Events.GitHubSecret, "gh-secret"},
		{"Events.GitHubTarget", c.Events.GitHubTarget, "telegram:1:2"},
		{"Triage.Default.Cooldown", c.Triage.Default.Cooldown, 10 * time.Minute},
		{"Triage.Default.DailyCap", c.Triage.Default.DailyCap, 3},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
}

func TestFromEnvReportsEveryMalformedValueAtOnce(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"PARLEY_LOG_LEVEL":           "loud",
		"PARLEY_DEDUPE_TTL":          "a week",
		"PARLEY_MAX_BODY_BYTES":      "-1",
		"PARLEY_AGENT_TIMEOUT":       "25",
		"PARLEY_MAX_BUBBLES":         "four",
		"PARLEY_MAX_BUBBLE_CHARS":    "1.5",
		"PARLEY_BUBBLE_DELAY":        "-1s",
		"PARLEY_SEND_TIMEOUT":        "soon",
		"PARLEY_SEND_MAX_AGE":        "forever",
		"PARLEY_MAX_RESENDS":         "-3",
		"PARLEY_REPLY_BUBBLES":       "6",
		"SLACK_REPLY_IN_THREAD":      "sometimes",
		"PARLEY_TRIAGE":              `{"cooldown":`,
		"PARLEY_UNKNOWN_SEND_POLICY": "perhaps",
	}
	c, err := config.FromEnv(env(bad))
	if err == nil {
		t.Fatal("FromEnv accepted malformed values")
	}
	msg := err.Error()
	for name, value := range bad {
		if !strings.Contains(msg, name) {
			t.Errorf("error does not name %s:\n%s", name, msg)
		}
		if name != "PARLEY_TRIAGE" && !strings.Contains(msg, value) {
			t.Errorf("error does not quote %s's value %q:\n%s", name, value, msg)
		}
	}
	if n := len(strings.Split(msg, "\n")); n < len(bad) {
		t.Errorf("error has %d lines for %d malformed variables:\n%s", n, len(bad), msg)
	}
	// A malformed value falls back to its default rather than a zero.
	if c.DedupeTTL != 192*time.Hour || c.Agent.Timeout != 25*time.Second || c.LogLevel != slog.LevelInfo {
		t.Errorf("malformed values did not fall back to defaults: %+v", c)
	}

	t.Run("EnvelopeSettingsAreValidatedToo", func(t *testing.T) {
		t.Parallel()
		_, err := config.FromEnv(env(map[string]string{
			"PARLEY_REPLY_MODE":     "html",
			"PARLEY_ON_PARSE_ERROR": "shrug",
			"PARLEY_LOG_LEVEL":      "loud",
		}))
		if err == nil {
			t.Fatal("FromEnv accepted a bad reply mode and parse-error policy")
		}
		for _, want := range []string{`PARLEY_REPLY_MODE: want structured or text, got "html"`, `PARLEY_ON_PARSE_ERROR`, `"shrug"`, "PARLEY_LOG_LEVEL"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not mention %s:\n%v", want, err)
			}
		}
	})
}

func TestFromEnvUnknownSendPolicy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		value   string
		def     delivery.UnknownPolicy
		per     map[message.Platform]delivery.UnknownPolicy
		invalid bool
	}{
		{value: "", def: delivery.UnknownHold},
		{value: "hold", def: delivery.UnknownHold},
		{value: "resend", def: delivery.UnknownResend},
		{value: "hold,telegram=resend", def: delivery.UnknownHold, per: map[message.Platform]delivery.UnknownPolicy{message.Telegram: delivery.UnknownResend}},
		{value: " resend , telegram = hold ,slack=resend ", def: delivery.UnknownResend, per: map[message.Platform]delivery.UnknownPolicy{message.Telegram: delivery.UnknownHold, message.Slack: delivery.UnknownResend}},
		{value: "telegram=resend", def: delivery.UnknownHold, per: map[message.Platform]delivery.UnknownPolicy{message.Telegram: delivery.UnknownResend}},
		{value: ",,resend,", def: delivery.UnknownResend},
		// Every chat platform Parley sends to can be named.
		{value: "hold,discord=resend,line=hold,whatsapp=resend", def: delivery.UnknownHold, per: map[message.Platform]delivery.UnknownPolicy{
			message.Discord: delivery.UnknownResend, message.LINE: delivery.UnknownHold, message.WhatsApp: delivery.UnknownResend}},
		{value: "events=resend", invalid: true},
		{value: "maybe", invalid: true},
		{value: "Resend", invalid: true},
		{value: "hold,telegram=later", invalid: true},
		{value: "telegram:resend", invalid: true},
		{value: "telgram=resend", invalid: true},
		{value: "=resend", invalid: true},
	}
	for _, tc := range cases {
		t.Run(tc.value, func(t *testing.T) {
			t.Parallel()
			c, err := config.FromEnv(env(map[string]string{"PARLEY_UNKNOWN_SEND_POLICY": tc.value}))
			if tc.invalid {
				if err == nil || !strings.Contains(err.Error(), "PARLEY_UNKNOWN_SEND_POLICY") {
					t.Fatalf("err = %v, want an error naming PARLEY_UNKNOWN_SEND_POLICY", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Delivery.Unknown != tc.def {
				t.Errorf("default policy = %q, want %q", c.Delivery.Unknown, tc.def)
			}
			if !maps.Equal(c.Delivery.UnknownByPlatform, tc.per) {
				t.Errorf("per platform = %v, want %v", c.Delivery.UnknownByPlatform, tc.per)
			}
		})
	}
}

func TestFromEnvNeverEchoesSecrets(t *testing.T) {
	t.Parallel()
	vars := map[string]string{}
	var secrets []string
	for _, name := range registry.SecretKeys() {
		v := "s3cr3t-" + strings.ToLower(name) // distinctive, and odd enough to be "malformed"
		vars[name] = v
		secrets = append(secrets, v)
	}
	// Everything else malformed, so the error is as long as it gets.
	for _, name := range []string{"PARLEY_LOG_LEVEL", "PARLEY_DEDUPE_TTL", "PARLEY_MAX_BODY_BYTES", "PARLEY_AGENT_TIMEOUT",
		"PARLEY_MAX_BUBBLES", "PARLEY_MAX_BUBBLE_CHARS", "PARLEY_BUBBLE_DELAY", "PARLEY_SEND_TIMEOUT", "PARLEY_SEND_MAX_AGE",
		"SLACK_REPLY_IN_THREAD", "PARLEY_TRIAGE", "PARLEY_UNKNOWN_SEND_POLICY", "PARLEY_REPLY_MODE", "PARLEY_ON_PARSE_ERROR"} {
		vars[name] = "x"
	}
	_, err := config.FromEnv(env(vars))
	if err == nil {
		t.Fatal("FromEnv accepted malformed values")
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error holds a secret value %q:\n%v", s, err)
		}
	}
}

func TestRequire(t *testing.T) {
	t.Parallel()
	var empty config.Config
	if err := empty.RequireStore(); err == nil || !strings.Contains(err.Error(), resources.EnvTable) {
		t.Errorf("RequireStore on an empty config = %v, want an error naming %s", err, resources.EnvTable)
	}
	for _, q := range resources.Queues() {
		if err := empty.RequireQueue(q); err == nil || !strings.Contains(err.Error(), q.EnvURL) {
			t.Errorf("RequireQueue(%s) on an empty config = %v, want an error naming %s", q.Name, err, q.EnvURL)
		}
	}
	full, err := config.FromEnv(env(map[string]string{
		resources.EnvTable: "t", resources.EnvInboundQueueURL: "in", resources.EnvOutboundQueueURL: "out",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(full.RequireStore(), full.RequireQueue(resources.Inbound), full.RequireQueue(resources.Outbound)); err != nil {
		t.Errorf("Require on a complete config: %v", err)
	}
	// Each queue checks its own URL.
	onlyIn, _ := config.FromEnv(env(map[string]string{resources.EnvInboundQueueURL: "in"}))
	if onlyIn.RequireQueue(resources.Inbound) != nil || onlyIn.RequireQueue(resources.Outbound) == nil {
		t.Errorf("RequireQueue with only the inbound URL: inbound %v, outbound %v",
			onlyIn.RequireQueue(resources.Inbound), onlyIn.RequireQueue(resources.Outbound))
	}
}

// TestRetryBudgetIsTime (finding 8.3): PARLEY_MAX_ATTEMPTS made a unit's
// budget a count of quick attempts, which rode out only minutes of an outage.
// It is refused with a pointer to the time budget, which is bounded.
func TestRetryBudgetIsTime(t *testing.T) {
	t.Parallel()
	_, err := config.FromEnv(env(map[string]string{"PARLEY_MAX_ATTEMPTS": "8"}))
	if err == nil || !strings.Contains(err.Error(), "PARLEY_SEND_MAX_AGE") {
		t.Fatalf("PARLEY_MAX_ATTEMPTS gave %v, want an error naming its replacement", err)
	}
	if _, err := config.FromEnv(env(map[string]string{"PARLEY_SEND_MAX_AGE": "72h"})); err == nil || !strings.Contains(err.Error(), "PARLEY_SEND_MAX_AGE") || !strings.Contains(err.Error(), "at most 24h") {
		t.Fatalf("a 72h budget gave %v, want it refused (at most 24h)", err)
	}
}

// TestFromEnvContextSettings: the conversation-context settings read as
// written, each malformed one is refused naming its variable, and every
// one is off by default.
func TestFromEnvContextSettings(t *testing.T) {
	t.Parallel()
	c, err := config.FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.History.On() || !reflect.DeepEqual(c.Optional, ingress.Optional{}) || c.Status.On || c.Busy.Any() {
		t.Fatalf("defaults: history %+v, optional %+v, status %+v, busy %+v; want all off", c.History, c.Optional, c.Status, c.Busy)
	}
	c, err = config.FromEnv(env(map[string]string{
		"PARLEY_HISTORY": "30,65536", "PARLEY_HISTORY_TTL": "48h", "PARLEY_REACTIONS": "👍,👎,triage", "PARLEY_EDITS": "on",
		"PARLEY_STATUS_REACTIONS": "on", "PARLEY_BUSY_POLICY": "collect, telegram=interrupt, slack:T0TEAM0001:C0CHAN0001:*=queue", "SLACK_TEAM_ID": "T0TEAM0001",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.History != (history.Config{Entries: 30, Bytes: 65536, TTL: 48 * time.Hour}) || !c.Optional.Edits || !c.Optional.TriageReactions || len(c.Optional.Emoji) != 2 || !c.Status.On {
		t.Fatalf("read %+v %+v %+v", c.History, c.Optional, c.Status)
	}
	for thread, want := range map[message.Thread]turn.BusyPolicy{
		{Platform: message.Telegram, Account: "1", Chat: "2"}:                               turn.BusyInterrupt,
		{Platform: message.Slack, Account: "T0TEAM0001", Chat: "C0CHAN0001", Thread: "1.2"}: turn.BusyQueue,
		{Platform: message.Slack, Account: "T0TEAM0001", Chat: "C0OTHER001"}:                turn.BusyCollect,
		{Platform: message.WhatsApp, Account: "106540352242922", Chat: "15551230001"}:       turn.BusyCollect,
	} {
		if got := c.Busy.For(thread); got != want {
			t.Errorf("busy policy of %s = %s, want %s", thread.Key(), got, want)
		}
	}
	for name, value := range map[string]string{
		"PARLEY_HISTORY": "lots", "PARLEY_HISTORY_TTL": "a month", "PARLEY_REACTIONS": "thumbs up", "PARLEY_EDITS": "yes",
		"PARLEY_STATUS_REACTIONS": "👀", "PARLEY_BUSY_POLICY": "collect,telgram=queue",
	} {
		vars := map[string]string{name: value}
		if name == "PARLEY_HISTORY_TTL" {
			vars["PARLEY_HISTORY"] = "20"
		}
		if _, err := config.FromEnv(env(vars)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: %v, want a refusal naming it", name, value, err)
		}
	}
}
