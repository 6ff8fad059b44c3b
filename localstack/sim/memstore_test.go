package sim

import (
	"testing"

	"github.com/parleyhq/parley/shared/store/storetest"
)

// TestMemStoreConformance runs the store suite dynamostore passes against
// DynamoDB Local on the simulator's model, so the model is held to the real
// store's behaviour.
func TestMemStoreConformance(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) storetest.Store { return NewMemStore() })
}

// TestMemStoreConformanceRetried runs the suite with every write applied
// twice under one write token, as the SDK retries a write whose answer was
// lost: each write must recognise its own earlier success.
func TestMemStoreConformanceRetried(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) storetest.Store {
		s := NewMemStore()
		s.Retried = func(string) bool { return true }
		return s
	})
}
