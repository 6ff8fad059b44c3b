// Package dynamostore is Parley's state store on DynamoDB: claims (dedupe and
// turn), send intents with their unit transitions, questions, awaits and
// triage counters, in the single table that shared/resources declares
// (partition key pk, TTL attribute expires_at). It calls DynamoDB with the
// AWS SDK's client and encodes items with its attributevalue package.
//
// Every change is a conditional write. A failed condition comes back as
// store.ErrConflict with the current record, read in the same call through
// ReturnValuesOnConditionCheckFailure, so callers never need a second read.
// Every conditional write stamps the item with a token of its own, so a
// write the SDK retried after its first attempt was applied (the answer lost
// to a 5xx or a broken connection) finds its own success, never a conflict.
// No SDK or smithy error type leaves this package but wrapped.
package dynamostore
