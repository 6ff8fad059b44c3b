// Package queue sends to and manages Parley's SQS FIFO queues.
//
// Every message names its ordering group (a thread key) and its
// deduplication id (an event key or an intent#unit key), shaped by
// message.GroupID and message.DedupID in exactly one place, Outgoing. SQS
// FIFO's deduplication only lasts five minutes; the durable once-guarantees
// live in the state store, and this package's ids are the first line only.
//
// Every body is JSON text, and Send and SendBatch write it through Body, the
// one place that makes it hold only characters SQS (and the emulator,
// fauxqs) accepts, as \u escapes that decode to the same text.
package queue
