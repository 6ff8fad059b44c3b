package awsenv_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/awsenv"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestLoadReachesTheEmulators: clients built from the configuration reach
// DynamoDB Local and fauxqs through AWS_ENDPOINT_URL_* alone, as functions
// do in make run.
func TestLoadReachesTheEmulators(t *testing.T) {
	e := emulatortest.New(t) // sets AWS_ENDPOINT_URL_DYNAMODB, _SQS, the region and credentials
	cfg, err := awsenv.Load(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dynamodb.NewFromConfig(cfg).DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(e.Resources.Table)}); err != nil {
		t.Fatalf("DynamoDB Local through the configuration: %v", err)
	}
	if _, err := sqs.NewFromConfig(cfg).GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(e.Resources.InboundURL)}); err != nil {
		t.Fatalf("fauxqs through the configuration: %v", err)
	}
}

func TestLoadReadsTheEnvironment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "tok"}

	t.Run("RegionAndStaticCredentials", func(t *testing.T) {
		vars := map[string]string{"AWS_DEFAULT_REGION": "eu-west-1"}
		for k, v := range base {
			vars[k] = v
		}
		cfg, err := awsenv.Load(env(vars))
		if err != nil || cfg.Region != "eu-west-1" {
			t.Fatalf("Load = %q, %v; want the default region", cfg.Region, err)
		}
		creds, err := cfg.Credentials.Retrieve(ctx)
		if err != nil || creds.AccessKeyID != "AKID" || creds.SecretAccessKey != "secret" || creds.SessionToken != "tok" {
			t.Fatalf("credentials %+v, %v", creds, err)
		}
		if cfg.BaseEndpoint != nil {
			t.Fatalf("an endpoint with none configured: %s", *cfg.BaseEndpoint)
		}
	})

	t.Run("Endpoints", func(t *testing.T) {
		vars := map[string]string{"AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "http://all:1", "AWS_ENDPOINT_URL_SECRETS_MANAGER": "http://sm:2"}
		for k, v := range base {
			vars[k] = v
		}
		cfg, err := awsenv.Load(env(vars))
		if err != nil || aws.ToString(cfg.BaseEndpoint) != "http://all:1" {
			t.Fatalf("Load = %v, base endpoint %q", err, aws.ToString(cfg.BaseEndpoint))
		}
		src := cfg.ConfigSources[0].(interface {
			GetServiceBaseEndpoint(context.Context, string) (string, bool, error)
		})
		if v, ok, _ := src.GetServiceBaseEndpoint(ctx, "Secrets Manager"); !ok || v != "http://sm:2" {
			t.Fatalf("Secrets Manager's endpoint = %q, %v", v, ok)
		}
		if _, ok, _ := src.GetServiceBaseEndpoint(ctx, "DynamoDB"); ok {
			t.Fatal("DynamoDB has no endpoint of its own here")
		}
		vars["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "true"
		cfg, _ = awsenv.Load(env(vars))
		src = cfg.ConfigSources[0].(interface {
			GetServiceBaseEndpoint(context.Context, string) (string, bool, error)
		})
		if _, ok, _ := src.GetServiceBaseEndpoint(ctx, "Secrets Manager"); ok || cfg.BaseEndpoint != nil {
			t.Fatal("configured endpoints used though ignored")
		}
	})

	t.Run("ContainerCredentials", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "let-me-in" {
				http.Error(w, `{"code":"denied","message":"no"}`, http.StatusForbidden)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]string{
				"AccessKeyId": "CKID", "SecretAccessKey": "csecret", "Token": "ctok",
				"Expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			})
		}))
		t.Cleanup(srv.Close)
		cfg, err := awsenv.Load(env(map[string]string{
			"AWS_REGION": "us-east-1", "AWS_CONTAINER_CREDENTIALS_FULL_URI": srv.URL, "AWS_CONTAINER_AUTHORIZATION_TOKEN": "let-me-in",
		}))
		if err != nil {
			t.Fatal(err)
		}
		creds, err := cfg.Credentials.Retrieve(ctx)
		if err != nil || creds.AccessKeyID != "CKID" || creds.SessionToken != "ctok" {
			t.Fatalf("credentials %+v, %v", creds, err)
		}
	})

	t.Run("Missing", func(t *testing.T) {
		if _, err := awsenv.Load(env(base)); !errors.Is(err, awsenv.ErrNoRegion) {
			t.Fatalf("no region: %v", err)
		}
		if _, err := awsenv.Load(env(map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKID"})); !errors.Is(err, awsenv.ErrNoCredentials) {
			t.Fatalf("half the credentials: %v", err)
		}
	})
}
