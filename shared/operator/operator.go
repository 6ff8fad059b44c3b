package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// Store is the state store as an operator reads it, and moves a unit.
type Store interface {
	GetClaim(ctx context.Context, key string, now time.Time) (store.Claim, error)
	GetIntent(ctx context.Context, id string) (intent.Intent, error)
	GetQuestion(ctx context.Context, key string) (store.Question, error)
	Apply(ctx context.Context, id string, t intent.Transition) (intent.Intent, error)
	Attention(ctx context.Context, limit int) ([]store.AttentionEntry, error)
	DueForSweep(ctx context.Context, now time.Time, limit int) ([]store.SweepEntry, error)
}

// SQS is the queue service as an operator uses it (*sqs.Client).
type SQS interface {
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, opts ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, opts ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	StartMessageMoveTask(ctx context.Context, in *sqs.StartMessageMoveTaskInput, opts ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error)
	ListMessageMoveTasks(ctx context.Context, in *sqs.ListMessageMoveTasksInput, opts ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error)
}

// Metrics is CloudWatch as an operator reads it (*cloudwatch.Client).
type Metrics interface {
	GetMetricData(ctx context.Context, in *cloudwatch.GetMetricDataInput, opts ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error)
}

// Queue is one of the stack's queues and its dead-letter queue.
type Queue struct {
	// Name is the declared name (resources.QueueSpec.Name): inbound,
	// outbound.
	Name        string
	URL, DLQURL string
}

// Target is the stack an operator works on: where its records, queues,
// functions and logs are.
type Target struct {
	Table  string
	Queues []Queue
	// Functions maps a declared function (resources.FunctionSpec.Name) to
	// its physical name, and LogGroups to its log group: deployed stacks
	// only.
	Functions, LogGroups map[string]string
	// LogFile is make run's JSON log; empty for a deployed stack.
	LogFile string
}

// Local reports whether t is make run's stack: no CloudWatch there.
func (t Target) Local() bool { return t.LogFile != "" }

// Queue is the queue named name (inbound, outbound; or its dead-letter
// queue's name, inbound-dlq).
func (t Target) Queue(name string) (Queue, bool) {
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".fifo"), "-dlq")
	for _, q := range t.Queues {
		if q.Name == name {
			return q, true
		}
	}
	return Queue{}, false
}

// QueueNames lists t's queues' names, for a message that refuses another.
func (t Target) QueueNames() string {
	var names []string
	for _, q := range t.Queues {
		names = append(names, q.Name)
	}
	return strings.Join(names, ", ")
}

// TargetFromEnv is the target the functions' own settings name (the
// table's and queues' variables, resources.Env*), as make run sets them.
func TargetFromEnv(getenv func(string) string, logFile string) (Target, error) {
	t := Target{Table: getenv(resources.EnvTable), LogFile: logFile}
	var missing []string
	if t.Table == "" {
		missing = append(missing, resources.EnvTable)
	}
	for _, q := range resources.Queues() {
		url, dlq := getenv(q.EnvURL), getenv(q.EnvDLQURL)
		for k, v := range map[string]string{q.EnvURL: url, q.EnvDLQURL: dlq} {
			if v == "" {
				missing = append(missing, k)
			}
		}
		t.Queues = append(t.Queues, Queue{Name: q.Name, URL: url, DLQURL: dlq})
	}
	if len(missing) > 0 {
		return Target{}, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return t, nil
}

// TargetFromOutputs is the target a deployed stack's outputs name
// (CloudFormation DescribeStacks): its table, its queues
// (<Queue>QueueUrl, <Queue>DlqQueueUrl), and its functions and their log
// groups (resources.OutputFunctionNames, OutputLogGroupNames).
func TargetFromOutputs(out map[string]string) (Target, error) {
	t := Target{Table: out[resources.OutputTableName], Functions: map[string]string{}, LogGroups: map[string]string{}}
	var missing []string
	if t.Table == "" {
		missing = append(missing, resources.OutputTableName)
	}
	for _, q := range resources.Queues() {
		urlKey, dlqKey := resources.QueueURLOutput(q.Name), resources.QueueURLOutput(q.DLQName())
		if out[urlKey] == "" || out[dlqKey] == "" {
			missing = append(missing, urlKey+" or "+dlqKey)
		}
		t.Queues = append(t.Queues, Queue{Name: q.Name, URL: out[urlKey], DLQURL: out[dlqKey]})
	}
	for key, m := range map[string]map[string]string{resources.OutputFunctionNames: t.Functions, resources.OutputLogGroupNames: t.LogGroups} {
		raw := out[key]
		if raw == "" {
			missing = append(missing, key)
			continue
		}
		for _, kv := range strings.Split(raw, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" || v == "" {
				return Target{}, fmt.Errorf("output %s: want name=value pairs, got %q", key, kv)
			}
			m[k] = v
		}
	}
	if len(missing) > 0 {
		return Target{}, fmt.Errorf("the stack has no output %s (deployed before this version of Parley? deploy again)", strings.Join(missing, ", "))
	}
	return t, nil
}

// Operator reads what the functions stored and logged, and acts on it.
// Nothing it does is on a message's path: it reads records and logs, and
// writes only an operator's decisions (a resend, an abandon, a redrive).
type Operator struct {
	Target Target
	Store  Store
	SQS    SQS
	// Logs finds the functions' log lines; nil: timelines hold records
	// only, and say so.
	Logs Logs
	// Metrics is CloudWatch; nil (make run): what only CloudWatch knows is
	// reported as not available locally.
	Metrics Metrics
	// Platforms are the capabilities of each platform: what a resend of a
	// unit whose outcome is unknown risks there. Defaults to none known.
	Platforms map[message.Platform]message.Capabilities
	// Functions are the stack's functions, by declared name
	// (registry.Functions), for status. Defaults to the core's.
	Functions []string
	// LogWindow is how far back log searches look. Defaults to 8 days
	// (store.DedupeTTL: the longest a message's records answer for it).
	LogWindow time.Duration
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
}

func (o *Operator) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Operator) since() time.Time {
	w := o.LogWindow
	if w == 0 {
		w = store.DedupeTTL
	}
	return o.now().Add(-w)
}

// ErrAmbiguous marks input an operator must make precise: a command refuses
// it and changes nothing.
var ErrAmbiguous = errors.New("ambiguous")

// ErrNotFound marks a key no record or log line answers for.
var ErrNotFound = errors.New("not found")

// ConfirmError is a decision that needs the operator's explicit yes (a
// resend that may show the person a copy): Risk says what it risks.
type ConfirmError struct{ Risk string }

func (e *ConfirmError) Error() string { return e.Risk }

// ParseEventKey checks key is an event key (the correlation id):
// evt#<platform>#<account>#<event id>.
func ParseEventKey(key string) error {
	parts := strings.SplitN(key, "#", 4)
	if len(parts) != 4 || parts[0] != "evt" || parts[1] == "" || parts[2] == "" || parts[3] == "" {
		return fmt.Errorf("%w: %q is not an event key: want evt#<platform>#<account>#<event id>, as the logs' event_key and the console show it", ErrAmbiguous, key)
	}
	return nil
}

// New is an operator of the stack t whose table db holds and whose queues
// q serves, knowing every platform of the registry (what a resend risks
// there) and every function of the stack. Logs and Metrics are the
// caller's.
func New(t Target, db *dynamodb.Client, q SQS) *Operator {
	op := &Operator{Target: t, Store: dynamostore.New(db, t.Table), SQS: q, Platforms: map[message.Platform]message.Capabilities{}}
	for _, a := range registry.Chat() {
		op.Platforms[a.Platform()] = a.Capabilities()
	}
	for _, f := range registry.Functions() {
		op.Functions = append(op.Functions, f.Name)
	}
	if t.Local() {
		op.Logs = FileLogs{Path: t.LogFile}
	}
	return op
}
