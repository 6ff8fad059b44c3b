package resources

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Environment variables through which a function learns the physical names of
// the resources below. The CDK stack sets them; the local runner and the tests
// set them to the emulator's resources.
const (
	EnvTable = "PARLEY_TABLE"
	// EnvMediaBucket names the media bucket (package media); unset, media is off.
	EnvMediaBucket      = "PARLEY_MEDIA_BUCKET"
	EnvInboundQueueURL  = "PARLEY_INBOUND_QUEUE_URL"
	EnvOutboundQueueURL = "PARLEY_OUTBOUND_QUEUE_URL"
	// The dead-letter queues' URLs: a consumer moves a poison record there
	// itself (see package consumer).
	EnvInboundDLQURL  = "PARLEY_INBOUND_DLQ_URL"
	EnvOutboundDLQURL = "PARLEY_OUTBOUND_DLQ_URL"
	// EnvSecrets tells a function, in AWS, where its secrets are: a JSON
	// object of the Secret keys below that it reads (FunctionSpec.Secrets)
	// to the Secrets Manager secret holding each one's value. One secret per
	// key, so IAM lets each function read only its own.
	EnvSecrets = "PARLEY_SECRETS"
)

// KeyType is a DynamoDB scalar attribute type.
type KeyType string

const (
	String KeyType = "S"
	Number KeyType = "N"
)

// Attribute is a key attribute.
type Attribute struct {
	Name string
	Type KeyType
}

// Projection is what a global secondary index copies of each item.
type Projection string

const (
	// ProjectAll copies every attribute (reads need no second fetch).
	ProjectAll Projection = "ALL"
	// ProjectKeysOnly copies only the keys: an item's other attributes can
	// change without a write to the index.
	ProjectKeysOnly Projection = "KEYS_ONLY"
)

// Index is a global secondary index.
type Index struct {
	Name         string
	PartitionKey Attribute
	SortKey      Attribute
	Projection   Projection
}

// TableSpec describes the single state table.
type TableSpec struct {
	// Name is the logical name (CDK construct id, local name prefix).
	Name         string
	PartitionKey Attribute
	// TTLAttribute holds an epoch-seconds expiry. DynamoDB deletes expired
	// items lazily (up to days late), so readers check it too.
	TTLAttribute string
	Indexes      []Index
}

// Table is Parley's one table: dedupe claims, triage counters, turn claims,
// send intents. One partition key, on-demand, TTL on expires_at.
var Table = TableSpec{
	Name:         "State",
	PartitionKey: Attribute{Name: "pk", Type: String},
	TTLAttribute: "expires_at",
	Indexes:      []Index{Attention, Sweep, Window},
}

// Attention is sparse: only items an operator must look at carry attn (a
// unit held in unknown_after_send, a failed unit), so runbooks query it
// instead of scanning.
var Attention = Index{
	Name:         "attention",
	PartitionKey: Attribute{Name: "attn", Type: String},
	SortKey:      Attribute{Name: "attn_at", Type: String},
	Projection:   ProjectAll,
}

// Sweep is the sweeper's work list, sparse too: an item carries sw (its
// shard) and sw_at (when the sweeper should look at it, Unix ms) only while
// it may need mending: a send intent with open units, a running turn claim, a
// deferred event, an open question. Keys only, so an item's own updates never
// write the index; only entering, rescheduling and leaving it do.
var Sweep = Index{
	Name:         "sweep",
	PartitionKey: Attribute{Name: "sw", Type: String},
	SortKey:      Attribute{Name: "sw_at", Type: Number},
	Projection:   ProjectKeysOnly,
}

// Window lists people's messages by conversation, newest last, on
// platforms with a customer-service window (WhatsApp's 24 hours): sparse,
// only a person's message on such a platform carries win (its thread key)
// and win_at (when it was written, Unix ms), on the dedupe key ingress
// writes anyway, so recording the window costs no request, only the
// index's write unit; keys only. A send that answers no fresh message
// (/send, an events turn) reads the newest with one Query.
var Window = Index{
	Name:         "window",
	PartitionKey: Attribute{Name: "win", Type: String},
	SortKey:      Attribute{Name: "win_at", Type: Number},
	Projection:   ProjectKeysOnly,
}

// SweepShard is the one partition of the sweep index. Every write to the
// index lands on it, two per message (an intent entering and leaving the
// list), and DynamoDB throttles a partition at about 1,000 writes a second:
// about 500 messages a second before an index shard would be needed, which
// Parley does not have yet.
const SweepShard = "s0"

// QueueSpec describes a FIFO queue and its FIFO dead-letter queue.
type QueueSpec struct {
	// Name is the logical name; physical names end in ".fifo".
	Name string
	// EnvURL is the variable that carries the queue's URL to functions.
	EnvURL string
	// EnvDLQURL carries the dead-letter queue's URL to the queue's consumer.
	EnvDLQURL string
	// VisibilityTimeout is at least 6 × the consumer's timeout, so a message
	// is not redelivered while a slow invocation still holds it.
	VisibilityTimeout time.Duration
	// MaxReceiveCount is how often a message is received before SQS moves
	// it to the DLQ. It is a backstop, not a retry budget: with several
	// messages of one group in a batch, each return of a waiting message
	// counts a receive for its group-mates too, so the consumers keep their
	// own budgets, in time, and move poison to the DLQ themselves.
	MaxReceiveCount int
	// Retention is how long an unconsumed message is kept.
	Retention time.Duration
	// DLQRetention is how long a dead-lettered message is kept.
	DLQRetention time.Duration
	// MaxMessageBytes is the queue's MaximumMessageSize, set explicitly so
	// producers can refuse what would not fit instead of failing to send.
	MaxMessageBytes int
}

// MaxMessageBytes is every queue's MaximumMessageSize: 256 KiB, the size a
// Lambda event source mapping batch of ten stays well within (its payload
// limit is 6 MB). SQS itself allows more.
const MaxMessageBytes = 256 << 10

// ContentBasedDeduplication is off on every queue: Parley always sets an
// explicit deduplication id (the event key, the intent#unit key).
const ContentBasedDeduplication = false

// FIFO is true for every queue: per-thread ordering is the point.
const FIFO = true

// HighThroughput puts both queues in SQS's high-throughput FIFO mode:
// deduplication and the throughput limit per message group (per thread)
// instead of per queue, so a queue's API rate scales with its number of
// threads rather than capping every thread together. Parley's
// deduplication ids (an event key, a unit key) never span two groups, so
// deduplicating per group changes nothing else.
const HighThroughput = true

// DLQName is the logical name of q's dead-letter queue.
func (q QueueSpec) DLQName() string { return q.Name + "-dlq" }

// Inbound carries normalized events to the turn function, grouped by thread.
var Inbound = QueueSpec{
	Name:              "inbound",
	EnvURL:            EnvInboundQueueURL,
	EnvDLQURL:         EnvInboundDLQURL,
	VisibilityTimeout: 6 * turnTimeout,
	MaxReceiveCount:   backstopReceives,
	Retention:         4 * 24 * time.Hour,
	DLQRetention:      14 * 24 * time.Hour,
	MaxMessageBytes:   MaxMessageBytes,
}

// backstopReceives is both queues' maxReceiveCount: SQS's maximum. Within the
// longest retry budget a consumer allows (24 hours) a waiting message is
// received at most a few hundred times: waits grow to 5 minutes between
// attempts, and each attempt of a group's head returns its group-mates once.
// A turn waiting for its agent's post costs its group-mates a receive an
// hour (ADR 0014).
// Only a message that crashes its consumer every time (a timeout each
// invocation) ever gets this far; the alarms on errors and on the oldest
// message's age fire long before.
const backstopReceives = 1000

// Outbound carries planned units (bubbles) to the delivery function, grouped
// by thread.
var Outbound = QueueSpec{
	Name:              "outbound",
	EnvURL:            EnvOutboundQueueURL,
	EnvDLQURL:         EnvOutboundDLQURL,
	VisibilityTimeout: 6 * deliveryTimeout,
	MaxReceiveCount:   backstopReceives,
	Retention:         4 * 24 * time.Hour,
	DLQRetention:      14 * 24 * time.Hour,
	MaxMessageBytes:   MaxMessageBytes,
}

// Queues lists every queue.
func Queues() []QueueSpec { return []QueueSpec{Inbound, Outbound} }

// FunctionKind says how a function is invoked.
type FunctionKind string

const (
	// Ingress functions sit behind a Function URL (auth NONE: they verify the
	// platform's signature themselves).
	Ingress FunctionKind = "ingress"
	// Consumer functions are invoked by an SQS event source mapping.
	Consumer FunctionKind = "consumer"
	// Scheduled functions are invoked on a schedule (an EventBridge rule).
	Scheduled FunctionKind = "scheduled"
)

// FunctionSpec describes one Lambda function: one directory under functions/.
type FunctionSpec struct {
	// Name is the directory under functions/ and the logical name.
	Name    string
	Kind    FunctionKind
	Timeout time.Duration
	// MemoryMB is the memory size; CPU scales with it.
	MemoryMB int
	// Consumes is the queue a Consumer reads (nil for Ingress).
	Consumes *QueueSpec
	// BatchSize is the event source mapping's batch size (≤ 10 for FIFO).
	BatchSize int
	// MaxConcurrency caps concurrent invocations by the event source mapping.
	MaxConcurrency int
	// SendsTo lists the queues the function enqueues on.
	SendsTo []*QueueSpec
	// Wakes is a queue whose in-flight messages the function makes visible
	// again (ChangeMessageVisibility): /reply wakes the waiting turn.
	Wakes *QueueSpec
	// Secrets lists the secret keys the function reads, each from its own
	// Secrets Manager secret; IAM lets it read those and no other.
	Secrets []string
	// Every is a Scheduled function's period.
	Every time.Duration
	// Media: the function stores people's attachments in the media bucket
	// and presigns them (package media): it gets the bucket's name
	// (EnvMediaBucket) and may get and put objects under MediaPrefix.
	Media bool
	// MediaOut is the function's one access to agents' uploads, under
	// MediaOutPrefix: the reply function presigns their PUTs
	// (MediaOutPut), delivery reads and presigns them (MediaOutGet). It
	// gets the bucket's name too.
	MediaOut MediaAccess
}

// MediaAccess is one S3 action on agents' uploads.
type MediaAccess string

const (
	MediaOutPut MediaAccess = "s3:PutObject"
	MediaOutGet MediaAccess = "s3:GetObject"
)

// MediaPrefix is where the turn stores attachments in the media bucket
// (media.ObjectKey): its grant covers these keys only.
const MediaPrefix = "in/"

// MediaOutPrefix is where agents' uploads go (POST /media, media.UploadKey).
const MediaOutPrefix = "out/"

// The core's secret keys, each read from its own Secrets Manager secret in
// AWS and from the environment variable of the same name locally. A chat
// platform's secrets are its adapter's settings (package platform).
const (
	SecretAgentSecret         = "PARLEY_AGENT_SECRET"
	SecretEventsSecrets       = "PARLEY_EVENTS_SECRETS"
	SecretGitHubWebhookSecret = "GITHUB_WEBHOOK_SECRET"
)

// CoreSecretKeys lists the core's secret keys.
func CoreSecretKeys() []string {
	return []string{SecretAgentSecret, SecretEventsSecrets, SecretGitHubWebhookSecret}
}

// PlatformSpec is what the declaration needs of a chat platform: its name
// (its function, its route) and the secrets each half reads.
type PlatformSpec struct {
	Name string
	// ReceiveSecrets are read by the platform's ingress function.
	ReceiveSecrets []string
	// SendSecrets are read by the turn and delivery functions.
	SendSecrets []string
}

// IngressFor is a chat platform's ingress function: behind a Function URL,
// reading its receive secrets, enqueueing on inbound.fifo.
func IngressFor(p PlatformSpec) FunctionSpec {
	return FunctionSpec{
		Name: p.Name, Kind: Ingress, Timeout: 10 * time.Second, MemoryMB: 256,
		SendsTo: []*QueueSpec{&Inbound}, Secrets: slices.Clone(p.ReceiveSecrets),
	}
}

// FunctionsWith lists every function for the chat platforms ps, in order:
// one ingress per platform, then the events ingress, turn, delivery and the
// sweeper. Turn, delivery, the sweeper (which clears the live previews
// turns left behind) and the reply function (which shows an async agent's
// previews) read every platform's send secrets (turn and reply also the
// agent secret).
func FunctionsWith(ps []PlatformSpec) []FunctionSpec {
	var fns []FunctionSpec
	reply, turn, deliver, sweep := Reply, Turn, Delivery, Sweeper
	reply.Secrets, turn.Secrets = slices.Clone(Reply.Secrets), slices.Clone(Turn.Secrets)
	deliver.Secrets, sweep.Secrets = slices.Clone(Delivery.Secrets), slices.Clone(Sweeper.Secrets)
	for _, p := range ps {
		fns = append(fns, IngressFor(p))
		reply.Secrets = append(reply.Secrets, p.SendSecrets...)
		turn.Secrets = append(turn.Secrets, p.SendSecrets...)
		deliver.Secrets = append(deliver.Secrets, p.SendSecrets...)
		sweep.Secrets = append(sweep.Secrets, p.SendSecrets...)
	}
	return append(fns, Events, reply, turn, deliver, sweep)
}

// The consumers' default timeouts; Timing sizes them from the settings.
const (
	turnTimeout     = 60 * time.Second
	deliveryTimeout = 30 * time.Second
)

// Timing holds the settings the consumers' timeouts are sized from, so that
// any accepted value works: a turn must fit one agent call, a delivery
// record one platform call, inside its function's timeout.
type Timing struct {
	// AgentTimeout is PARLEY_AGENT_TIMEOUT. Defaults to 25 seconds.
	AgentTimeout time.Duration
	// SendTimeout is PARLEY_SEND_TIMEOUT. Defaults to 10 seconds.
	SendTimeout time.Duration
}

// Lambda's longest timeout, and what each consumer needs besides its one
// outside call: the turn's claim, plan, intent and enqueue, the consumer's
// reserve to report and its minimum start margin; delivery's inline pause,
// lease, commit, reserve and margin.
const (
	MaxFunctionTimeout = 15 * time.Minute
	turnOverhead       = 15 * time.Second
	deliveryOverhead   = 20 * time.Second
)

// WithDefaults fills unset fields.
func (t Timing) WithDefaults() Timing {
	if t.AgentTimeout == 0 {
		t.AgentTimeout = 25 * time.Second
	}
	if t.SendTimeout == 0 {
		t.SendTimeout = 10 * time.Second
	}
	return t
}

// Validate refuses settings no function timeout can hold, naming the
// variable.
func (t Timing) Validate() error {
	t = t.WithDefaults()
	var errs []error
	if max := MaxFunctionTimeout - turnOverhead; t.AgentTimeout <= 0 || t.AgentTimeout > max {
		errs = append(errs, fmt.Errorf("PARLEY_AGENT_TIMEOUT: %s does not fit a turn in Lambda's %s timeout: want more than 0 and at most %s", t.AgentTimeout, MaxFunctionTimeout, max))
	}
	if max := MaxFunctionTimeout - deliveryOverhead; t.SendTimeout <= 0 || t.SendTimeout > max {
		errs = append(errs, fmt.Errorf("PARLEY_SEND_TIMEOUT: %s does not fit a send in Lambda's %s timeout: want more than 0 and at most %s", t.SendTimeout, MaxFunctionTimeout, max))
	}
	return errors.Join(errs...)
}

// TurnTimeout is the turn function's timeout: its default, or one agent
// call and the turn's overhead, in whole seconds.
func (t Timing) TurnTimeout() time.Duration {
	return max(turnTimeout, wholeSeconds(t.WithDefaults().AgentTimeout+turnOverhead))
}

// DeliveryTimeout is the delivery function's timeout: its default, or one
// platform call and delivery's overhead, in whole seconds.
func (t Timing) DeliveryTimeout() time.Duration {
	return max(deliveryTimeout, wholeSeconds(t.WithDefaults().SendTimeout+deliveryOverhead))
}

func wholeSeconds(d time.Duration) time.Duration { return (d + time.Second - 1).Truncate(time.Second) }

// TimingFromEnv reads a Timing from settings as the functions read them
// (PARLEY_AGENT_TIMEOUT, PARLEY_SEND_TIMEOUT: Go durations), so the stack
// sizes what the functions will run with.
func TimingFromEnv(env map[string]string) (Timing, error) {
	var t Timing
	var errs []error
	for name, dst := range map[string]*time.Duration{"PARLEY_AGENT_TIMEOUT": &t.AgentTimeout, "PARLEY_SEND_TIMEOUT": &t.SendTimeout} {
		v, ok := env[name]
		if !ok || v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: want a duration like 25s, got %q", name, v))
			continue
		}
		*dst = d
	}
	if err := errors.Join(errs...); err != nil {
		return Timing{}, err
	}
	if err := t.Validate(); err != nil {
		return Timing{}, err
	}
	return t.WithDefaults(), nil
}

// Sized returns fns with the consumers' timeouts sized for t.
func (t Timing) Sized(fns []FunctionSpec) []FunctionSpec {
	fns = slices.Clone(fns)
	for i := range fns {
		switch fns[i].Name {
		case Turn.Name:
			fns[i].Timeout = t.TurnTimeout()
		case Delivery.Name:
			fns[i].Timeout = t.DeliveryTimeout()
		}
	}
	return fns
}

// QueuesFor is Queues with each visibility timeout at six times its
// consumer's timeout sized for t, so a message is not handed to a second
// consumer while a slow invocation still holds it.
func QueuesFor(t Timing) []QueueSpec {
	qs := Queues()
	for i := range qs {
		switch qs[i].Name {
		case Inbound.Name:
			qs[i].VisibilityTimeout = 6 * t.TurnTimeout()
		case Outbound.Name:
			qs[i].VisibilityTimeout = 6 * t.DeliveryTimeout()
		}
	}
	return qs
}

// The core functions. Each chat platform adds its ingress (IngressFor), and
// its send secrets to Turn and Delivery (FunctionsWith).
var (
	Events = FunctionSpec{
		Name: "events", Kind: Ingress, Timeout: 10 * time.Second, MemoryMB: 256,
		SendsTo: []*QueueSpec{&Inbound},
		Secrets: []string{SecretEventsSecrets, SecretGitHubWebhookSecret},
	}
	// Reply serves what an agent calls, behind a Function URL: POST /reply
	// records a post on the waiting turn's await record and wakes the
	// turn, or delivers a sequential one's bubbles on outbound.fifo; POST
	// /send enqueues the agent's own message on inbound.fifo, in its
	// thread's group. Its one platform call is POST /reply/preview's: an
	// async agent's live preview, shown while its turn waits (so it reads
	// the platforms' send secrets, FunctionsWith).
	Reply = FunctionSpec{
		Name: "reply", Kind: Ingress, Timeout: 10 * time.Second, MemoryMB: 256,
		SendsTo: []*QueueSpec{&Inbound, &Outbound}, Wakes: &Inbound, Secrets: []string{SecretAgentSecret},
		// POST /media presigns an agent's upload; it never reads one.
		MediaOut: MediaOutPut,
	}
	// The consumers and the sweeper mostly wait (on the agent, on the bubble
	// delay, on DynamoDB), and are billed for it by memory × time: 128 MB,
	// the least Lambda gives, holds a function's 11 MB at rest
	// (BenchmarkColdStart) and a batch of ten 1 MiB agent replies. The
	// ingress functions keep 256 MB: CPU scales with memory, and their ack
	// is what a platform times.
	Turn = FunctionSpec{
		Name: "turn", Kind: Consumer, Timeout: turnTimeout, MemoryMB: 128,
		Consumes: &Inbound, BatchSize: 10, MaxConcurrency: 50,
		// Inbound too: a question's cancel waits its turn in its thread.
		SendsTo: []*QueueSpec{&Outbound, &Inbound},
		Secrets: []string{SecretAgentSecret},
		Media:   true,
	}
	Delivery = FunctionSpec{
		Name: "delivery", Kind: Consumer, Timeout: deliveryTimeout, MemoryMB: 128,
		Consumes: &Outbound, BatchSize: 10, MaxConcurrency: 50,
		// A media bubble's upload: read (HeadObject, GetObject) and
		// presigned for a platform that fetches it.
		MediaOut: MediaOutGet,
	}
	// Sweeper mends stuck work (package sweeper): it re-drives stuck units,
	// enqueues deferred events when due, reports abandoned turns and clears
	// the live previews turns left behind.
	Sweeper = FunctionSpec{
		Name: "sweeper", Kind: Scheduled, Timeout: 60 * time.Second, MemoryMB: 128,
		SendsTo: []*QueueSpec{&Inbound, &Outbound},
		Every:   time.Minute,
	}
)

// The stack's outputs an operator's tools read (parley, through
// CloudFormation's DescribeStacks), besides each Function URL.
const (
	// OutputTableName is the state table's name.
	OutputTableName = "TableName"
	// OutputFunctionNames lists every function as name=physical name,
	// comma-separated (CloudWatch's FunctionName dimension).
	OutputFunctionNames = "FunctionNames"
	// OutputLogGroupNames lists every function's log group as
	// name=log group name, comma-separated (CloudWatch Logs Insights).
	OutputLogGroupNames = "LogGroupNames"
)

// QueueURLOutput is the output that holds the URL of the queue (or
// dead-letter queue) with the logical name name: InboundQueueUrl,
// InboundDlqQueueUrl.
func QueueURLOutput(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String() + "QueueUrl"
}
