package store

import (
	"fmt"

	"github.com/parleyhq/parley/shared/history"
)

// History is a thread's transcript record (opt-in, PARLEY_HISTORY). The
// turn reads it, changes it (package history) and writes it back only over
// the version it read: every write is a compare-and-set, so two writers of
// one thread (a turn, an agent's erase) never lose each other's change.
type History struct {
	// ThreadKey is the thread the transcript belongs to.
	ThreadKey string
	// Entries are the transcript, oldest first, bounded by the
	// deployment's history.Config.
	Entries []history.Entry
	// Open are turns (intent ids) whose bubbles may still be delivered:
	// each write records the bubbles they delivered since (from their
	// receipts), and drops the turns that are over.
	Open []string
	// Version counts the record's writes: 0 when there is none.
	Version int64
}

// MaxOpen bounds History.Open: a thread rarely has more than one reply in
// flight, and a turn that left more than this behind loses the record of
// its oldest one's bubbles, never anything sent.
const MaxOpen = 8

// HistoryKey is the record key of a thread's transcript.
func HistoryKey(threadKey string) string { return "hist#" + threadKey }

// HistoryConflictError is returned when a history write finds another
// version than the one it read (another writer came first). It wraps
// ErrConflict.
type HistoryConflictError struct{ ThreadKey string }

func (e *HistoryConflictError) Error() string {
	return fmt.Sprintf("store: history of %s changed since it was read", e.ThreadKey)
}

func (e *HistoryConflictError) Unwrap() error { return ErrConflict }
