// Package consumer runs a batch of SQS FIFO records the way Parley's turn and
// delivery functions need: records of one message group strictly in order,
// groups side by side, and every failure reported as data
// (events.SQSEventResponse.BatchItemFailures) so one bad record never
// returns the whole batch.
//
// The FIFO failure rule: when a record fails, it and every later record of
// its group in the batch are reported as failures and made visible again
// together after the retry delay, so the group resumes in order. Other groups
// go on.
//
// The deadline rule: a consumer returns before the function's deadline.
// Records it had no time to start are reported as failures and made visible
// at once, instead of letting a timeout void the whole batch response (which
// redelivers everything, done or not).
//
// A handler asks for a specific delay with Retry (a platform's retry_after);
// any other error is retried after an exponential backoff with jitter based
// on the record's receive count. SQS keeps a received message invisible for
// at most 12 hours from its receive, so a longer Retry parks the record as
// long as allowed; the handler finds the rest of its wait in its own state
// when the record comes back.
//
// The dead-letter rule: a record the handler dead-letters (DeadLetter), or
// panics on, is moved to the dead-letter queue by the consumer itself, alone,
// and its group goes on. Receive counts are not a retry budget: with several
// records of one group in a batch, every return of a waiting record counts a
// receive for each of its group-mates too, so handlers keep their own
// budgets (in time) and the queue's maxReceiveCount is only a backstop.
package consumer
