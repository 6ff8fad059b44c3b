// Package sim is a deterministic simulation of the whole pipeline, for
// tests only: the real ingress pipeline, turn processor, delivery processor,
// consumers and sweeper, assembled as shared/app assembles them, run against
// in-process models on a virtual clock (queuetest.Clock), every choice drawn
// from one seed:
//
//   - DynamoDB: MemStore, the store ports over one map of items, held to
//     dynamostore's behaviour by storetest; around it, throttling, answers
//     lost after the write applied, and the SDK's retry of such a write
//     (the write applied twice under one write token);
//   - SQS FIFO: queuetest.FIFO (several messages of a group per receive,
//     visibility and the 12-hour rule, receive counts and the DLQ, the
//     deduplication window, size and character rules), with throttles and
//     lost answers around it, and the event source mapping's loop;
//   - Telegram and LINE: their receivers, fed signed updates people write,
//     which the platform redelivers, duplicates and reorders; their send
//     APIs at the sender port, with 429s, 5xx and timeouts after the
//     request left (the message shown or not), LINE's retry key answering
//     a repeated send 409: what the model records is what the person saw;
//   - the agent at the turn's Agent port: slow, failing, answering after
//     its caller gave up;
//   - Lambda: an invocation killed before or after any port call (its
//     result dropped), cold starts (a function assembled anew).
//
// Invariants are checked after every step and at the end (Run); a failing
// seed replays exactly, and Shrink turns its faults off one at a time while
// it still fails. docs/architecture.md ("The simulator") says what is not
// modelled.
package sim
