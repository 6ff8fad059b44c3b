package stack

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/resources"
)

// LogRetention is how long each function's log group keeps its logs.
const LogRetention = awslogs.RetentionDays_ONE_MONTH

// Stack is the Parley stack and handles on what it holds, keyed by the
// names declared in package resources.
type Stack struct {
	// Stack is a field, not embedded: jsii cannot pass a Go struct that
	// embeds a construct as a scope.
	Stack     awscdk.Stack
	Table     awsdynamodb.Table
	Queues    map[string]awssqs.Queue // main queues by QueueSpec.Name
	DLQs      map[string]awssqs.Queue // dead-letter queues by QueueSpec.Name
	Functions map[string]awslambda.Function
	// AgentSecret is the one secret the stack creates: PARLEY_AGENT_SECRET,
	// generated at deploy.
	AgentSecret awssecretsmanager.Secret
	// Secrets holds every secret a function reads, by key (the
	// resources.Secret* constants): AgentSecret, and the operator's, named
	// SecretName(SecretPrefix, key) and imported by name.
	Secrets map[string]awssecretsmanager.ISecret
	// SecretPrefix starts the operator's secrets' names (Config.SecretPrefix
	// or its default, "<stack name>/").
	SecretPrefix string
	AlarmTopic   awssns.Topic
	// MediaBucket keeps the files people attach, for their agent (package
	// media), until its lifecycle rule expires them (PARLEY_MEDIA_TTL).
	MediaBucket awss3.Bucket
}

// setting maps a Config value onto an environment variable of some functions.
// Only non-secret values belong here: secrets live in Secrets Manager.
type setting struct {
	env       string
	value     func(Config) string
	functions []string
}

var settings = []setting{
	{env: EnvAgentURL, value: func(c Config) string { return c.AgentURL }, functions: []string{resources.Turn.Name}},
}

// New defines the Parley stack in scope. cfg is defaulted and validated
// first; an invalid cfg defines nothing.
func New(scope constructs.Construct, id string, props *awscdk.StackProps, cfg Config) (*Stack, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if props == nil {
		props = &awscdk.StackProps{}
	}
	if props.Description == nil {
		props.Description = jsii.String("Parley: chat platforms to an AI agent, durably (webhooks, SQS FIFO, DynamoDB)")
	}
	s := &Stack{
		Stack:     awscdk.NewStack(scope, &id, props),
		Queues:    map[string]awssqs.Queue{},
		DLQs:      map[string]awssqs.Queue{},
		Functions: map[string]awslambda.Function{},
		Secrets:   map[string]awssecretsmanager.ISecret{},
	}
	s.SecretPrefix = cmp.Or(cfg.SecretPrefix, *s.Stack.StackName()+"/")
	// The consumers' timeouts, and their queues' visibility timeouts, are
	// sized from the settings the functions will run with.
	timing, err := resources.TimingFromEnv(cfg.Env)
	if err != nil {
		return nil, err
	}
	if s.Table, err = newTable(s.Stack, resources.Table); err != nil {
		return nil, err
	}
	for _, q := range resources.QueuesFor(timing) {
		if s.Queues[q.Name], s.DLQs[q.Name], err = newQueue(s.Stack, q); err != nil {
			return nil, err
		}
	}
	if err := s.newSecrets(); err != nil {
		return nil, err
	}
	mediaTTL, err := MediaTTL(cfg.Env)
	if err != nil {
		return nil, err
	}
	s.MediaBucket = newMediaBucket(s.Stack, mediaTTL)
	for _, fn := range registry.FunctionsFor(timing) {
		if s.Functions[fn.Name], err = s.newFunction(fn, cfg); err != nil {
			return nil, err
		}
	}
	s.monitor(cfg)
	return s, nil
}

func newTable(s awscdk.Stack, spec resources.TableSpec) (awsdynamodb.Table, error) {
	pk, err := attribute(spec.PartitionKey)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", spec.Name, err)
	}
	t := awsdynamodb.NewTable(s, jsii.String(constructID(spec.Name)), &awsdynamodb.TableProps{
		PartitionKey:        pk,
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: jsii.String(spec.TTLAttribute),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		// The aws/dynamodb key: encrypted at rest, auditable in CloudTrail,
		// no key policy to maintain and no $1/month key per deployment.
		Encryption: awsdynamodb.TableEncryption_AWS_MANAGED,
		// The table is state (dedupe claims, send intents, questions):
		// deleting the stack must not delete it.
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	for _, ix := range spec.Indexes {
		ipk, err := attribute(ix.PartitionKey)
		if err != nil {
			return nil, fmt.Errorf("table %s index %s: %w", spec.Name, ix.Name, err)
		}
		proj := awsdynamodb.ProjectionType_ALL
		switch ix.Projection {
		case resources.ProjectAll:
		case resources.ProjectKeysOnly:
			proj = awsdynamodb.ProjectionType_KEYS_ONLY
		default:
			return nil, fmt.Errorf("table %s index %s: unknown projection %q", spec.Name, ix.Name, ix.Projection)
		}
		props := &awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(ix.Name),
			PartitionKey:   ipk,
			ProjectionType: proj,
		}
		if ix.SortKey.Name != "" {
			if props.SortKey, err = attribute(ix.SortKey); err != nil {
				return nil, fmt.Errorf("table %s index %s: %w", spec.Name, ix.Name, err)
			}
		}
		t.AddGlobalSecondaryIndex(props)
	}
	return t, nil
}

func attribute(a resources.Attribute) (*awsdynamodb.Attribute, error) {
	var typ awsdynamodb.AttributeType
	switch a.Type {
	case resources.String:
		typ = awsdynamodb.AttributeType_STRING
	case resources.Number:
		typ = awsdynamodb.AttributeType_NUMBER
	default:
		return nil, fmt.Errorf("attribute %s: unknown key type %q", a.Name, a.Type)
	}
	return &awsdynamodb.Attribute{Name: jsii.String(a.Name), Type: typ}, nil
}

// QueueName is the physical name of a queue: the stack name keeps two
// deployments (say staging and prod) in one account and region apart, and
// FIFO queue names must end in ".fifo".
func QueueName(stackName, logical string) string {
	return stackName + "-" + logical + ".fifo"
}

func newQueue(s awscdk.Stack, spec resources.QueueSpec) (main, dlq awssqs.Queue, err error) {
	for _, d := range []time.Duration{spec.VisibilityTimeout, spec.Retention, spec.DLQRetention} {
		if d%time.Second != 0 {
			return nil, nil, fmt.Errorf("queue %s: %v is not whole seconds", spec.Name, d)
		}
	}
	if n := len(QueueName(*s.StackName(), spec.DLQName())); n > 80 {
		return nil, nil, fmt.Errorf("queue %s: physical name is %d characters, SQS allows 80: shorten the stack name", spec.Name, n)
	}
	dlq = awssqs.NewQueue(s, jsii.String(constructID(spec.DLQName())), &awssqs.QueueProps{
		QueueName:           jsii.String(QueueName(*s.StackName(), spec.DLQName())),
		Fifo:                jsii.Bool(resources.FIFO),
		RetentionPeriod:     seconds(spec.DLQRetention),
		MaxMessageSizeBytes: jsii.Number(spec.MaxMessageBytes),
		Encryption:          awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:          jsii.Bool(true),
	})
	main = awssqs.NewQueue(s, jsii.String(constructID(spec.Name)), &awssqs.QueueProps{
		QueueName:                 jsii.String(QueueName(*s.StackName(), spec.Name)),
		Fifo:                      jsii.Bool(resources.FIFO),
		ContentBasedDeduplication: jsii.Bool(resources.ContentBasedDeduplication),
		DeduplicationScope:        dedupScope(),
		FifoThroughputLimit:       throughputLimit(),
		VisibilityTimeout:         seconds(spec.VisibilityTimeout),
		RetentionPeriod:           seconds(spec.Retention),
		MaxMessageSizeBytes:       jsii.Number(spec.MaxMessageBytes),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           dlq,
			MaxReceiveCount: jsii.Number(spec.MaxReceiveCount),
		},
		Encryption: awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL: jsii.Bool(true),
	})
	return main, dlq, nil
}

// dedupScope and throughputLimit are a queue's high-throughput FIFO
// settings (resources.HighThroughput).
func dedupScope() awssqs.DeduplicationScope {
	if resources.HighThroughput {
		return awssqs.DeduplicationScope_MESSAGE_GROUP
	}
	return awssqs.DeduplicationScope_QUEUE
}

func throughputLimit() awssqs.FifoThroughputLimit {
	if resources.HighThroughput {
		return awssqs.FifoThroughputLimit_PER_MESSAGE_GROUP_ID
	}
	return awssqs.FifoThroughputLimit_PER_QUEUE
}

// newSecrets defines one secret per key some function reads, so that IAM
// lets each function read only its own (FunctionSpec.Secrets). Each holds
// one plain string, never JSON.
//
// PARLEY_AGENT_SECRET, the HMAC key Parley signs agent requests with, is
// Parley's to issue: the stack creates it, generated by Secrets Manager at
// deploy time, so no secret appears in the template. Its name is left to
// CDK: a fixed name would collide, on a redeploy after the stack's deletion,
// with the deleted secret's, which Secrets Manager reserves for its recovery
// window. Give its value to the agent (the AgentSecretArn output):
//
//	aws secretsmanager get-secret-value --secret-id <AgentSecretArn> --query SecretString --output text
//
// The platforms issue the other keys: the operator creates the secrets of
// the keys the deployment uses (the SecretNames output lists the names) and
// the stack only refers to them by name, one per key, e.g.
//
//	aws secretsmanager create-secret --name <prefix>TELEGRAM_BOT_TOKEN --secret-string '123456:ABC...'
//
// and later put-secret-value --secret-id <prefix>TELEGRAM_BOT_TOKEN to
// change one. A key whose secret does not exist is unset in the functions.
func (s *Stack) newSecrets() error {
	read := map[string]bool{}
	for _, fn := range registry.Functions() {
		for _, k := range fn.Secrets {
			if !slices.Contains(registry.SecretKeys(), k) {
				return fmt.Errorf("function %s: unknown secret key %q", fn.Name, k)
			}
			read[k] = true
		}
	}
	for _, k := range registry.SecretKeys() {
		if !read[k] {
			continue
		}
		if k == resources.SecretAgentSecret {
			s.AgentSecret = newAgentSecret(s.Stack)
			s.Secrets[k] = s.AgentSecret
			continue
		}
		// Granted on arn:…:secret:<name>-??????: the six characters are
		// the random suffix Secrets Manager appends to the name.
		s.Secrets[k] = awssecretsmanager.Secret_FromSecretNameV2(s.Stack,
			jsii.String(constructID(strings.ToLower(k))+"Secret"), jsii.String(SecretName(s.SecretPrefix, k)))
	}
	return nil
}

// OperatorSecretNames lists the names of the secrets the operator creates,
// in resources.SecretKeys order.
func (s *Stack) OperatorSecretNames() []string {
	var names []string
	for _, k := range registry.SecretKeys() {
		if _, ok := s.Secrets[k]; ok && k != resources.SecretAgentSecret {
			names = append(names, SecretName(s.SecretPrefix, k))
		}
	}
	return names
}

func newAgentSecret(s awscdk.Stack) awssecretsmanager.Secret {
	secret := awssecretsmanager.NewSecret(s, jsii.String("AgentSecret"), &awssecretsmanager.SecretProps{
		Description: jsii.String("Parley " + resources.SecretAgentSecret + ": the key Parley signs agent requests with; give it to your agent"),
		// A plain string: no SecretStringTemplate, no GenerateStringKey.
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(48),
			ExcludePunctuation: jsii.Bool(true),
		},
	})
	suppress(secret, "AwsSolutions-SMG4",
		"This is the HMAC key Parley shares with the user's agent: it is rotated by replacing it at both ends at once "+
			"(put-secret-value here, the same value at the agent), which a rotation Lambda cannot do for a system it does not run. "+
			"The other secrets are third-party credentials (Telegram bot tokens, Slack signing secrets and bot tokens, webhook "+
			"secrets) that only the issuing platform can rotate; the operator creates them, the stack only reads them.")
	return secret
}

// secretID is how fn finds key's secret in PARLEY_SECRETS: the agent
// secret's ARN (a token until deploy), the others' names.
func (s *Stack) secretID(key string) string {
	if key == resources.SecretAgentSecret {
		return *s.AgentSecret.SecretArn()
	}
	return SecretName(s.SecretPrefix, key)
}

// secretsEnv is fn's PARLEY_SECRETS: a JSON object of exactly its secret
// keys to their secrets' ids, keys sorted, so the value (and with it the
// function's configuration) changes only when a key or an id does. Written
// by hand rather than with Stack.ToJsonString, which would order the keys as
// a Go map iterates, differently on each synth. An id may hold a token (the
// agent secret's ARN), which CDK turns into an Fn::Join; ARNs and validated
// names hold no character JSON escapes, so the joined value is valid JSON.
func (s *Stack) secretsEnv(fn resources.FunctionSpec) (string, bool) {
	if len(fn.Secrets) == 0 {
		return "", false
	}
	keys := slices.Sorted(slices.Values(fn.Secrets))
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Compact(keys) {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		id, _ := json.Marshal(s.secretID(k))
		b.Write(key)
		b.WriteByte(':')
		b.Write(id)
	}
	b.WriteByte('}')
	return b.String(), true
}

// uses lists the queues fn needs a URL for: those it sends to and the one it
// consumes (the delivery function parks a unit with ChangeMessageVisibility,
// which takes the queue URL).
func uses(fn resources.FunctionSpec) []resources.QueueSpec {
	var qs []resources.QueueSpec
	seen := map[string]bool{}
	add := func(q *resources.QueueSpec) {
		if q != nil && !seen[q.Name] {
			seen[q.Name] = true
			qs = append(qs, *q)
		}
	}
	add(fn.Consumes)
	add(fn.Wakes)
	for _, q := range fn.SendsTo {
		add(q)
	}
	return qs
}

// Environment is the environment of fn: resource names, where its secrets
// are (PARLEY_SECRETS) and non-secret settings. Never a secret value. Table,
// queue and agent secret values are CloudFormation tokens until deploy.
func (s *Stack) environment(fn resources.FunctionSpec, cfg Config) map[string]*string {
	env := map[string]*string{
		resources.EnvTable: s.Table.TableName(),
	}
	if v, ok := s.secretsEnv(fn); ok {
		env[resources.EnvSecrets] = jsii.String(v)
	}
	for _, q := range uses(fn) {
		env[q.EnvURL] = s.Queues[q.Name].QueueUrl()
	}
	if fn.Media || fn.MediaOut != "" {
		env[resources.EnvMediaBucket] = s.MediaBucket.BucketName()
	}
	if q := fn.Consumes; q != nil {
		env[q.EnvDLQURL] = s.DLQs[q.Name].QueueUrl()
	}
	for k, v := range cfg.Env {
		env[k] = jsii.String(v)
	}
	for _, st := range settings {
		for _, name := range st.functions {
			if name == fn.Name {
				env[st.env] = jsii.String(st.value(cfg))
			}
		}
	}
	return env
}

func (s *Stack) newFunction(fn resources.FunctionSpec, cfg Config) (awslambda.Function, error) {
	if fn.Timeout%time.Second != 0 || fn.Timeout <= 0 {
		return nil, fmt.Errorf("function %s: timeout %v is not a positive number of seconds", fn.Name, fn.Timeout)
	}
	id := constructID(fn.Name)
	// An explicit role with no managed policy: CDK's default role carries
	// AWSLambdaBasicExecutionRole (logs:CreateLogGroup on every log group),
	// more than a function with its own log group needs.
	role := awsiam.NewRole(s.Stack, jsii.String(id+"Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("Parley " + fn.Name + " function"),
	})
	logs := awslogs.NewLogGroup(s.Stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention: LogRetention,
		// Logs expire after a month anyway; a retained, empty log group
		// would only collide with a redeployment.
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	logs.GrantWrite(role)

	var reserved *float64
	if n := *cfg.IngressConcurrency; fn.Kind == resources.Ingress && n > 0 {
		// A public URL: a flood of unauthenticated requests, each an
		// invocation, must throttle this webhook (the platform retries a
		// 429), not drain the account's concurrency that turn and delivery
		// need.
		reserved = jsii.Number(n)
	}
	f := awslambda.NewFunction(s.Stack, jsii.String(id), &awslambda.FunctionProps{
		Description:  jsii.String(fmt.Sprintf("Parley %s (%s)", fn.Name, fn.Kind)),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		// A zip built by `make build`: bootstrap compiled for linux/arm64
		// with -tags lambda.norpc. CDK uploads a .zip asset as it is.
		Code:          awslambda.Code_FromAsset(jsii.String(AssetPath(cfg.AssetDir, fn.Name)), nil),
		Timeout:       seconds(fn.Timeout),
		MemorySize:    jsii.Number(fn.MemoryMB),
		Role:          role,
		LogGroup:      logs,
		LoggingFormat: awslambda.LoggingFormat_JSON,
		Environment:   ptrMap(s.environment(fn, cfg)),
		// 0 would throttle every invocation: unset means no reservation.
		ReservedConcurrentExecutions: reserved,
	})

	s.grantTable(role)
	for _, k := range fn.Secrets {
		// GetSecretValue and DescribeSecret on this key's secret only.
		s.Secrets[k].GrantRead(role, nil)
	}
	for _, q := range fn.SendsTo {
		s.Queues[q.Name].GrantSendMessages(role)
	}
	if fn.Media {
		// Get (HeadObject and the presigned GETs it signs) and Put, on the
		// keys it stores under, a list under them (grantMissingIsNotFound),
		// and nothing else: no delete.
		awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee:      role,
			Actions:      jsii.Strings("s3:GetObject", "s3:PutObject"),
			ResourceArns: jsii.Strings(*s.MediaBucket.ArnForObjects(jsii.String(resources.MediaPrefix + "*"))),
		})
		suppressMatching(role, "AwsSolutions-IAM5", "Objects are created per attachment: the grant names the one key prefix the function stores under (media.ObjectKey), in the media bucket only.",
			`/^Resource::<MediaBucket[0-9A-F]+\.Arn>\/in\/\*$/`)
		s.grantMissingIsNotFound(role, resources.MediaPrefix)
	}
	if a := fn.MediaOut; a != "" {
		// One action on agents' uploads: the reply function presigns PUTs,
		// delivery reads them and presigns GETs (and lists under them, so a
		// missing upload is a 404). No delete.
		awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee:      role,
			Actions:      jsii.Strings(string(a)),
			ResourceArns: jsii.Strings(*s.MediaBucket.ArnForObjects(jsii.String(resources.MediaOutPrefix + "*"))),
		})
		suppressMatching(role, "AwsSolutions-IAM5", "Uploads are created per file an agent sends: the grant names the one key prefix they go under (media.UploadKey), in the media bucket only.",
			`/^Resource::<MediaBucket[0-9A-F]+\.Arn>\/out\/\*$/`)
		if a == resources.MediaOutGet {
			s.grantMissingIsNotFound(role, resources.MediaOutPrefix)
		}
	}
	if q := fn.Wakes; q != nil {
		awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee:      role,
			Actions:      jsii.Strings("sqs:ChangeMessageVisibility"),
			ResourceArns: jsii.Strings(*s.Queues[q.Name].QueueArn()),
		})
	}
	if q := fn.Consumes; q != nil {
		// A consumer moves poison records to its DLQ itself: SendMessage
		// only (GrantSendMessages adds GetQueueAttributes and GetQueueUrl,
		// which nothing needs: the URL comes in the environment).
		awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee:      role,
			Actions:      jsii.Strings("sqs:SendMessage"),
			ResourceArns: jsii.Strings(*s.DLQs[q.Name].QueueArn()),
		})
	}

	switch fn.Kind {
	case resources.Ingress:
		// Auth NONE: Telegram, Slack and the other platforms cannot sign
		// requests with SigV4. Each ingress function verifies the
		// platform's own signature (HMAC, Ed25519, secret token) on the
		// raw body before it writes anything, and refuses with 4xx.
		url := f.AddFunctionUrl(&awslambda.FunctionUrlOptions{AuthType: awslambda.FunctionUrlAuthType_NONE})
		awscdk.NewCfnOutput(s.Stack, jsii.String(id+"Url"), &awscdk.CfnOutputProps{
			Value:       url.Url(),
			Description: jsii.String("Webhook URL for " + fn.Name + ": register it with the platform"),
		})
	case resources.Consumer:
		if fn.Consumes == nil {
			return nil, fmt.Errorf("function %s: a consumer without a queue", fn.Name)
		}
		if fn.BatchSize < 1 || fn.BatchSize > 10 {
			return nil, fmt.Errorf("function %s: batch size %d, FIFO allows 1..10", fn.Name, fn.BatchSize)
		}
		if fn.MaxConcurrency < 2 || fn.MaxConcurrency > 1000 {
			return nil, fmt.Errorf("function %s: maximum concurrency %d, SQS event sources allow 2..1000", fn.Name, fn.MaxConcurrency)
		}
		// The event source grants consume on the queue: ReceiveMessage,
		// DeleteMessage, ChangeMessageVisibility, GetQueueAttributes,
		// GetQueueUrl.
		f.AddEventSource(awslambdaeventsources.NewSqsEventSource(s.Queues[fn.Consumes.Name], &awslambdaeventsources.SqsEventSourceProps{
			BatchSize:               jsii.Number(fn.BatchSize),
			ReportBatchItemFailures: jsii.Bool(true),
			MaxConcurrency:          jsii.Number(fn.MaxConcurrency),
		}))
	case resources.Scheduled:
		if fn.Every < time.Minute || fn.Every%time.Minute != 0 {
			return nil, fmt.Errorf("function %s: schedule %v is not a whole number of minutes (EventBridge's least is 1)", fn.Name, fn.Every)
		}
		rule := awsevents.NewRule(s.Stack, jsii.String(id+"Schedule"), &awsevents.RuleProps{
			Description: jsii.String("Parley " + fn.Name + ": every " + fn.Every.String()),
			Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(fn.Every.Minutes()))),
		})
		rule.AddTarget(awseventstargets.NewLambdaFunction(f, &awseventstargets.LambdaFunctionProps{
			// A missed run is made up by the next one: no backlog of retries.
			RetryAttempts: jsii.Number(0),
		}))
	default:
		return nil, fmt.Errorf("function %s: unknown kind %q", fn.Name, fn.Kind)
	}
	return f, nil
}

// TableActions is what every function may do on the table. Transactions
// (TransactWriteItems, TransactGetItems) are authorized through these same
// item actions.
var TableActions = []string{
	"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem",
	"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem",
	"dynamodb:DescribeTable",
}

// grantTable lets role read and write the table and query its declared
// indexes. Table.GrantReadWriteData would grant <table>/index/*; naming each
// index keeps the policy free of wildcards (and of cdk-nag suppressions),
// and leaves out Scan and the stream actions, which nothing uses.
// grantMissingIsNotFound lets a function that reads objects under prefix
// tell a missing one (HeadObject's 404) from a refusal: without
// s3:ListBucket, S3 answers 403 for a key that does not exist, and staging
// (or an upload_id never put) would fail as denied. Listed only under
// prefix, by the s3:prefix condition.
func (s *Stack) grantMissingIsNotFound(role awsiam.IRole, prefix string) {
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings("s3:ListBucket"),
		Resources:  jsii.Strings(*s.MediaBucket.BucketArn()),
		Conditions: &map[string]any{"StringLike": map[string]any{"s3:prefix": prefix + "*"}},
	}))
}

func (s *Stack) grantTable(role awsiam.IRole) {
	arns := []*string{s.Table.TableArn()}
	for _, ix := range resources.Table.Indexes {
		arns = append(arns, jsii.String(*s.Table.TableArn()+"/index/"+ix.Name))
	}
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      role,
		Actions:      jsii.Strings(TableActions...),
		ResourceArns: &arns,
	})
}

// constructID turns a declared name ("inbound-dlq") into a construct id
// ("InboundDlq").
func constructID(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func seconds(d time.Duration) awscdk.Duration {
	return awscdk.Duration_Seconds(jsii.Number(d.Seconds()))
}

func ptrMap(m map[string]*string) *map[string]*string { return &m }

// DefaultMediaTTL is how long the media bucket keeps a file.
const DefaultMediaTTL = 7 * 24 * time.Hour

// MediaTTL reads PARLEY_MEDIA_TTL from env (a duration in whole days, like
// 168h), the media bucket's expiry; DefaultMediaTTL when unset.
func MediaTTL(env map[string]string) (time.Duration, error) {
	v, ok := env["PARLEY_MEDIA_TTL"]
	if !ok || v == "" {
		return DefaultMediaTTL, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 24*time.Hour || d%(24*time.Hour) != 0 {
		return 0, fmt.Errorf("%s: PARLEY_MEDIA_TTL: want whole days of at least one, like 168h, got %q", ContextEnv, v)
	}
	return d, nil
}

// newMediaBucket is the media bucket: private (every public access
// blocked, objects owned by the bucket's account, no ACLs), encrypted with
// S3's own keys, reachable over TLS only, its objects expired after ttl.
func newMediaBucket(s awscdk.Stack, ttl time.Duration) awss3.Bucket {
	b := awss3.NewBucket(s, jsii.String("MediaBucket"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		Versioned:         jsii.Bool(false),
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                                  jsii.String("expire-media"),
			Expiration:                          awscdk.Duration_Days(jsii.Number(float64(ttl / (24 * time.Hour)))),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
		}},
		// People's files: a deleted stack keeps them until the lifecycle
		// rule has run, rather than lose them on a mistaken delete.
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	suppress(b, "AwsSolutions-S1", "Objects live at most PARLEY_MEDIA_TTL and only the turn function writes them; "+
		"an access-log bucket would hold the presigned URLs' traffic for longer than the files. Use CloudTrail data events to audit.")
	return b
}
