// Package operator is what a person operating Parley reads and does, on a
// deployed stack or on make run's emulators: a message's timeline, a
// thread's messages, the attention list, an operator's resend or abandon of
// a unit, a dead-letter queue's messages and their guarded redrive, and
// the stack's status. The parley command and make run's console are thin
// over it.
//
// It reads only what the functions already keep: the state table through
// the store's ports (claims, intents, questions, the attention index and
// the sweeper's list), the queues' attributes, and the functions' JSON log
// lines, found by the correlation id every line of a message carries
// (event_key: the message's event key). Nothing on a message's path reads
// or writes for it. Its writes are an operator's decisions, each a
// compare-and-set like delivery's own (intent.OperatorResend,
// intent.Abandon), and a dead-letter queue's redrive, through SQS's own
// message-move task.
//
//	op := &operator.Operator{Target: t, Store: dynamostore.New(db, t.Table), SQS: sqsClient,
//		Logs: operator.FileLogs{Path: ".parley/parley-local.log"}}
//	tl, err := op.Message(ctx, "evt#telegram#7000000001#900000001")
//	items, notes, err := op.Attention(ctx)
//	d, err := op.Resend(ctx, items[0].Key, false) // *ConfirmError: what a resend risks
//	r, err := op.Redrive(ctx, "inbound", time.Hour)  // *RefusedError: what is older
//
// Where a step is only in the logs (an agent call's latency, a duplicate's
// arrival, an attempt that was retried), a timeline reads it from them and
// says so (Step.Source).
package operator
