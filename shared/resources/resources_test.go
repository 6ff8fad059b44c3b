package resources_test

import (
	"os"
	"slices"
	"testing"

	"github.com/parleyhq/parley/shared/resources"
)

// TestEveryFunctionDirectoryIsDeclared: functions/<name> and the declaration
// list the same functions, so the CDK stack (built from the declaration)
// deploys exactly what the repository builds.
func TestEveryFunctionDirectoryIsDeclared(t *testing.T) {
	entries, err := os.ReadDir("../../functions")
	if err != nil {
		t.Fatal(err)
	}
	var dirs, declared []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	for _, f := range resources.Functions() {
		declared = append(declared, f.Name)
	}
	slices.Sort(dirs)
	slices.Sort(declared)
	if !slices.Equal(dirs, declared) {
		t.Fatalf("functions/ holds %v, resources declares %v", dirs, declared)
	}
}

// TestQueuesFitTheirConsumers checks the design's queue rules against the
// declared consumers: visibility ≥ 6 × the consumer's timeout, at least 5
// receives before the DLQ, FIFO batches of at most 10.
func TestQueuesFitTheirConsumers(t *testing.T) {
	for _, f := range resources.Functions() {
		switch f.Kind {
		case resources.Consumer:
			q := f.Consumes
			if q == nil {
				t.Fatalf("%s: a consumer without a queue", f.Name)
			}
			if q.VisibilityTimeout < 6*f.Timeout {
				t.Errorf("%s: visibility %s < 6 × timeout %s", q.Name, q.VisibilityTimeout, f.Timeout)
			}
			if q.MaxReceiveCount < 5 {
				t.Errorf("%s: maxReceiveCount %d < 5", q.Name, q.MaxReceiveCount)
			}
			if f.BatchSize < 1 || f.BatchSize > 10 {
				t.Errorf("%s: batch size %d outside 1..10", f.Name, f.BatchSize)
			}
			if f.MaxConcurrency < 2 {
				t.Errorf("%s: maximum concurrency %d < 2 (the event source mapping's minimum)", f.Name, f.MaxConcurrency)
			}
		case resources.Ingress:
			if f.Consumes != nil || len(f.SendsTo) != 1 || f.SendsTo[0].Name != resources.Inbound.Name {
				t.Errorf("%s: an ingress function must only send to %s", f.Name, resources.Inbound.Name)
			}
		default:
			t.Errorf("%s: unknown kind %q", f.Name, f.Kind)
		}
	}
	if resources.ContentBasedDeduplication || !resources.FIFO {
		t.Error("queues must be FIFO with content-based deduplication off")
	}
}
