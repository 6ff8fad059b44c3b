package emulatortest_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"go.uber.org/goleak"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/resources"
)

// TestMain follows the package's goleak recipe, which checks that Run leaves
// no goroutine behind: not the stack's, not the SDK's idle connections'.
func TestMain(m *testing.M) {
	code := emulatortest.Run(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

func TestNewGivesEachTestItsOwnResources(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		envs = map[string]*emulatortest.Env{}
	)
	// Names with characters no table or queue name may hold.
	for _, name := range []string{"plain", "odd name/with #chars.and-dots", strings.Repeat("long", 30)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := emulatortest.New(t)
			mu.Lock()
			envs[name] = env
			mu.Unlock()
			ctx := t.Context()
			pk := resources.Table.PartitionKey.Name
			put := &dynamodb.PutItemInput{
				TableName:           aws.String(env.Resources.Table),
				Item:                map[string]dbtypes.AttributeValue{pk: &dbtypes.AttributeValueMemberS{Value: "evt#1"}},
				ConditionExpression: aws.String("attribute_not_exists(#pk)"),
				ExpressionAttributeNames: map[string]string{
					"#pk": pk,
				},
			}
			// The same key in every subtest: only fresh tables let each
			// first put succeed.
			if _, err := env.DynamoDB.PutItem(ctx, put); err != nil {
				t.Fatalf("first put: %v", err)
			}
			var conflict *dbtypes.ConditionalCheckFailedException
			if _, err := env.DynamoDB.PutItem(ctx, put); !errors.As(err, &conflict) {
				t.Fatalf("second put: err = %v, want ConditionalCheckFailedException", err)
			}
			_, err := env.SQS.SendMessage(ctx, &sqs.SendMessageInput{
				QueueUrl: aws.String(env.Resources.OutboundURL), MessageBody: aws.String(name),
				MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d"),
			})
			if err != nil {
				t.Fatal(err)
			}
			out, err := env.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(env.Resources.OutboundURL), WaitTimeSeconds: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != name {
				t.Fatalf("received %+v, want only this test's message %q", out.Messages, name)
			}
		})
	}
	t.Cleanup(func() {
		if len(envs) != 3 {
			return // a subtest failed and said why
		}
		tables := map[string]bool{}
		for _, env := range envs {
			tables[env.Resources.Table] = true
			if env.Stack != envs["plain"].Stack {
				t.Error("New started a second stack in one process")
			}
		}
		if len(tables) != 3 {
			t.Errorf("tables not distinct: %v", tables)
		}
	})
}

// Code under test builds its own clients from the environment, the way the
// functions do in AWS; New has pointed that environment at the emulators.
func TestCodeUnderTestFindsTheEmulatorsThroughTheEnvironment(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	if got := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"); got != env.Stack.DynamoDBEndpoint {
		t.Fatalf("AWS_ENDPOINT_URL_DYNAMODB = %q, want %q", got, env.Stack.DynamoDBEndpoint)
	}
	cfg, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out, err := dynamodb.NewFromConfig(cfg).DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(env.Resources.Table)})
	if err != nil {
		t.Fatalf("a client from LoadDefaultConfig cannot see the test's table: %v", err)
	}
	if out.Table.TableStatus != dbtypes.TableStatusActive {
		t.Fatalf("table status %s, want ACTIVE", out.Table.TableStatus)
	}
	if _, err := sqs.NewFromConfig(cfg).GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{
		QueueName: aws.String(env.Resources.InboundURL[strings.LastIndex(env.Resources.InboundURL, "/")+1:]),
	}); err != nil {
		t.Fatalf("a client from LoadDefaultConfig cannot see the test's queue: %v", err)
	}
}
