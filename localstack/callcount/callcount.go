// Package callcount counts AWS API calls by service and operation with an SDK
// middleware, so tests and benchmarks can state how many calls — and how many
// DynamoDB writes — a message costs end to end.
package callcount

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// Counter counts calls. Safe for concurrent use.
type Counter struct {
	mu     sync.Mutex
	counts map[string]int
}

// Attach returns a copy of cfg whose clients count every call into a new
// Counter.
func Attach(cfg aws.Config) (aws.Config, *Counter) {
	c := &Counter{counts: map[string]int{}}
	cfg = cfg.Copy()
	cfg.APIOptions = append(cfg.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("ParleyCallCount",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				c.add(awsmiddleware.GetServiceID(ctx) + "." + awsmiddleware.GetOperationName(ctx))
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
	return cfg, c
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
