package emulatortest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/parleyhq/parley/localstack/emulator"
)

// Env is one test's view of the emulators.
type Env struct {
	// AWS is loaded with config.LoadDefaultConfig from the standard
	// environment variables, with test-friendly retries and timeouts: at most
	// 3 attempts, at most 100 ms between them, no retry quota, 30-second
	// HTTP timeout (above SQS's 20-second long poll).
	AWS      aws.Config
	DynamoDB *dynamodb.Client
	SQS      *sqs.Client
	// Resources are this Env's own table and queues.
	Resources emulator.Resources
	// Stack is the process's shared emulator stack; nil when the tests run
	// against an external endpoint (ExternalEnv).
	Stack *emulator.Stack
}

// ExternalEnv names the variable that points the tests at an endpoint that is
// already running (LocalStack: make test-localstack) instead of starting the
// emulators: set it to "external" and set AWS_ENDPOINT_URL.
const ExternalEnv = "PARLEY_TEST_AWS"

func external() bool { return os.Getenv(ExternalEnv) == "external" }

// startTimeout is generous: in CI, several test processes start a JVM each
// on two cores.
const startTimeout = 90 * time.Second

var (
	once      sync.Once
	stack     *emulator.Stack
	awsConfig aws.Config
	idle      interface{ CloseIdleConnections() }
	startErr  error
	seq       atomic.Int64
)

// New returns clients and fresh resources on the process's emulator stack,
// starting the stack on first use. It fails t if the stack cannot start or
// the resources cannot be created.
func New(t testing.TB) *Env {
	t.Helper()
	once.Do(start)
	if startErr != nil {
		t.Fatalf("emulatortest: %v", startErr)
	}
	if stack != nil {
		if err := stack.Err(); err != nil {
			t.Fatalf("emulatortest: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := emulator.Provision(ctx, awsConfig, prefix(t.Name()))
	if err != nil {
		t.Fatalf("emulatortest: %v", err)
	}
	return &Env{
		AWS:       awsConfig,
		DynamoDB:  dynamodb.NewFromConfig(awsConfig),
		SQS:       sqs.NewFromConfig(awsConfig),
		Resources: res,
		Stack:     stack,
	}
}

func start() {
	ctx := context.Background()
	var s *emulator.Stack
	if !external() {
		var err error
		s, err = emulator.Start(ctx, emulator.Options{StartTimeout: startTimeout})
		if err != nil {
			startErr = err
			return
		}
		if err := s.Setenv(); err != nil {
			_ = s.Stop()
			startErr = err
			return
		}
	}
	// A BuildableClient, because LoadDefaultConfig adds AWS_CA_BUNDLE's
	// certificates (set on some machines) to it, and refuses other clients.
	httpClient := awshttp.NewBuildableClient().
		WithTimeout(30 * time.Second).
		WithTransportOptions(func(tr *http.Transport) {
			tr.MaxIdleConnsPerHost = 32 // parallel tests on two endpoints
		})
	cfg, err := config.LoadDefaultConfig(ctx,
		config.WithHTTPClient(httpClient),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 3
				o.MaxBackoff = 100 * time.Millisecond
				o.RateLimiter = ratelimit.None
			})
		}),
	)
	if err != nil {
		if s != nil {
			_ = s.Stop()
		}
		startErr = fmt.Errorf("load AWS config: %w", err)
		return
	}
	// Frozen into a plain *http.Client whose idle connections Run can close:
	// each holds goroutines that goleak would report.
	if b, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
		cfg.HTTPClient = b.Freeze()
	}
	idle, _ = cfg.HTTPClient.(interface{ CloseIdleConnections() })
	stack, awsConfig = s, cfg
}

// Run runs the tests, then stops the stack if one was started, and returns
// m.Run's exit code (1 instead of 0 if the stack would not stop).
func Run(m *testing.M) int {
	code := m.Run()
	once.Do(func() {}) // nothing starts a stack after this
	if idle != nil {
		idle.CloseIdleConnections()
	}
	if stack == nil {
		return code
	}
	if err := stack.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "emulatortest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Main is TestMain's body: os.Exit(Run(m)).
func Main(m *testing.M) { os.Exit(Run(m)) }

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// prefix makes a resource prefix unique in this process and recognizable:
// the test's name, made safe for table and queue names, and a sequence
// number. At most 40+1+digits characters, well within emulator's limit.
func prefix(testName string) string {
	name := unsafeChars.ReplaceAllString(testName, "_")
	if len(name) > 40 {
		name = name[:40]
	}
	if external() {
		// A shared endpoint: other test processes use it too.
		name = name[:min(len(name), 32)] + "-" + strconv.Itoa(os.Getpid())
	}
	return name + "-" + strconv.FormatInt(seq.Add(1), 10)
}
