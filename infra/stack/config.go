package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/resources"
)

// Context keys read by ConfigFromContext. Pass them in cdk.json's "context"
// or on the command line: cdk synth -c parley:agentUrl=https://agent.example.
const (
	// ContextAssetDir is the folder holding <function>.zip for every function
	// (make build writes them).
	ContextAssetDir = "parley:assetDir"
	// ContextSecretPrefix starts the name of every secret the operator
	// creates, one per key: <prefix><KEY>, e.g. Parley/TELEGRAM_BOT_TOKEN.
	// Defaults to "<stack name>/". Secrets Manager's name characters only
	// (A-Za-z0-9/_+=.@-), at most 400 of them.
	ContextSecretPrefix = "parley:secretPrefix"
	// ContextIngressConcurrency is the reserved concurrency of each ingress
	// function (a public Function URL), a non-negative integer: an
	// unauthenticated flood then throttles that webhook (the platform
	// retries) instead of draining the account's concurrency and starving
	// turn and delivery. Defaults to 10; 0 reserves none (and sets no
	// ReservedConcurrentExecutions at all). Lambda keeps 100 of the
	// account's concurrency unreserved, so the account's quota must be at
	// least 100 plus the sum of the reservations (one per webhook): a new
	// account's low quota refuses them at deploy. Set 0 there, or ask for a
	// higher quota.
	ContextIngressConcurrency = "parley:ingressConcurrency"
	// ContextAgentURL is the agent endpoint the turn function calls.
	ContextAgentURL = "parley:agentUrl"
	// ContextAlarmEmail subscribes an email address to the alarm topic.
	ContextAlarmEmail = "parley:alarmEmail"
	// ContextStackName names the stack (two deployments in one account and
	// region need two names).
	ContextStackName = "parley:stackName"
	// ContextEnv sets non-secret settings on every function: a JSON object
	// of environment variables, e.g. -c 'parley:env={"PARLEY_BUBBLE_DELAY":"800ms"}'.
	// Secret keys and the variables the stack itself sets are refused.
	ContextEnv = "parley:env"
)

// Defaults.
const (
	// DefaultAssetDir is relative to infra/, where cdk runs `go run .`.
	DefaultAssetDir = "../build"
	// DefaultAgentURL selects the built-in echo agent.
	DefaultAgentURL = "builtin:echo"
	// DefaultStackName is the stack's name.
	DefaultStackName = "Parley"
	// DefaultIngressConcurrency is each ingress function's reserved
	// concurrency: a webhook only verifies, records and enqueues before it
	// answers, so at under 100 ms a request 10 serve over 100 a second.
	DefaultIngressConcurrency = 10
)

// EnvAgentURL carries Config.AgentURL to the turn function.
const EnvAgentURL = "PARLEY_AGENT_URL"

// Config is what a deployment may vary. Everything else is declared in
// package resources.
type Config struct {
	// AssetDir holds one <name>.zip per function, each with a bootstrap
	// executable at its root. Defaults to DefaultAssetDir.
	AssetDir string
	// SecretPrefix starts the names of the secrets the operator creates,
	// one per key: SecretName(SecretPrefix, key). Defaults to empty, which
	// the stack reads as "<stack name>/".
	SecretPrefix string
	// IngressConcurrency is the reserved concurrency of each ingress
	// function; 0 reserves none. Defaults to DefaultIngressConcurrency.
	IngressConcurrency *int
	// AgentURL is the turn function's agent: an http(s) URL or "builtin:echo".
	// Defaults to DefaultAgentURL.
	AgentURL string
	// AlarmEmail, when set, is subscribed to the alarm topic. Defaults to
	// empty: no subscription.
	AlarmEmail string
	// Env holds non-secret settings (PARLEY_TRIAGE, PARLEY_BUBBLE_DELAY, …)
	// set on every function; each function reads the ones it uses.
	Env map[string]string
}

// envName is a plain environment variable name.
var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// reservedEnv is what Env may not set: secrets (they live in Secrets
// Manager), and the variables the stack sets itself.
func reservedEnv() map[string]string {
	r := map[string]string{
		resources.EnvTable: "set by the stack", resources.EnvInboundQueueURL: "set by the stack",
		resources.EnvOutboundQueueURL: "set by the stack", resources.EnvSecrets: "set by the stack",
		resources.EnvInboundDLQURL: "set by the stack", resources.EnvOutboundDLQURL: "set by the stack",
		resources.EnvMediaBucket: "set by the stack",
		EnvAgentURL:              "use " + ContextAgentURL,
	}
	for _, k := range registry.SecretKeys() {
		r[k] = "a secret: put it in its Secrets Manager secret"
	}
	return r
}

// WithDefaults returns c with empty fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.AssetDir == "" {
		c.AssetDir = DefaultAssetDir
	}
	if c.AgentURL == "" {
		c.AgentURL = DefaultAgentURL
	}
	if c.IngressConcurrency == nil {
		n := DefaultIngressConcurrency
		c.IngressConcurrency = &n
	}
	return c
}

// secretPrefixPattern is what a secret name may hold (Secrets Manager allows
// 512 characters; 400 leave room for the longest key). It also keeps the
// names safe to write into PARLEY_SECRETS' JSON unescaped.
var secretPrefixPattern = regexp.MustCompile(`^[A-Za-z0-9/_+=.@-]*$`)

// maxSecretPrefix is the longest SecretPrefix accepted.
const maxSecretPrefix = 400

// SecretName is the name of the secret the operator creates for key.
func SecretName(prefix, key string) string { return prefix + key }

// Validate reports every problem with c, including missing function zips,
// so that `cdk synth` fails with a hint instead of a CDK asset error.
func (c Config) Validate() error {
	var errs []error
	if !secretPrefixPattern.MatchString(c.SecretPrefix) {
		errs = append(errs, fmt.Errorf("%s: %q holds a character Secrets Manager does not allow in a name (want A-Za-z0-9/_+=.@-)", ContextSecretPrefix, c.SecretPrefix))
	}
	if n := len(c.SecretPrefix); n > maxSecretPrefix {
		errs = append(errs, fmt.Errorf("%s: %d characters, at most %d", ContextSecretPrefix, n, maxSecretPrefix))
	}
	if c.IngressConcurrency != nil && *c.IngressConcurrency < 0 {
		errs = append(errs, fmt.Errorf("%s: want a non-negative integer (0: none), got %d", ContextIngressConcurrency, *c.IngressConcurrency))
	}
	if c.AgentURL != DefaultAgentURL && !strings.HasPrefix(c.AgentURL, "https://") && !strings.HasPrefix(c.AgentURL, "http://") {
		errs = append(errs, fmt.Errorf("%s: want an http(s) URL or %q, got %q", ContextAgentURL, DefaultAgentURL, c.AgentURL))
	}
	if c.AlarmEmail != "" {
		if _, err := mail.ParseAddress(c.AlarmEmail); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ContextAlarmEmail, err))
		}
	}
	reserved := reservedEnv()
	for k := range c.Env {
		if !envName.MatchString(k) {
			errs = append(errs, fmt.Errorf("%s: %q is not an environment variable name", ContextEnv, k))
		} else if why, ok := reserved[k]; ok {
			errs = append(errs, fmt.Errorf("%s: %s may not be set here (%s)", ContextEnv, k, why))
		}
	}
	if _, err := MediaTTL(c.Env); err != nil {
		errs = append(errs, err)
	}
	if _, err := resources.TimingFromEnv(c.Env); err != nil {
		// The consumers' timeouts are sized from these; what no Lambda
		// timeout can hold fails the synth instead of every turn.
		errs = append(errs, fmt.Errorf("%s: %w", ContextEnv, err))
	}
	for _, fn := range registry.Functions() {
		zip := AssetPath(c.AssetDir, fn.Name)
		if _, err := os.Stat(zip); err != nil {
			errs = append(errs, fmt.Errorf("function %s: %w (run `make build` first, or set -c %s=DIR)", fn.Name, err, ContextAssetDir))
		}
	}
	return errors.Join(errs...)
}

// AssetPath is where function name's deployment package is expected.
func AssetPath(assetDir, name string) string {
	return filepath.Join(assetDir, name+".zip")
}

// ConfigFromContext reads Config from the CDK context of node (cdk.json and
// -c flags), applies defaults and validates it.
func ConfigFromContext(node constructs.Node) (Config, error) {
	var errs []error
	str := func(key string) string {
		v := node.TryGetContext(&key)
		if v == nil {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: want a string, got %T", key, v))
		}
		return strings.TrimSpace(s)
	}
	c := Config{
		AssetDir:     str(ContextAssetDir),
		SecretPrefix: str(ContextSecretPrefix),
		AgentURL:     str(ContextAgentURL),
		AlarmEmail:   str(ContextAlarmEmail),
	}
	n, err := concurrencyFromContext(node.TryGetContext(jsii.String(ContextIngressConcurrency)))
	if err != nil {
		errs = append(errs, err)
	}
	c.IngressConcurrency = n
	c = c.WithDefaults()
	env, err := envFromContext(node.TryGetContext(jsii.String(ContextEnv)))
	if err != nil {
		errs = append(errs, err)
	}
	c.Env = env
	if err := errors.Join(errs...); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// concurrencyFromContext reads ContextIngressConcurrency: a JSON number in
// cdk.json, or its text from -c on the command line. nil: not set.
func concurrencyFromContext(v any) (*int, error) {
	refuse := fmt.Errorf("%s: want a non-negative integer (0: none), got %v", ContextIngressConcurrency, v)
	var f float64
	switch v := v.(type) {
	case nil:
		return nil, nil
	case float64:
		f = v
	case string:
		s := strings.TrimSpace(v)
		if s == "" {
			return nil, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, refuse
		}
		f = float64(n)
	default:
		return nil, refuse
	}
	if f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return nil, refuse
	}
	n := int(f)
	return &n, nil
}

// envFromContext reads ContextEnv: a JSON object in cdk.json, or its JSON
// text from -c on the command line. Every value must be a string.
func envFromContext(v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	if s, ok := v.(string); ok {
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("%s: want a JSON object of strings: %w", ContextEnv, err)
		}
		v = m
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a JSON object of strings, got %T", ContextEnv, v)
	}
	env := map[string]string{}
	for k, val := range m {
		s, ok := val.(string)
		if !ok {
			return nil, fmt.Errorf("%s: %s: want a string value, got %T", ContextEnv, k, val)
		}
		env[k] = s
	}
	return env, nil
}

// StackName is the stack name from context ContextStackName, defaulting to
// DefaultStackName.
func StackName(node constructs.Node) string {
	if v, ok := node.TryGetContext(jsii.String(ContextStackName)).(string); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return DefaultStackName
}
