// Package callcount counts AWS API calls by service and operation with an
// Initialize middleware (which the SDK's clients run once per call, outside
// their retries), so tests and benchmarks can state how many calls — and how
// many DynamoDB writes — a message costs end to end.
package callcount

import (
	"context"
	"errors"
	"github.com/parleyhq/parley/localstack/awsfault"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Counter counts calls, and the DynamoDB capacity they consume. Safe for
// concurrent use.
type Counter struct {
	mu       sync.Mutex
	counts   map[string]int
	capacity Capacity
}

// Capacity is DynamoDB capacity consumed, in units: on demand, each write
// unit is a write request unit (1 KB of the larger of the item before and
// after a write), each read unit a read request unit (4 KB, strongly
// consistent). Index writes are included, as AWS bills them.
type Capacity struct {
	Read, Write float64
}

// Attach returns a copy of cfg whose clients count every call into a new
// Counter. Every DynamoDB call asks for its consumed capacity
// (ReturnConsumedCapacity TOTAL), which changes nothing else about it.
func Attach(cfg aws.Config) (aws.Config, *Counter) {
	c := &Counter{counts: map[string]int{}}
	cfg = cfg.Copy()
	cfg.APIOptions = append(cfg.APIOptions, func(s *middleware.Stack) error {
		if awsfault.Presigning(s) {
			return nil // a presigned URL is not a call
		}
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("ParleyCallCount",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				op := awsmiddleware.GetServiceID(ctx) + "." + awsmiddleware.GetOperationName(ctx)
				c.add(op)
				askCapacity(in.Parameters)
				out, md, err := next.HandleInitialize(ctx, in)
				c.addCapacity(op, consumed(out.Result, err))
				return out, md, err
			}), middleware.After)
	})
	return cfg, c
}

// askCapacity asks a DynamoDB call for its consumed capacity.
func askCapacity(params any) {
	const total = types.ReturnConsumedCapacityTotal
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity = total
	}
}

// consumed is the capacity a DynamoDB call's answer reports. A failed
// condition consumes write capacity too; AWS reports it in the error only
// for some calls, so it is counted as one unit, the least AWS bills.
func consumed(result any, err error) []float64 {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return []float64{1}
	}
	if err != nil {
		return nil
	}
	var cc *types.ConsumedCapacity
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		cc = out.ConsumedCapacity
	case *dynamodb.PutItemOutput:
		cc = out.ConsumedCapacity
	case *dynamodb.UpdateItemOutput:
		cc = out.ConsumedCapacity
	case *dynamodb.DeleteItemOutput:
		cc = out.ConsumedCapacity
	case *dynamodb.QueryOutput:
		cc = out.ConsumedCapacity
	}
	if cc == nil {
		return nil
	}
	units := aws.ToFloat64(cc.CapacityUnits)
	if units == 0 {
		units = aws.ToFloat64(cc.ReadCapacityUnits) + aws.ToFloat64(cc.WriteCapacityUnits)
	}
	return []float64{units}
}

// addCapacity adds what op consumed: a read call's units are read units, a
// write call's write units.
func (c *Counter) addCapacity(op string, ccs []float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, units := range ccs {
		if op == "DynamoDB.GetItem" || op == "DynamoDB.Query" {
			c.capacity.Read += units
		} else {
			c.capacity.Write += units
		}
	}
}

// Capacity is the DynamoDB capacity consumed so far.
func (c *Counter) Capacity() Capacity {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.capacity
}

func (c *Counter) add(op string) {
	c.mu.Lock()
	c.counts[op]++
	c.mu.Unlock()
}

// Snapshot returns the counts so far, keyed "Service.Operation"
// (e.g. "DynamoDB.UpdateItem", "SQS.SendMessage").
func (c *Counter) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// Reset zeroes the counts.
func (c *Counter) Reset() {
	c.mu.Lock()
	clear(c.counts)
	c.capacity = Capacity{}
	c.mu.Unlock()
}

// Total is the number of calls whose operation matches keep.
func (c *Counter) Total(keep func(op string) bool) int {
	n := 0
	for op, k := range c.Snapshot() {
		if keep == nil || keep(op) {
			n += k
		}
	}
	return n
}

// String lists the counts, sorted, for test failure messages.
func (c *Counter) String() string {
	snap := c.Snapshot()
	var b strings.Builder
	for _, op := range slices.Sorted(maps.Keys(snap)) {
		b.WriteString(op)
		b.WriteString("=")
		b.WriteString(strconv.Itoa(snap[op]))
		b.WriteString(" ")
	}
	return strings.TrimSpace(b.String())
}

// Writes matches the operations that write to the store or a queue.
func Writes(op string) bool {
	switch op {
	case "DynamoDB.PutItem", "DynamoDB.UpdateItem", "DynamoDB.DeleteItem", "DynamoDB.BatchWriteItem",
		"DynamoDB.TransactWriteItems", "SQS.SendMessage", "SQS.SendMessageBatch":
		return true
	}
	return false
}
