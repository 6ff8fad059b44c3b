// Package store holds what Parley's state store speaks in, without any AWS
// code: claim records, their states, and the errors callers branch on.
//
// Consumers declare the small interfaces they need (ingress its claims, the
// turn function its claims and intents, delivery its intents); the DynamoDB
// backend in store/dynamostore implements them all, and storetest is the one
// conformance suite that proves it against DynamoDB Local.
//
// # Claims
//
// A claim makes a piece of work happen once across redeliveries, concurrent
// Lambda instances and crashes. It is a lease, not a flag:
//
//	(absent | expired | pending with lease over) ──Claim──► pending(owner, lease)
//	pending(owner) ──Settle──► enqueued | suppressed | done | failed   (kept until TTL)
//	pending(owner) ──Release──► pending, lease over                   (the work failed: retry may claim)
//
// A worker that dies while pending blocks retries only until its lease ends,
// never forever (the Chat SDK lost messages by writing a permanent key before
// the work succeeded; Powertools' records stuck IN_PROGRESS until expiry).
// Settled claims answer redeliveries for their whole TTL, which outlives every
// platform's retry window; readers compare ExpiresAt themselves because
// DynamoDB's TTL deletes lag.
package store
