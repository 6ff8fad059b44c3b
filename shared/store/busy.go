package store

import "time"

// Busy is a thread's busy-policy record (PARLEY_BUSY_POLICY): under
// collect, the messages collected while a turn ran, waiting for the one
// turn that answers them all; under interrupt, the thread's newest turns.
// Only the thread's own turns write it, one at a time (its inbound FIFO
// group), so its writes are conditional only to be safe to repeat.
type Busy struct {
	ThreadKey string
	// Open is the key of the event that opened the collection a flush is
	// queued for; empty when none is.
	Open string
	// Collected are the inbound.fifo bodies of the collected messages, in
	// the thread's order.
	Collected [][]byte
	// End is when the thread's last agent turn ended: a message received
	// before it arrived while that turn ran.
	End time.Time
	// Last is the thread's newest turn that may be interrupted (an intent
	// id); Prev the one before it.
	Last, Prev string
}

// BusyKey is the record key of a thread's busy-policy record.
func BusyKey(threadKey string) string { return "busy#" + threadKey }

// Joined is what Join did with a message.
type Joined int

const (
	// JoinedNot: no collection is open and the message arrived after the
	// thread's last turn ended: it runs its own turn.
	JoinedNot Joined = iota
	// JoinedCollection: the message joined the open collection.
	JoinedCollection
	// JoinedOpened: the message opened a collection (no flush is queued
	// yet: its turn queues it).
	JoinedOpened
	// JoinedFull: a collection is open and the message would take it over
	// its bound: it waits behind the collection's flush.
	JoinedFull
)

// MaxCollectedBytes bounds a collection's bodies together, well within a
// DynamoDB item: a message that would take it over waits for the next.
const MaxCollectedBytes = 200 << 10
