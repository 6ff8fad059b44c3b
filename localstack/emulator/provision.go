package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/shared/resources"
)

// Resources names what Provision created.
type Resources struct {
	// Table is the state table's name, "<prefix>-State".
	Table string
	// Queue URLs of the declared queues and their dead-letter queues.
	InboundURL, InboundDLQURL, OutboundURL, OutboundDLQURL string
	// MediaBucket is the media bucket's name: the prefix, lower case, and
	// "-media".
	MediaBucket string
	// QueueURLs maps the logical name of every queue Provision created
	// (resources.QueueSpec.Name and DLQName()) to its URL, including queues
	// declared after the fields above were written.
	QueueURLs map[string]string
}

// Env returns the variables through which a function learns the resources'
// physical names: resources.EnvTable, resources.EnvMediaBucket (with
// PARLEY_MEDIA_PATH_STYLE) and each declared queue's EnvURL and
// EnvDLQURL (PARLEY_TABLE, PARLEY_INBOUND_QUEUE_URL, PARLEY_INBOUND_DLQ_URL, …).
func (r Resources) Env() []string {
	// fauxqs serves S3 by path only: PARLEY_MEDIA_PATH_STYLE says so.
	env := []string{resources.EnvTable + "=" + r.Table, resources.EnvMediaBucket + "=" + r.MediaBucket, "PARLEY_MEDIA_PATH_STYLE=true"}
	for _, q := range resources.Queues() {
		env = append(env, q.EnvURL+"="+r.QueueURLs[q.Name], q.EnvDLQURL+"="+r.QueueURLs[q.DLQName()])
	}
	return env
}

// Provision creates, under names starting with prefix, the state table
// (keys, GSIs, on-demand billing, TTL attribute) and every FIFO queue with its
// FIFO dead-letter queue (redrive policy, visibility timeout, retention,
// maximum message size, ContentBasedDeduplication off), all exactly as package resources declares
// them. It returns once the table and its indexes are ACTIVE.
//
// Names: table "<prefix>-State", queues "<prefix>-inbound.fifo" and
// "<prefix>-inbound-dlq.fifo", and so on. A prefix is letters, digits, '-' and
// '_', short enough for SQS's 80-character queue names; use a fresh one per
// call (the table must not exist yet). cfg is used as is: load it with
// config.LoadDefaultConfig after Stack.Setenv to reach the emulators (the
// clients Provision makes from cfg read AWS_ENDPOINT_URL_* at that moment).
func Provision(ctx context.Context, cfg aws.Config, prefix string) (Resources, error) {
	if err := checkPrefix(prefix); err != nil {
		return Resources{}, err
	}
	db := dynamodb.NewFromConfig(cfg)
	q := sqs.NewFromConfig(cfg)
	res := Resources{Table: prefix + "-" + resources.Table.Name, MediaBucket: bucketName(prefix), QueueURLs: map[string]string{}}
	// fauxqs serves S3 on its one port, by path: it has no per-bucket host names.
	objects := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	wg.Go(func() {
		if err := createTable(ctx, db, res.Table, resources.Table); err != nil {
			fail(err)
		}
	})
	wg.Go(func() {
		if _, err := objects.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &res.MediaBucket}); err != nil {
			fail(fmt.Errorf("create bucket %s: %w", res.MediaBucket, err))
		}
	})
	for _, spec := range resources.Queues() {
		wg.Go(func() {
			url, dlqURL, err := createQueue(ctx, q, prefix, spec)
			if err != nil {
				fail(err)
				return
			}
			mu.Lock()
			res.QueueURLs[spec.Name] = url
			res.QueueURLs[spec.DLQName()] = dlqURL
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Resources{}, fmt.Errorf("provision %q: %w", prefix, err)
	}
	res.InboundURL = res.QueueURLs[resources.Inbound.Name]
	res.InboundDLQURL = res.QueueURLs[resources.Inbound.DLQName()]
	res.OutboundURL = res.QueueURLs[resources.Outbound.Name]
	res.OutboundDLQURL = res.QueueURLs[resources.Outbound.DLQName()]
	return res, nil
}

// bucketName is a bucket name of prefix: S3's are lower case, digits and
// '-', at most 63 characters.
func bucketName(prefix string) string {
	name := strings.ToLower(strings.ReplaceAll(prefix, "_", "-"))
	return strings.Trim(name[:min(len(name), 56)], "-") + "-media"
}

var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// maxPrefix keeps the longest physical queue name within SQS's 80 characters.
var maxPrefix = func() int {
	longest := 0
	for _, q := range resources.Queues() {
		longest = max(longest, len(queueName("", q.DLQName())))
	}
	return 80 - longest
}()

func checkPrefix(prefix string) error {
	if !prefixPattern.MatchString(prefix) || len(prefix) > maxPrefix {
		return fmt.Errorf("emulator: invalid prefix %q: want 1 to %d letters, digits, '-' or '_'", prefix, maxPrefix)
	}
	return nil
}

// queueName is a queue's physical name: FIFO queue names must end in ".fifo".
func queueName(prefix, logical string) string {
	name := prefix + "-" + logical
	if resources.FIFO {
		name += ".fifo"
	}
	return name
}

func createTable(ctx context.Context, c *dynamodb.Client, name string, spec resources.TableSpec) error {
	types := map[string]resources.KeyType{}
	var conflict []error
	define := func(a resources.Attribute) {
		if t, ok := types[a.Name]; ok && t != a.Type {
			conflict = append(conflict, fmt.Errorf("attribute %s declared as both %s and %s", a.Name, t, a.Type))
		}
		types[a.Name] = a.Type
	}
	keySchema := func(pk, sk resources.Attribute) []dbtypes.KeySchemaElement {
		define(pk)
		ks := []dbtypes.KeySchemaElement{{AttributeName: aws.String(pk.Name), KeyType: dbtypes.KeyTypeHash}}
		if sk.Name != "" {
			define(sk)
			ks = append(ks, dbtypes.KeySchemaElement{AttributeName: aws.String(sk.Name), KeyType: dbtypes.KeyTypeRange})
		}
		return ks
	}
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: dbtypes.BillingModePayPerRequest,
		KeySchema:   keySchema(spec.PartitionKey, resources.Attribute{}),
	}
	for _, ix := range spec.Indexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, dbtypes.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  keySchema(ix.PartitionKey, ix.SortKey),
			Projection: &dbtypes.Projection{ProjectionType: dbtypes.ProjectionType(ix.Projection)},
		})
	}
	if err := errors.Join(conflict...); err != nil {
		return fmt.Errorf("table %s: %w", name, err)
	}
	names := make([]string, 0, len(types))
	for n := range types {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		in.AttributeDefinitions = append(in.AttributeDefinitions, dbtypes.AttributeDefinition{
			AttributeName: aws.String(n), AttributeType: dbtypes.ScalarAttributeType(types[n]),
		})
	}
	if _, err := c.CreateTable(ctx, in); err != nil {
		return fmt.Errorf("create table %s: %w", name, err)
	}
	if err := waitActive(ctx, c, name); err != nil {
		return err
	}
	if spec.TTLAttribute != "" {
		_, err := c.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
			TableName: aws.String(name),
			TimeToLiveSpecification: &dbtypes.TimeToLiveSpecification{
				AttributeName: aws.String(spec.TTLAttribute), Enabled: aws.Bool(true),
			},
		})
		if err != nil {
			return fmt.Errorf("enable TTL on table %s: %w", name, err)
		}
	}
	return nil
}

// waitActive polls until the table and all its GSIs are ACTIVE. DynamoDB
// Local creates them ACTIVE at once; real DynamoDB takes seconds. (The SDK's
// TableExistsWaiter ignores index status and starts at a 20-second delay.)
func waitActive(ctx context.Context, c *dynamodb.Client, name string) error {
	delay := 20 * time.Millisecond
	for {
		out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", name, err)
		}
		active := out.Table.TableStatus == dbtypes.TableStatusActive
		for _, ix := range out.Table.GlobalSecondaryIndexes {
			active = active && ix.IndexStatus == dbtypes.IndexStatusActive
		}
		if active {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("table %s not active: %w", name, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, time.Second)
	}
}

// redrivePolicy is SQS's RedrivePolicy attribute, a JSON document.
type redrivePolicy struct {
	DeadLetterTargetArn string `json:"deadLetterTargetArn"`
	MaxReceiveCount     int    `json:"maxReceiveCount"`
}

// createQueue creates spec's dead-letter queue, then the queue redriving to it.
func createQueue(ctx context.Context, c *sqs.Client, prefix string, spec resources.QueueSpec) (url, dlqURL string, err error) {
	base := map[string]string{}
	if resources.FIFO {
		// Both attributes exist only on FIFO queues. A FIFO queue's DLQ must
		// be FIFO too.
		base[string(sqstypes.QueueAttributeNameFifoQueue)] = "true"
		base[string(sqstypes.QueueAttributeNameContentBasedDeduplication)] = strconv.FormatBool(resources.ContentBasedDeduplication)
	}
	base[string(sqstypes.QueueAttributeNameMaximumMessageSize)] = strconv.Itoa(spec.MaxMessageBytes)
	dlqAttrs := maps.Clone(base)
	dlqAttrs[string(sqstypes.QueueAttributeNameMessageRetentionPeriod)] = seconds(spec.DLQRetention)
	dlqURL, dlqARN, err := create(ctx, c, queueName(prefix, spec.DLQName()), dlqAttrs)
	if err != nil {
		return "", "", err
	}
	policy, err := json.Marshal(redrivePolicy{DeadLetterTargetArn: dlqARN, MaxReceiveCount: spec.MaxReceiveCount})
	if err != nil {
		return "", "", err
	}
	attrs := maps.Clone(base)
	attrs[string(sqstypes.QueueAttributeNameVisibilityTimeout)] = seconds(spec.VisibilityTimeout)
	attrs[string(sqstypes.QueueAttributeNameMessageRetentionPeriod)] = seconds(spec.Retention)
	attrs[string(sqstypes.QueueAttributeNameRedrivePolicy)] = string(policy)
	url, _, err = create(ctx, c, queueName(prefix, spec.Name), attrs)
	if err != nil {
		return "", "", err
	}
	return url, dlqURL, nil
}

// create creates one queue and returns its URL and ARN.
func create(ctx context.Context, c *sqs.Client, name string, attrs map[string]string) (url, arn string, err error) {
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return "", "", fmt.Errorf("create queue %s: %w", name, err)
	}
	got, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       out.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", "", fmt.Errorf("get ARN of queue %s: %w", name, err)
	}
	arn = got.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	if arn == "" {
		return "", "", fmt.Errorf("queue %s: no QueueArn attribute", name)
	}
	return aws.ToString(out.QueueUrl), arn, nil
}

func seconds(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }
