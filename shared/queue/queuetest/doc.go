// Package queuetest is an in-memory model of one Amazon SQS FIFO queue and
// of Lambda's SQS event source mapping, driven by a test clock. Import it only
// from _test files.
//
// Parley's consumers are tested against the emulator fauxqs, which differs
// from real SQS FIFO in two ways that matter. fauxqs returns at most one
// message per message group per receive, so a consumer's handling of several
// messages of one group in one batch (stop at the first failure, return the
// rest of the group in order) never runs there. And fauxqs accepts any
// ChangeMessageVisibility up to 43,200 s, where SQS refuses one that would
// keep a message invisible past 12 hours from when it was received. This
// model does what SQS documents instead:
//
//   - a receive returns as many messages of one group as it can, in order,
//     then moves on to the next group; a group with a message in flight is
//     skipped;
//   - every receive counts, and a message received MaxReceiveCount times is
//     moved to the dead-letter queue the next time it would be returned;
//   - a visibility change past the 12-hour limit fails with
//     ErrVisibilityLimit and changes nothing;
//   - deduplication lasts the deduplication window, measured on the model's
//     clock, also after the original was deleted;
//   - a body over the maximum message size is refused, and so is one that
//     holds a character SQS refuses (InvalidMessageContents), checked on
//     the body as queue.Queue sends it (queue.Body).
//
// Time comes from Options.Now, usually a Clock, and visibility is computed
// from it at each call: nothing runs in the background, and a test moves
// time instead of sleeping.
//
//	clock := queuetest.NewClock(t0)
//	q := queuetest.New(queuetest.Options{Now: clock.Now, MaxReceiveCount: 5})
//	c := &consumer.Consumer{Handle: h, Visibility: q}
//	_ = q.Send(ctx, queue.Message{Group: thread, Dedup: key, Body: body})
//	n, err := q.Poll(ctx, c.HandleSQS, 10, 30*time.Second)
//	clock.Advance(30 * time.Second) // what failed is visible again
//
// The model is used beside the emulator tests, never instead of them: it
// checks the behaviours fauxqs gets wrong, while the emulator checks that
// Parley speaks SQS's API to a real server.
package queuetest
