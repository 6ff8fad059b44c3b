package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"

	"github.com/parleyhq/parley/shared/delivery"
	"github.com/parleyhq/parley/shared/envelope"
	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/preview"
	"github.com/parleyhq/parley/shared/questions"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/triage"
	"github.com/parleyhq/parley/shared/turn"
)

// Config is every setting of every function. Each function validates the
// part it uses (see the Require methods).
type Config struct {
	// Table is the state table's name (PARLEY_TABLE).
	Table string
	// InboundQueueURL and OutboundQueueURL locate the FIFO queues
	// (PARLEY_INBOUND_QUEUE_URL, PARLEY_OUTBOUND_QUEUE_URL).
	InboundQueueURL  string
	OutboundQueueURL string
	// InboundDLQURL and OutboundDLQURL locate their dead-letter queues
	// (PARLEY_INBOUND_DLQ_URL, PARLEY_OUTBOUND_DLQ_URL), where the consumers
	// move poison records themselves. Empty: poison reaches the DLQ by the
	// redrive policy instead.
	InboundDLQURL  string
	OutboundDLQURL string
	// LogLevel is debug, info, warn or error (PARLEY_LOG_LEVEL). Defaults
	// to info.
	LogLevel slog.Level

	// DedupeTTL is how long an event key and a turn's claim are remembered
	// (PARLEY_DEDUPE_TTL; a turn's claim never less than store.DedupeTTL).
	// Defaults to store.DedupeTTL (192h): WhatsApp retries for up to about
	// 7 days.
	DedupeTTL time.Duration
	// MaxBodyBytes is the largest webhook body accepted
	// (PARLEY_MAX_BODY_BYTES). Zero, the default: each platform's own
	// (platform.DefaultMaxBody, 1 MiB; WhatsApp 3 MiB).
	MaxBodyBytes int64

	Agent    Agent
	Envelope envelope.Config
	Delivery delivery.Config
	Events   Events
	// Platforms is how the chat platforms' adapters read their settings
	// (registry.Settings): the environment with the function's secrets
	// overlaid. FromEnv checks each value's form; the adapters read them.
	Platforms platform.Env
	// Questions tunes the agent's questions: PARLEY_QUESTIONS (on or off)
	// and PARLEY_QUESTION_TTL (how long one stays open). Defaults to on,
	// 24 hours.
	Questions questions.Config
	// AsyncTimeout is how long a turn whose agent answered 202 waits for
	// the agent's POST /reply (PARLEY_ASYNC_TIMEOUT). Defaults to 15
	// minutes.
	AsyncTimeout time.Duration
	// Preview throttles the previews of streamed replies: at most one
	// update per PARLEY_PREVIEW_INTERVAL (a platform's own minimum wins
	// where longer) and PARLEY_PREVIEW_MAX_UPDATES updates a turn.
	// Defaults to 1 second and 40.
	Preview preview.Config
	// AllowBots admits messages other bots wrote (PARLEY_ALLOW_BOTS, true
	// or false). Defaults to false.
	AllowBots bool
	// SendTargets are the threads an agent's POST /send may reach
	// (PARLEY_SEND_TARGETS): a JSON list of thread keys whose last part may
	// be *, as an events source's targets. Defaults to none: every send is
	// refused.
	SendTargets string
	// Optional is which of a person's actions besides messages reach the
	// agent: reactions (PARLEY_REACTIONS: off, on, or the emoji taken,
	// optionally with triage) and edits and deletions (PARLEY_EDITS, on or
	// off). Defaults to none.
	Optional ingress.Optional
	// Busy is what each thread does with messages that arrive while one of
	// its turns runs (PARLEY_BUSY_POLICY: queue, collect or interrupt, as
	// a default and per platform or thread pattern:
	// "collect,telegram=interrupt,slack:T1:C1:*=queue"). Defaults to
	// queue everywhere.
	Busy turn.BusyConfig
	// Status is the status lifecycle's reactions on a person's message
	// (PARLEY_STATUS_REACTIONS: off, on, or "received,answered,failed"
	// emoji for every platform). Defaults to off.
	Status turn.StatusReactions
	// History keeps each thread's transcript for the agent
	// (PARLEY_HISTORY: off, a number of entries, or entries and a byte
	// bound; PARLEY_HISTORY_TTL: how long after its last change). Defaults
	// to off; when on, 16 KiB and 720h.
	History history.Config
	// Triage is the policy for proactive events (PARLEY_TRIAGE, JSON; see
	// triage.ParseConfig). Defaults to no quiet hours, no cooldown and no
	// daily cap, in UTC.
	Triage triage.Config

	// Unread lists the function's secrets Load could not read because they
	// do not exist (or, what AWS answers for a missing secret under a grant
	// scoped to existing ones, because reading them was denied): their keys
	// are unset. The function logs them at start-up.
	Unread []UnreadSecret
}

// UnreadSecret is a secret Load found absent: the key it would have set, the
// secret's id, and the error code Secrets Manager answered.
type UnreadSecret struct {
	Key, SecretID, Code string
}

// Events configures the proactive events webhook. The events function
// parses it (events.ParseSources): each source is bound to its secrets and to
// the targets it may reach.
type Events struct {
	// Sources declares the senders (PARLEY_EVENTS_SOURCES): a JSON object of
	// source names to {"scheme": "standard"|"github", "targets": [thread
	// keys, whose last part may be *]}. Defaults to none.
	Sources string
	// Secrets are the sources' secrets (PARLEY_EVENTS_SECRETS, secret): a
	// JSON object of source names to a secret or a list of secrets (the new
	// one first while rotating), each "whsec_<base64>" or a string of at
	// least 24 bytes.
	Secrets string
	// GitHubSecret and GitHubTarget (GITHUB_WEBHOOK_SECRET, secret;
	// PARLEY_GITHUB_TARGET) declare a source named "github" with GitHub's
	// signature scheme and that one target thread key.
	GitHubSecret string
	GitHubTarget string
}

// Agent configures the agent client.
type Agent struct {
	// URL is where turn requests go (PARLEY_AGENT_URL); "builtin:echo" is
	// the built-in echo agent. Required by the turn function.
	URL string
	// Secret signs turn requests (PARLEY_AGENT_SECRET): "whsec_…" base64,
	// or any string. Required by the turn function.
	Secret string
	// Timeout bounds one agent call (PARLEY_AGENT_TIMEOUT). Defaults to 25s.
	Timeout time.Duration
	// MaxAge is a turn's retry budget (PARLEY_TURN_MAX_AGE): an agent that
	// is down or misconfigured is asked again, with backoff, until the
	// event is this old; then it goes to the dead-letter queue. Defaults to
	// 6h; at most 24h.
	MaxAge time.Duration
}

// Getenv looks a variable up; empty means unset.
type Getenv func(key string) string

// Load reads the environment and, when PARLEY_SECRETS is set (in AWS), the
// function's own secrets: each key in it is read from the Secrets Manager
// secret it names, a plain string, with the keys' reads side by side, and
// used for every variable the environment leaves empty. A secret that does
// not exist leaves its key unset and is listed in Config.Unread (a platform
// the operator does not use has no secrets); any other failure is an error
// naming the key, never the value.
// keys are the keys the function may read (its resources.FunctionSpec.Secrets):
// PARLEY_SECRETS naming any other key is refused.
func Load(ctx context.Context, awsCfg func(context.Context) (aws.Config, error), keys []string) (Config, error) {
	getenv := os.Getenv
	if ids := getenv(resources.EnvSecrets); ids != "" {
		var byKey map[string]string
		if err := json.Unmarshal([]byte(ids), &byKey); err != nil {
			return Config{}, fmt.Errorf("%s: want a JSON object of secret keys to secret ids: %v", resources.EnvSecrets, err)
		}
		for k := range byKey {
			if !slices.Contains(keys, k) {
				return Config{}, fmt.Errorf("%s names %s, which this function does not read", resources.EnvSecrets, k)
			}
		}
		cfg, err := awsCfg(ctx)
		if err != nil {
			return Config{}, fmt.Errorf("load AWS config: %w", err)
		}
		secrets, unread, err := fetchSecrets(ctx, secretsmanager.NewFromConfig(cfg), byKey)
		if err != nil {
			return Config{}, err
		}
		c, err := FromEnv(func(k string) string {
			if v := os.Getenv(k); v != "" {
				return v
			}
			return secrets[k]
		})
		c.Unread = unread
		return c, err
	}
	return FromEnv(getenv)
}

// fetchSecrets reads each key's secret, side by side.
func fetchSecrets(ctx context.Context, sm *secretsmanager.Client, byKey map[string]string) (map[string]string, []UnreadSecret, error) {
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		out    = map[string]string{}
		unread []UnreadSecret
		errs   []error
	)
	for key, id := range byKey {
		wg.Go(func() {
			v, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
			mu.Lock()
			defer mu.Unlock()
			switch code := absent(err); {
			case code != "":
				unread = append(unread, UnreadSecret{Key: key, SecretID: id, Code: code})
			case err != nil:
				errs = append(errs, fmt.Errorf("read the secret of %s (%s): %w", key, id, err))
			default:
				out[key] = aws.ToString(v.SecretString)
			}
		})
	}
	wg.Wait()
	slices.SortFunc(unread, func(a, b UnreadSecret) int { return strings.Compare(a.Key, b.Key) })
	return out, unread, errors.Join(errs...)
}

// absent returns the error code when err says the secret does not exist: not
// found, or access denied, which is what AWS answers for a missing secret
// when the grant names existing secrets only (<name>-??????), since there is
// no full ARN to match it against. A secret that exists but is denied is
// unset too: no value could have been read either way.
func absent(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) && (api.ErrorCode() == "ResourceNotFoundException" || api.ErrorCode() == "AccessDeniedException") {
		return api.ErrorCode()
	}
	return ""
}

// FromEnv builds a Config from variables, with defaults, and reports every
// malformed value at once.
func FromEnv(getenv Getenv) (Config, error) {
	p := parser{getenv: getenv}
	c := Config{
		Table:            getenv(resources.EnvTable),
		InboundQueueURL:  getenv(resources.EnvInboundQueueURL),
		OutboundQueueURL: getenv(resources.EnvOutboundQueueURL),
		InboundDLQURL:    getenv(resources.EnvInboundDLQURL),
		OutboundDLQURL:   getenv(resources.EnvOutboundDLQURL),
		LogLevel:         p.level("PARLEY_LOG_LEVEL"),
		DedupeTTL:        p.duration("PARLEY_DEDUPE_TTL", store.DedupeTTL),
		MaxBodyBytes:     int64(p.int("PARLEY_MAX_BODY_BYTES", 0)),
		Agent: Agent{
			URL:     getenv("PARLEY_AGENT_URL"),
			Secret:  getenv(resources.SecretAgentSecret),
			Timeout: p.duration("PARLEY_AGENT_TIMEOUT", 25*time.Second),
			MaxAge:  p.duration("PARLEY_TURN_MAX_AGE", 6*time.Hour),
		},
		Envelope: envelope.Config{
			Mode:           envelope.Mode(getenv("PARLEY_REPLY_MODE")),
			MaxBubbles:     p.int("PARLEY_MAX_BUBBLES", 0),
			MaxBubbleChars: p.int("PARLEY_MAX_BUBBLE_CHARS", 0),
			MaxUnits:       p.int("PARLEY_MAX_UNITS", 0),
			MaxReplyBytes:  p.int("PARLEY_MAX_REPLY_BYTES", 0),
			OnParseError:   envelope.ParseErrorPolicy(getenv("PARLEY_ON_PARSE_ERROR")),
			ErrorMessage:   getenv("PARLEY_ERROR_MESSAGE"),
		}.WithDefaults(),
		Delivery: delivery.Config{
			BubbleDelay: p.duration("PARLEY_BUBBLE_DELAY", 0),
			SendTimeout: p.duration("PARLEY_SEND_TIMEOUT", 0),
			MaxAge:      p.duration("PARLEY_SEND_MAX_AGE", 0),
			MaxResends:  p.int("PARLEY_MAX_RESENDS", 0),
		},
	}
	c.Platforms = platform.Env(getenv)
	for _, st := range registry.Settings() {
		if err := st.Check(getenv(st.Key)); err != nil {
			p.errs = append(p.errs, err)
		}
	}
	c.Events = Events{
		Sources:      getenv("PARLEY_EVENTS_SOURCES"),
		Secrets:      getenv(resources.SecretEventsSecrets),
		GitHubSecret: getenv(resources.SecretGitHubWebhookSecret),
		GitHubTarget: getenv("PARLEY_GITHUB_TARGET"),
	}
	if getenv("PARLEY_MAX_ATTEMPTS") != "" {
		// Retry budgets are time now: a count rode out only minutes of an
		// outage. Refused rather than ignored, so nobody relies on it.
		p.errs = append(p.errs, errors.New("PARLEY_MAX_ATTEMPTS is no longer read: a unit's retry budget is its age, PARLEY_SEND_MAX_AGE (default 6h); resends after an unknown outcome are bounded by PARLEY_MAX_RESENDS"))
	}
	c.Triage = p.triage("PARLEY_TRIAGE")
	c.Questions.TTL = p.duration("PARLEY_QUESTION_TTL", 24*time.Hour)
	switch v := getenv("PARLEY_QUESTIONS"); v {
	case "", "on":
	case "off":
		c.Questions.Off = true
	default:
		p.errs = append(p.errs, fmt.Errorf("PARLEY_QUESTIONS: want on or off, got %q", v))
	}
	c.History = p.history("PARLEY_HISTORY", "PARLEY_HISTORY_TTL")
	opt, err := ingress.ParseReactions(getenv("PARLEY_REACTIONS"))
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("PARLEY_REACTIONS: %w", err))
	}
	c.Optional = opt
	c.Busy = p.busy("PARLEY_BUSY_POLICY", c.Platforms)
	if c.Status, err = turn.ParseStatusReactions(getenv("PARLEY_STATUS_REACTIONS")); err != nil {
		p.errs = append(p.errs, fmt.Errorf("PARLEY_STATUS_REACTIONS: %w", err))
	}
	switch v := getenv("PARLEY_EDITS"); v {
	case "", "off":
	case "on":
		c.Optional.Edits = true
	default:
		p.errs = append(p.errs, fmt.Errorf("PARLEY_EDITS: want on or off, got %q", v))
	}
	c.SendTargets = getenv("PARLEY_SEND_TARGETS")
	c.AllowBots = p.boolean("PARLEY_ALLOW_BOTS", false)
	c.Preview.Interval = p.duration("PARLEY_PREVIEW_INTERVAL", time.Second)
	c.Preview.MaxUpdates = p.int("PARLEY_PREVIEW_MAX_UPDATES", 40)
	if err := c.Preview.Validate(); err != nil {
		p.errs = append(p.errs, fmt.Errorf("PARLEY_PREVIEW_INTERVAL, PARLEY_PREVIEW_MAX_UPDATES: %w", err))
	}
	c.AsyncTimeout = p.duration("PARLEY_ASYNC_TIMEOUT", 15*time.Minute)
	if c.AsyncTimeout <= 0 || c.AsyncTimeout > turn.MaxAsyncTimeout {
		p.errs = append(p.errs, fmt.Errorf("PARLEY_ASYNC_TIMEOUT: want more than 0 and at most %s, got %s", turn.MaxAsyncTimeout, c.AsyncTimeout))
	}
	if c.Questions.TTL <= 0 || c.Questions.TTL > questions.MaxTTL {
		p.errs = append(p.errs, fmt.Errorf("PARLEY_QUESTION_TTL: want more than 0 and at most %s, got %s", questions.MaxTTL, c.Questions.TTL))
	}
	c.Delivery.Unknown, c.Delivery.UnknownByPlatform = p.unknownPolicy("PARLEY_UNKNOWN_SEND_POLICY")
	c.Delivery = c.Delivery.WithDefaults()
	// Name the variable, not only the value, for the two enumerations.
	envelopeOK := true
	if m := c.Envelope.Mode; m != envelope.ModeStructured && m != envelope.ModeText {
		p.errs = append(p.errs, fmt.Errorf("PARLEY_REPLY_MODE: want structured or text, got %q", m))
		envelopeOK = false
	}
	if pol := c.Envelope.OnParseError; pol != envelope.PolicyFallbackText && pol != envelope.PolicyErrorMessage && pol != envelope.PolicySilent {
		p.errs = append(p.errs, fmt.Errorf("PARLEY_ON_PARSE_ERROR: want fallback_text, error_message or silent, got %q", pol))
		envelopeOK = false
	}
	if err := c.Envelope.Validate(); envelopeOK && err != nil {
		p.errs = append(p.errs, err)
	}
	if err := c.Timing().Validate(); err != nil {
		p.errs = append(p.errs, err)
	}
	if c.Agent.MaxAge <= 0 || c.Agent.MaxAge > turn.MaxMaxAge {
		p.errs = append(p.errs, fmt.Errorf("PARLEY_TURN_MAX_AGE: want more than 0 and at most %s, got %s", turn.MaxMaxAge, c.Agent.MaxAge))
	}
	if err := c.Delivery.Validate(); err != nil {
		p.errs = append(p.errs, fmt.Errorf("PARLEY_BUBBLE_DELAY, PARLEY_SEND_TIMEOUT, PARLEY_SEND_MAX_AGE, PARLEY_MAX_RESENDS: %w", err))
	}
	return c, errors.Join(p.errs...)
}

// Timing is what the consumers' function timeouts are sized from
// (resources.Timing): the stack sizes them from the same settings.
func (c Config) Timing() resources.Timing {
	return resources.Timing{AgentTimeout: c.Agent.Timeout, SendTimeout: c.Delivery.SendTimeout}.WithDefaults()
}

// RequireStore checks the settings every function that touches state needs.
func (c Config) RequireStore() error {
	var errs []error
	if c.Table == "" {
		errs = append(errs, missing(resources.EnvTable))
	}
	return errors.Join(errs...)
}

// RequireQueue checks that the named queue URL is set.
func (c Config) RequireQueue(q resources.QueueSpec) error {
	url := c.InboundQueueURL
	if q.EnvURL == resources.EnvOutboundQueueURL {
		url = c.OutboundQueueURL
	}
	if url == "" {
		return missing(q.EnvURL)
	}
	return nil
}

func missing(name string) error { return fmt.Errorf("%s is required", name) }

// parser collects every malformed variable instead of stopping at the first.
type parser struct {
	getenv Getenv
	errs   []error
}

func (p *parser) duration(name string, def time.Duration) time.Duration {
	v := p.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		p.errs = append(p.errs, fmt.Errorf("%s: want a duration like 1s or 5m, got %q", name, v))
		return def
	}
	return d
}

func (p *parser) boolean(name string, def bool) bool {
	v := p.getenv(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s: want true or false, got %q", name, v))
		return def
	}
	return b
}

func (p *parser) int(name string, def int) int {
	v := p.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		p.errs = append(p.errs, fmt.Errorf("%s: want a non-negative integer, got %q", name, v))
		return def
	}
	return n
}

func (p *parser) level(name string) slog.Level {
	var l slog.Level
	v := p.getenv(name)
	if v == "" {
		return slog.LevelInfo
	}
	if err := l.UnmarshalText([]byte(v)); err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s: want debug, info, warn or error, got %q", name, v))
		return slog.LevelInfo
	}
	return l
}

// busy reads the busy policy: a bare word is the default; platform=word
// and pattern=word (a thread key whose last part may be *) are rules, the
// patterns checked first, in the order written.
func (p *parser) busy(name string, env platform.Env) turn.BusyConfig {
	var c turn.BusyConfig
	for part := range strings.SplitSeq(p.getenv(name), ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		scope, word, scoped := strings.Cut(part, "=")
		if !scoped {
			word = scope
		}
		pol, err := turn.ParseBusyPolicy(word)
		if err != nil {
			p.errs = append(p.errs, fmt.Errorf("%s: %w (optionally per platform or thread pattern: telegram=interrupt)", name, err))
			continue
		}
		scope = strings.TrimSpace(scope)
		switch {
		case !scoped:
			c.Default = pol
		case !strings.Contains(scope, ":"):
			pl := message.Platform(scope)
			if _, ok := registry.Lookup(pl); !ok {
				p.errs = append(p.errs, fmt.Errorf("%s: %q names no platform Parley sends to (want one of %v)", name, part, chatPlatforms()))
				continue
			}
			if c.Platforms == nil {
				c.Platforms = map[message.Platform]turn.BusyPolicy{}
			}
			c.Platforms[pl] = pol
		default:
			var canon platform.Canonicalizer
			if t, err := events.ParseTarget(scope); err == nil {
				if a, ok := registry.Lookup(t.Platform); ok {
					canon = a.Targets(env)
				}
			}
			pat, err := events.ParsePattern(scope, canon)
			if err != nil {
				p.errs = append(p.errs, fmt.Errorf("%s: %w", name, err))
				continue
			}
			c.Threads = append(c.Threads, turn.BusyRule{Pattern: pat.String(), Match: pat.Match, Policy: pol})
		}
	}
	return c
}

// history reads the history settings and validates them.
func (p *parser) history(name, ttlName string) history.Config {
	c, err := history.Parse(p.getenv(name))
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s: %w", name, err))
		return history.Config{}
	}
	c.TTL = p.duration(ttlName, 0)
	if p.getenv(ttlName) != "" && c.TTL == 0 {
		p.errs = append(p.errs, fmt.Errorf("%s: want more than 0", ttlName))
	}
	if !c.On() {
		return history.Config{}
	}
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s, %s: %w", name, ttlName, err))
		return history.Config{}
	}
	return c
}

// triage reads the triage policy's JSON and validates it.
func (p *parser) triage(name string) triage.Config {
	c, err := triage.ParseConfig([]byte(p.getenv(name)))
	if err == nil {
		err = c.WithDefaults().Validate()
	}
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s: %w", name, err))
		return triage.Config{}
	}
	return c
}

// chatPlatforms are the platforms Parley sends to.
func chatPlatforms() []message.Platform {
	var out []message.Platform
	for _, a := range registry.Chat() {
		out = append(out, a.Platform())
	}
	return out
}

// unknownPolicy reads "hold", "resend", or per platform
// "resend,telegram=hold,slack=resend" (a bare word sets the default).
func (p *parser) unknownPolicy(name string) (delivery.UnknownPolicy, map[message.Platform]delivery.UnknownPolicy) {
	v := p.getenv(name)
	def := delivery.UnknownHold
	var per map[message.Platform]delivery.UnknownPolicy
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		plat, pol, hasPlat := strings.Cut(part, "=")
		if !hasPlat {
			pol = plat
		}
		policy := delivery.UnknownPolicy(strings.TrimSpace(pol))
		if policy != delivery.UnknownHold && policy != delivery.UnknownResend {
			p.errs = append(p.errs, fmt.Errorf("%s: want hold or resend (optionally per platform: telegram=resend), got %q", name, part))
			continue
		}
		if !hasPlat {
			def = policy
			continue
		}
		platform := message.Platform(strings.TrimSpace(plat))
		if _, ok := registry.Lookup(platform); !ok {
			p.errs = append(p.errs, fmt.Errorf("%s: %q names no platform Parley sends to (want one of %v)", name, part, chatPlatforms()))
			continue
		}
		if per == nil {
			per = map[message.Platform]delivery.UnknownPolicy{}
		}
		per[platform] = policy
	}
	return def, per
}
