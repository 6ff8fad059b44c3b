package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/consumer"
	"github.com/parleyhq/parley/shared/delivery"
	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/media"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/sweeper"
	"github.com/parleyhq/parley/shared/triage"
	"github.com/parleyhq/parley/shared/turn"
	"github.com/parleyhq/parley/shared/urlfetch"
)

// Deps is what every function is built from.
type Deps struct {
	Config config.Config
	Log    *slog.Logger
	// DynamoDB and SQS are the SDK's clients, built once per process.
	DynamoDB *dynamodb.Client
	SQS      *sqs.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// HTTP is the client for platform and agent calls; nil means a default.
	HTTP *http.Client
	// AWS is the configuration the clients were built from.
	AWS aws.Config
	// Objects is the media bucket (Config.Media); nil where media is off.
	// Only Turn, Delivery and Reply build it (from AWS, where Load left it
	// nil), so only their binaries link the S3 client.
	Objects media.Objects
	// Fetch bounds delivery's fetches of agents' media URLs (package
	// urlfetch); the zero value is its defaults, public HTTPS only. A local
	// stack may allow its own addresses and CA.
	Fetch urlfetch.Options
}

// Load reads the configuration (and, in AWS, the function's own secrets:
// registry.Function(function).Secrets), and builds the logger and the AWS
// clients, from one AWS configuration: config.LoadDefaultConfig's, so every
// standard setting applies (credentials of any source, AWS_RETRY_MODE,
// AWS_MAX_ATTEMPTS, AWS_USE_FIPS_ENDPOINT, …). The clients find their
// endpoints the SDK's standard way: AWS_ENDPOINT_URL_DYNAMODB /
// AWS_ENDPOINT_URL_SQS / AWS_ENDPOINT_URL for emulators, the region's
// endpoints otherwise.
func Load(ctx context.Context, function string) (Deps, error) {
	fn, ok := registry.Function(function)
	if !ok {
		return Deps{}, fmt.Errorf("no function %q is declared", function)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithHTTPClient(httpClient()))
	if err != nil {
		return Deps{}, fmt.Errorf("load AWS config: %w", err)
	}
	if awsCfg.Region == "" {
		// The SDK would refuse every call; refuse the start instead.
		return Deps{}, errors.New("load AWS config: no region (AWS_REGION)")
	}
	cfg, err := config.Load(ctx, func(context.Context) (aws.Config, error) { return awsCfg, nil }, fn.Secrets)
	if err != nil {
		return Deps{}, err
	}
	log := NewLogger(os.Stdout, cfg.LogLevel)
	awsCfg.Logger = sdkLogger{log: log}
	for _, u := range cfg.Unread {
		// A platform the operator does not use has no secrets; one that is
		// needed fails the start with its own message, after this line.
		log.Warn("secret absent or not readable: its setting is unset", "key", u.Key, "secret_id", u.SecretID, "code", u.Code)
	}
	d := Deps{
		Config:   cfg,
		Log:      log,
		DynamoDB: dynamodb.NewFromConfig(awsCfg),
		SQS:      sqs.NewFromConfig(awsCfg),
		AWS:      awsCfg,
	}
	return d, nil
}

// WithObjects is d with its media bucket's client, from awsCfg, where the
// configuration names a bucket: only the functions that store media are
// given one (PARLEY_MEDIA_BUCKET).
func (d Deps) WithObjects(awsCfg aws.Config) Deps {
	if d.Config.Media.On() {
		d.Objects = media.NewS3Objects(awsCfg, d.Config.Media.Bucket, d.Config.Media.PathStyle)
	}
	return d
}

// withBucket is d with its media bucket's client where it has none yet:
// called by the functions that use the bucket, never by Load, so an
// ingress binary does not link S3 (about 0.65 MB of its bootstrap).
func (d Deps) withBucket() Deps {
	if d.Objects != nil {
		return d
	}
	return d.WithObjects(d.AWS)
}

// httpClient is the SDK's own HTTP client, keeping as many idle connections
// to one endpoint as ingress admits threads at once (16, where the SDK keeps
// 10), so a batch's parallel writes reuse them. A BuildableClient, because
// LoadDefaultConfig adds AWS_CA_BUNDLE's certificates to it.
func httpClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConnsPerHost = 16
	})
}

// NewLogger returns Parley's structured logger: JSON lines with stable keys.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// Fatal logs a start-up failure and exits: Lambda reports an init error.
func Fatal(log *slog.Logger, err error) {
	if log == nil {
		log = NewLogger(os.Stderr, slog.LevelInfo)
	}
	log.Error("start-up failed", "error", err)
	os.Exit(1)
}

func (d Deps) store() *dynamostore.Store { return dynamostore.New(d.DynamoDB, d.Config.Table) }

func (d Deps) pipeline(r platform.Receiver) (*ingress.Pipeline, error) {
	if err := d.Config.RequireStore(); err != nil {
		return nil, err
	}
	if err := d.Config.RequireQueue(resources.Inbound); err != nil {
		return nil, err
	}
	return &ingress.Pipeline{
		Receiver:  r,
		Claims:    d.store(),
		Queue:     queue.New(d.SQS, d.Config.InboundQueueURL),
		MaxBody:   d.Config.MaxBodyBytes,
		DedupeTTL: d.Config.DedupeTTL,
		AllowBots: d.Config.AllowBots,
		Optional:  d.Config.Optional,
		Reports:   d.store(),
		Now:       d.Now,
		Log:       d.Log.With("function", "ingress"),
	}, nil
}

// turnConfig is the turn's configuration from the function's.
func (d Deps) turnConfig() turn.Config {
	return turn.Config{
		Envelope: d.Config.Envelope, MaxAge: d.Config.Agent.MaxAge, Questions: d.Config.Questions, AsyncTimeout: d.Config.AsyncTimeout,
		History: d.Config.History, Status: d.Config.Status, Busy: d.Config.Busy, Preview: d.Config.Preview,
		// The claim outlives the function's timeout, which is sized from
		// the agent's: a running turn is never taken over.
		ClaimLease: d.Config.Timing().TurnTimeout() + 30*time.Second,
		// Kept as long as the ingress keys, which send every duplicate
		// again: a late copy finds the turn's claim. A shorter setting
		// forgets keys sooner, never answered turns.
		ClaimTTL: max(d.Config.DedupeTTL, store.DedupeTTL),
	}
}

// Ingress is the webhook handler of a chat platform: its receiver, built
// from its settings, in front of the webhook core.
func Ingress(d Deps, a platform.Adapter) (http.Handler, error) {
	r, err := a.NewReceiver(d.Config.Platforms)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Platform(), err)
	}
	p, err := d.pipeline(r)
	if err != nil {
		return nil, err
	}
	p.Window = a.Capabilities().Window > 0
	if d.Config.Optional.TriageReactions {
		if p.Triage, err = triage.New(d.Config.Triage, d.store(), p.Log); err != nil {
			return nil, fmt.Errorf("PARLEY_TRIAGE: %w", err)
		}
	}
	return p, nil
}

// senders builds the send half of every chat platform whose credentials are
// set. A platform without them has no sender: the turn still knows its
// capabilities, and delivery fails its units visibly ("no sender
// configured") instead of burning attempts on 401s.
func (d Deps) senders() (map[message.Platform]platform.Sender, error) {
	out := map[message.Platform]platform.Sender{}
	var errs []error
	for _, a := range registry.Chat() {
		s, err := a.NewSender(d.Config.Platforms, d.HTTP)
		switch {
		case errors.Is(err, platform.ErrNotConfigured):
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", a.Platform(), err))
		default:
			out[a.Platform()] = s
		}
	}
	return out, errors.Join(errs...)
}

// Turn is the inbound.fifo consumer.
func Turn(d Deps) (*consumer.Consumer, error) {
	d = d.withBucket()
	if err := d.Config.RequireStore(); err != nil {
		return nil, err
	}
	if err := d.Config.RequireQueue(resources.Outbound); err != nil {
		return nil, err
	}
	if err := d.Config.RequireQueue(resources.Inbound); err != nil {
		return nil, err
	}
	secret, err := standardwebhooks.ParseSecret(d.Config.Agent.Secret)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", resources.SecretAgentSecret, err)
	}
	ag := &agent.Client{URL: d.Config.Agent.URL, Secret: secret, Timeout: d.Config.Agent.Timeout, HTTP: d.HTTP, Now: d.Now}
	if err := ag.Validate(); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	senders, err := d.senders()
	if err != nil {
		return nil, err
	}
	channels := map[message.Platform]turn.Channel{}
	for _, a := range registry.Chat() {
		ch := turn.Channel{Capabilities: a.Capabilities(), Private: registry.Private}
		s := senders[a.Platform()]
		ch.Typer, _ = s.(platform.Typer)
		ch.MessageTyper, _ = s.(platform.MessageTyper)
		ch.Editor, _ = s.(platform.Editor)
		ch.Acknowledger, _ = s.(platform.Acknowledger)
		ch.Reactor, _ = s.(platform.Reactor)
		ch.Downloader, _ = s.(platform.Downloader)
		ch.Previewer, _ = s.(platform.Previewer)
		channels[a.Platform()] = ch
	}
	st := d.store()
	p := &turn.Processor{
		Claims: st, Intents: st, Outbox: queue.New(d.SQS, d.Config.OutboundQueueURL), Agent: ag,
		Channels: channels, Questions: st, Inbox: queue.New(d.SQS, d.Config.InboundQueueURL),
		Reports: st, Awaits: st, Park: queue.New(d.SQS, d.Config.InboundQueueURL), Windows: st, Previews: st,
		Config: d.turnConfig(),
		Now:    d.Now,
		Log:    d.Log.With("function", "turn"),
	}
	if d.Config.History.On() {
		p.History = st
	}
	if d.Config.Busy.Any() {
		p.Busy = st
	}
	if d.Config.Media.On() {
		if d.Objects == nil {
			return nil, fmt.Errorf("%s is set, but the function has no client for it", resources.EnvMediaBucket)
		}
		p.Media = &media.Stager{Objects: d.Objects, Config: d.Config.Media, Now: d.Now, Log: p.Log}
	}
	return &consumer.Consumer{
		Handle:      p.Handle,
		Visibility:  queue.New(d.SQS, d.Config.InboundQueueURL),
		DeadLetters: d.deadLetters(d.Config.InboundDLQURL),
		// Never start an agent call that cannot finish before the deadline.
		MinStart:  d.Config.Agent.Timeout + 5*time.Second,
		Now:       d.Now,
		Log:       d.Log.With("function", "turn"),
		Correlate: inboundKey,
	}, nil
}

// Delivery is the outbound.fifo consumer.
func Delivery(d Deps) (*consumer.Consumer, error) {
	d = d.withBucket()
	if err := d.Config.RequireStore(); err != nil {
		return nil, err
	}
	if err := d.Config.RequireQueue(resources.Outbound); err != nil {
		return nil, err
	}
	senders, err := d.senders()
	if err != nil {
		return nil, err
	}
	files, err := d.outboundFiles()
	if err != nil {
		return nil, err
	}
	channels := map[message.Platform]delivery.Channel{}
	for p, s := range senders {
		a, _ := registry.Lookup(p)
		channels[p] = delivery.Channel{Sender: s, Capabilities: a.Capabilities(), Files: files}
	}
	p := &delivery.Processor{
		Intents: d.store(), Previews: d.store(), Channels: channels, Config: d.Config.Delivery, Now: d.Now,
		Log: d.Log.With("function", "delivery"),
	}
	return &consumer.Consumer{
		Handle:      p.Handle,
		Visibility:  queue.New(d.SQS, d.Config.OutboundQueueURL),
		DeadLetters: d.deadLetters(d.Config.OutboundDLQURL),
		MinStart:    d.Config.Delivery.WithDefaults().SendTimeout + 2*time.Second,
		Now:         d.Now,
		Log:         d.Log.With("function", "delivery"),
		Correlate:   outboundIntent,
	}, nil
}

// inboundKey names an inbound record's event by its key, the correlation
// id; nothing for a body that does not decode.
func inboundKey(r consumer.Record) []any {
	in, err := intent.DecodeInbound([]byte(r.Body))
	if err != nil {
		return nil
	}
	return []any{"event_key", in.Event.Key()}
}

// outboundIntent names an outbound record's event (the correlation id) and
// its intent and unit, read without the intent.
func outboundIntent(r consumer.Record) []any {
	ref, err := intent.DecodeRef([]byte(r.Body))
	if err != nil {
		return nil
	}
	if ref.Event == "" { // a body of the previous release
		return []any{"intent_id", ref.Intent, "unit_id", ref.Unit}
	}
	return []any{"event_key", ref.Event, "intent_id", ref.Intent, "unit_id", ref.Unit}
}

// Sweeper is the scheduled sweeper.
func Sweeper(d Deps) (*sweeper.Processor, error) {
	if err := d.Config.RequireStore(); err != nil {
		return nil, err
	}
	for _, q := range []resources.QueueSpec{resources.Inbound, resources.Outbound} {
		if err := d.Config.RequireQueue(q); err != nil {
			return nil, err
		}
	}
	senders, err := d.senders()
	if err != nil {
		return nil, err
	}
	previewers := map[message.Platform]sweeper.Previewer{}
	for p, s := range senders {
		if pr, ok := s.(platform.Previewer); ok {
			previewers[p] = pr
		}
	}
	return &sweeper.Processor{
		Store:      d.store(),
		Inbound:    queue.New(d.SQS, d.Config.InboundQueueURL),
		Outbound:   queue.New(d.SQS, d.Config.OutboundQueueURL),
		Previewers: previewers,
		Now:        d.Now,
		Log:        d.Log.With("function", "sweeper"),
	}, nil
}

// deadLetters is the dead-letter queue at url, or nil (no such port) when
// url is empty.
func (d Deps) deadLetters(url string) consumer.DeadLetters {
	if url == "" {
		return nil
	}
	return queue.New(d.SQS, url)
}
