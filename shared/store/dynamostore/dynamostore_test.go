package dynamostore_test

import (
	"testing"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/store/storetest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// TestConformance runs the store suite against DynamoDB Local.
func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) storetest.Store {
		env := emulatortest.New(t)
		return dynamostore.New(env.DynamoDB, env.Resources.Table)
	})
}
