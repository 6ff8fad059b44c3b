// Package awsenv builds the AWS SDK configuration a function runs with from
// the environment Lambda gives it, without the SDK's config package: that
// package links the SSO, OIDC, sign-in and STS clients for credential
// sources a function never has, and their package initialisation is part of
// every cold start (docs/capacity.md). What a function does have is read the
// way config.LoadDefaultConfig reads it:
//
//   - the region: AWS_REGION, else AWS_DEFAULT_REGION;
//   - the credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
//     AWS_SESSION_TOKEN, as Lambda sets them; else a credentials endpoint
//     (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI, with
//     AWS_CONTAINER_AUTHORIZATION_TOKEN or _TOKEN_FILE), as containers get
//     them;
//   - the endpoints: AWS_ENDPOINT_URL for every service, and
//     AWS_ENDPOINT_URL_<SERVICE> (the service id in capitals, spaces as
//     underscores: DYNAMODB, SQS, SECRETS_MANAGER) above it, unless
//     AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true. Clients (the SDK's, and
//     package awsjson) look the service's own variable up through the
//     configuration's sources, as the SDK's do under LoadDefaultConfig, so
//     the emulators are reached with no code of their own.
package awsenv

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
)

// ErrNoCredentials is returned when the environment names no credentials.
var ErrNoCredentials = errors.New("awsenv: no AWS credentials in the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_CONTAINER_CREDENTIALS_FULL_URI)")

// ErrNoRegion is returned when the environment names no region.
var ErrNoRegion = errors.New("awsenv: no AWS region in the environment (AWS_REGION)")

// containerHost serves AWS_CONTAINER_CREDENTIALS_RELATIVE_URI.
const containerHost = "http://169.254.170.2"

// Load returns the configuration getenv describes (os.Getenv in a function).
func Load(getenv func(string) string) (aws.Config, error) {
	env := source(getenv)
	cfg := aws.Config{Region: env.first("AWS_REGION", "AWS_DEFAULT_REGION"), ConfigSources: []any{env}}
	if cfg.Region == "" {
		return aws.Config{}, ErrNoRegion
	}
	if u := getenv("AWS_ENDPOINT_URL"); u != "" && !env.ignoreEndpoints() {
		cfg.BaseEndpoint = aws.String(u)
	}
	switch id, key := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"); {
	case id != "" && key != "":
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, key, getenv("AWS_SESSION_TOKEN")))
	case getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI") != "" || getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") != "":
		uri := getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI")
		if uri == "" {
			uri = containerHost + getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
		}
		cfg.Credentials = aws.NewCredentialsCache(endpointcreds.New(uri, func(o *endpointcreds.Options) {
			o.AuthorizationToken = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
			if f := getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); f != "" {
				o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
					b, err := os.ReadFile(f)
					return strings.TrimSpace(string(b)), err
				})
			}
		}))
	default:
		return aws.Config{}, ErrNoCredentials
	}
	return cfg, nil
}

// source is the environment as the SDK's clients look a service's endpoint
// up in a configuration's sources.
type source func(string) string

func (s source) first(names ...string) string {
	for _, n := range names {
		if v := s(n); v != "" {
			return v
		}
	}
	return ""
}

func (s source) ignoreEndpoints() bool {
	return strings.EqualFold(s("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"), "true")
}

// GetServiceBaseEndpoint is AWS_ENDPOINT_URL_<SERVICE> for the service
// sdkID names.
func (s source) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	if s.ignoreEndpoints() {
		return "", false, nil
	}
	v := s("AWS_ENDPOINT_URL_" + strings.ToUpper(strings.ReplaceAll(sdkID, " ", "_")))
	return v, v != "", nil
}

// GetIgnoreConfiguredEndpoints is AWS_IGNORE_CONFIGURED_ENDPOINT_URLS.
func (s source) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	v := s("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
	return strings.EqualFold(v, "true"), v != "", nil
}
