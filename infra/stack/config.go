package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/parleyhq/parley/shared/resources"
)

// Context keys read by ConfigFromContext. Pass them in cdk.json's "context"
// or on the command line: cdk synth -c parley:agentUrl=https://agent.example.
const (
	// ContextAssetDir is the folder holding <function>.zip for every function
	// (make build writes them).
	ContextAssetDir = "parley:assetDir"
	// ContextSecretARN imports an existing secret (its complete ARN, with
	// the six-character suffix) instead of creating one.
	ContextSecretARN = "parley:secretArn"
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
)

// EnvAgentURL carries Config.AgentURL to the turn function.
const EnvAgentURL = "PARLEY_AGENT_URL"

// Config is what a deployment may vary. Everything else is declared in
// package resources.
type Config struct {
	// AssetDir holds one <name>.zip per function, each with a bootstrap
	// executable at its root. Defaults to DefaultAssetDir.
	AssetDir string
	// SecretARN, when set, is the complete ARN of an existing secret to use.
	// Defaults to empty: the stack creates the secret.
	SecretARN string
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

// reservedEnv is what Env may not set: secrets (they live in the secret),
// and the variables the stack sets itself.
func reservedEnv() map[string]string {
	r := map[string]string{
		resources.EnvTable: "set by the stack", resources.EnvInboundQueueURL: "set by the stack",
		resources.EnvOutboundQueueURL: "set by the stack", resources.EnvSecretARN: "set by the stack",
		resources.EnvInboundDLQURL: "set by the stack", resources.EnvOutboundDLQURL: "set by the stack",
		EnvAgentURL: "use " + ContextAgentURL,
	}
	for _, k := range resources.SecretKeys() {
		r[k] = "a secret: put it in the Secrets Manager secret"
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
	return c
}

// A complete secret ARN ends in -XXXXXX, the suffix Secrets Manager appends;
// a partial ARN would make grants fall back to a wildcard.
var secretARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$`)

// Validate reports every problem with c, including missing function zips,
// so that `cdk synth` fails with a hint instead of a CDK asset error.
func (c Config) Validate() error {
	var errs []error
	if c.SecretARN != "" && !secretARNPattern.MatchString(c.SecretARN) {
		errs = append(errs, fmt.Errorf("%s: want the complete secret ARN (ending in -XXXXXX), got %q", ContextSecretARN, c.SecretARN))
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
	if _, err := resources.TimingFromEnv(c.Env); err != nil {
		// The consumers' timeouts are sized from these; what no Lambda
		// timeout can hold fails the synth instead of every turn.
		errs = append(errs, fmt.Errorf("%s: %w", ContextEnv, err))
	}
	for _, fn := range resources.Functions() {
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
		AssetDir:   str(ContextAssetDir),
		SecretARN:  str(ContextSecretARN),
		AgentURL:   str(ContextAgentURL),
		AlarmEmail: str(ContextAlarmEmail),
	}.WithDefaults()
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
