package dynamostore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/parleyhq/parley/shared/store"
)

// Store is the DynamoDB backend. Safe for concurrent use.
type Store struct {
	db    *dynamodb.Client
	table *string
}

// New returns a store on the named table.
func New(db *dynamodb.Client, table string) *Store {
	return &Store{db: db, table: &table}
}

// attrs is an item, or a key, as the SDK holds it.
type attrs = map[string]types.AttributeValue

func (s *Store) key(pk string) attrs {
	return attrs{"pk": str(pk)}
}

// conflictItem reports whether err is a failed condition and returns the item
// DynamoDB sent back with it (nil when there was none).
func conflictItem(err error) (attrs, bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, true
	}
	return nil, false
}

// A conditional write the SDK retries (after a 5xx, or a connection that
// broke on the way back) may have been applied by its first attempt: the
// retry then meets its own write, and its condition fails. Every
// conditional write therefore stamps the item (or, for a unit's
// transition, the unit) with a token of its own, tokenAttr, and a failed
// condition whose current item holds that token is the write's own earlier
// success, never a conflict. A claim's token is its owner, unique to each
// attempt; a triage take's its own token (acc). The sweeper's writes stamp sweepTokenAttr, so
// they never overwrite a token an owner's retry looks for.
const (
	tokenAttr      = "wt"
	sweepTokenAttr = "swt"
)

// newToken returns a write token: random, 16 hex characters.
func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ownWrite reports whether it, the item a write's failed condition found,
// holds the write's token in attribute name: the write was applied already.
func ownWrite(it attrs, name, token string) bool {
	return token != "" && getS(it, name) == token
}

// stamp adds the write token (#wt = :wt) to update, which starts with SET
// or REMOVE.
func stamp(update string) string { return stampAs(update, "#wt", ":wt") }

// stampAs adds name = value to update's SET clause, or starts one.
func stampAs(update, name, value string) string {
	if rest, ok := strings.CutPrefix(update, "SET "); ok {
		return "SET " + name + " = " + value + ", " + rest
	}
	return "SET " + name + " = " + value + " " + update
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

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

func getS(it attrs, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func getN(it attrs, name string) int64 {
	if v, ok := it[name].(*types.AttributeValueMemberN); ok {
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		return n
	}
	return 0
}

// wrap names the operation on a failure that is not a condition failure. A
// ValidationException (an item over 400 KB, among others) is the same on
// every retry: it becomes store.ErrInvalid, so callers stop retrying.
func wrap(op string, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "ValidationException" {
		return fmt.Errorf("dynamodb %s: %w: %w", op, store.ErrInvalid, err)
	}
	return fmt.Errorf("dynamodb %s: %w", op, err)
}
