// Package turn runs one conversation turn per inbound event: claim the event
// once, call the agent, plan its reply into bubbles, persist one send intent
// holding every unit, and only then enqueue the units on outbound.fifo.
//
// # Once
//
// The turn claims its intent's key (store.IntentKey of an id derived from the
// event key) before calling the agent, and the claim becomes the intent: one
// conditional write (CommitIntent) stores the plan on the claim and settles
// it, and only then are the units enqueued. A redelivered inbound message —
// SQS FIFO forgets its deduplication ids after five minutes — finds the claim
// settled and never asks the agent again; when it holds an intent, its open
// units are enqueued again, since the commit comes before the enqueue and a
// crash between them leaves nothing else to say it happened (the outbound
// deduplication ids and the units' states absorb the repeat). The one window
// that can repeat an agent call is a crash between the agent's answer and the
// commit; the request's turn_id (and webhook-id) stays the same, so an agent
// that cares can deduplicate. A commit by an attempt whose lease ran out is
// refused: the attempt holding the claim decides.
//
// # Failures
//
// A transient agent failure (5xx, 429, timeout) releases the claim until its
// retry time (the agent's Retry-After, or a backoff on the claim's attempts)
// and asks the queue to bring the record back then — never a loop inside the
// function. A record back early (SQS parks a message at most 12 hours) finds
// the claim held until the retry time and parks again for the rest, without
// asking the agent. An answer that means Parley is misconfigured (401, 403,
// 404, 405, 410) is retried the same way, so fixing the configuration
// delivers everything. The budget is time: past Config.MaxAge from when
// ingress accepted the event, the record is dead-lettered (the DLQ alarms,
// and an operator redrives it). Any other 4xx, or a reply that cannot be
// planned, settles the claim as failed and logs it; the thread moves on.
//
// Every plan is bounded (envelope limits, and the units and bytes of any
// reply): over them the reply is rejected whole and the person gets the
// configured error line, unless the policy is silent. A plan the store
// refuses for its size is replaced by that line too: it is never retried, so
// the agent is never asked twice for it.
//
// # Waiting for a posted reply
//
// An agent that answers 202 posts its reply later (package agentapi). The
// turn records that it waits (an await record), holds its claim until the
// deadline, parks its own message until then (an hour at most per look) and
// reads the record once more, returning consumer.Parked: a post wakes the
// parked message, and the record says what came. A post that came before the
// 202 was read has opened the record already: the turn adopts it, or plans a
// final post at once (ADR 0014).
package turn
