package app

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go/logging"
)

// TestLoadTakesEveryStandardAWSSetting: the clients are built from the
// SDK's default configuration loader, so the settings an operator sets for
// any SDK application reach them: retries, FIPS endpoints, an endpoint per
// service (the emulators).
func TestLoadTakesEveryStandardAWSSetting(t *testing.T) {
	for k, v := range map[string]string{
		"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_MAX_ATTEMPTS": "7", "AWS_RETRY_MODE": "adaptive", "AWS_USE_FIPS_ENDPOINT": "true",
		"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:9/ddb", "AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:9/sqs",
		"AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "PARLEY_SECRETS": "",
	} {
		t.Setenv(k, v)
	}
	d, err := Load(t.Context(), "telegram")
	if err != nil {
		t.Fatal(err)
	}
	ddb, sqs := d.DynamoDB.Options(), d.SQS.Options()
	if ddb.Region != "eu-west-1" || ddb.RetryMaxAttempts != 7 || ddb.RetryMode != aws.RetryModeAdaptive ||
		ddb.EndpointOptions.UseFIPSEndpoint != aws.FIPSEndpointStateEnabled {
		t.Errorf("DynamoDB client: region %q, %d attempts, retry mode %q, FIPS %v", ddb.Region, ddb.RetryMaxAttempts, ddb.RetryMode, ddb.EndpointOptions.UseFIPSEndpoint)
	}
	if aws.ToString(ddb.BaseEndpoint) != "http://127.0.0.1:9/ddb" || aws.ToString(sqs.BaseEndpoint) != "http://127.0.0.1:9/sqs" {
		t.Errorf("endpoints: DynamoDB %q, SQS %q; want each service's AWS_ENDPOINT_URL_*", aws.ToString(ddb.BaseEndpoint), aws.ToString(sqs.BaseEndpoint))
	}
	if hc, ok := ddb.HTTPClient.(*awshttp.BuildableClient); !ok || hc.GetTransport().MaxIdleConnsPerHost != 16 {
		t.Errorf("the clients' HTTP client %T keeps too few connections for ingress's 16 threads at once", ddb.HTTPClient)
	}
	if _, ok := ddb.Logger.(sdkLogger); !ok {
		t.Errorf("the SDK logs through %T, not the function's JSON log", ddb.Logger)
	}
}

func TestLoadRefusesNoRegion(t *testing.T) {
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "PARLEY_SECRETS"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	if _, err := Load(t.Context(), "telegram"); err == nil || !strings.Contains(err.Error(), "AWS_REGION") {
		t.Fatalf("Load without a region: %v; want a refusal naming AWS_REGION", err)
	}
}

func TestSDKLinesAreJSON(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := sdkLogger{log: NewLogger(&buf, slog.LevelDebug)}
	l.Logf(logging.Warn, "retry quota exceeded, %d available", 0)
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("not a JSON line: %q", buf.String())
	}
	if rec["level"] != "WARN" || rec["source"] != "aws-sdk" || rec["msg"] != "retry quota exceeded, 0 available" {
		t.Fatalf("line %v", rec)
	}
}

// TestTheBucketIsBuiltWhereItIsUsed: Load leaves the bucket's client to
// the functions that use it (so ingress does not link S3), and Turn, given
// what Load built with PARLEY_MEDIA_BUCKET set, stores media through one
// it builds from the same AWS configuration.
func TestTheBucketIsBuiltWhereItIsUsed(t *testing.T) {
	for k, v := range map[string]string{
		"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "PARLEY_SECRETS": "",
		"PARLEY_TABLE": "parley", "PARLEY_MEDIA_BUCKET": "parley-media",
		"PARLEY_INBOUND_QUEUE_URL":  "https://sqs.eu-west-1.amazonaws.com/123456789012/inbound.fifo",
		"PARLEY_OUTBOUND_QUEUE_URL": "https://sqs.eu-west-1.amazonaws.com/123456789012/outbound.fifo",
		"PARLEY_AGENT_URL":          "https://agent.example/turn", "PARLEY_AGENT_SECRET": "whsec_" + "cGFybGV5LWFnZW50LXRlc3Qtc2VjcmV0",
	} {
		t.Setenv(k, v)
	}
	d, err := Load(t.Context(), "turn")
	if err != nil {
		t.Fatal(err)
	}
	if d.Objects != nil {
		t.Fatalf("Load built a bucket client (%T): every function would link S3", d.Objects)
	}
	if b := d.withBucket(); b.Objects == nil {
		t.Fatal("withBucket built no client with PARLEY_MEDIA_BUCKET set")
	}
	if _, err := Turn(d); err != nil {
		t.Fatalf("Turn from Load's deps with a bucket: %v", err)
	}
}
