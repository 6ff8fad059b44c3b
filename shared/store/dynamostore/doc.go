// Package dynamostore is Parley's state store on DynamoDB: claims (dedupe and
// turn), send intents with their unit transitions, in the single table that
// shared/resources declares (partition key pk, TTL attribute expires_at).
//
// Every change is a conditional write. A failed condition comes back as
// store.ErrConflict with the current record, read in the same call through
// ReturnValuesOnConditionCheckFailure, so callers never need a second read.
// No SDK or smithy error type leaves this package but wrapped.
package dynamostore
