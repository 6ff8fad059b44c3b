package dynamostore

import (
	"context"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// AdoptAwait makes an open await record the waiting turn's: the claim owner
// that holds the turn now and the receipt handle of its message, so that a
// post wakes it and whichever invocation sees the outcome settles the claim.
// A record an early post opened (POST /reply before the turn read its 202)
// has no handle yet, and a re-run turn holds its claim under a new owner.
// Nor has it the turn's preview base, which the adoption sets.
// A record no longer open gives a *store.AwaitConflictError holding it.
func (s *Store) AdoptAwait(ctx context.Context, turnID, owner, handle string, preview message.Preview) (store.Await, error) {
	base, err := previewBase(preview)
	if err != nil {
		return store.Await{}, err
	}
	return s.awaitUpdate(ctx, turnID, "SET #owner = :owner, #handle = :handle, #pvbase = :pvbase", "",
		map[string]string{"#owner": "owner", "#handle": "handle", "#pvbase": "pv_base"},
		attrs{":owner": str(owner), ":handle": str(handle), ":pvbase": str(base)})
}
