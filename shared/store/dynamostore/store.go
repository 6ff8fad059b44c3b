package dynamostore

import (
	"errors"
	"fmt"
	"time"

	"github.com/parleyhq/parley/shared/awsjson"
	"github.com/parleyhq/parley/shared/ddb"
	"github.com/parleyhq/parley/shared/store"
)

// Store is the DynamoDB backend. Safe for concurrent use.
type Store struct {
	db    *ddb.Client
	table string
}

// New returns a store on the named table.
func New(db *ddb.Client, table string) *Store {
	return &Store{db: db, table: table}
}

func (s *Store) key(pk string) ddb.Item {
	return ddb.Item{"pk": str(pk)}
}

// conflictItem reports whether err is a failed condition and returns the item
// DynamoDB sent back with it (nil when there was none).
func conflictItem(err error) (ddb.Item, bool) {
	var ccf *ddb.ConditionFailedError
	if errors.As(err, &ccf) {
		return ccf.Item, true
	}
	return nil, false
}

func str(s string) ddb.Value { return ddb.S(s) }

func num(n int64) ddb.Value { return ddb.Int(n) }

// millis stores a time as Unix milliseconds; the zero time as 0.
func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func getS(item ddb.Item, name string) string {
	s, _ := item[name].AsS()
	return s
}

func getN(item ddb.Item, name string) int64 {
	n, _ := item[name].AsInt()
	return n
}

// wrap names the operation on a failure that is not a condition failure. A
// ValidationException (an item over 400 KB, among others) is the same on
// every retry: it becomes store.ErrInvalid, so callers stop retrying.
func wrap(op string, err error) error {
	var api *awsjson.APIError
	if errors.As(err, &api) && api.Code == "ValidationException" {
		return fmt.Errorf("dynamodb %s: %w: %w", op, store.ErrInvalid, err)
	}
	return fmt.Errorf("dynamodb %s: %w", op, err)
}
