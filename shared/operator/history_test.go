package operator_test

import (
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/operator"
	"github.com/parleyhq/parley/shared/store"
)

// TestEraseHistory: an operator's erase forgets one conversation's history
// and no other, twice as well as once; a malformed thread key is refused
// as ambiguous, and nothing changes.
func TestEraseHistory(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	ctx := t.Context()
	for _, k := range []string{"telegram:1:42", "telegram:1:43"} {
		rec := store.History{ThreadKey: k, Entries: []history.Entry{{ID: "e", Role: history.RolePerson, Kind: history.KindMessage, Time: s.now}}}
		if err := s.store.PutHistory(ctx, rec, s.now, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"telegram:1:*", "telegram", "a:b:c:d:e"} {
		if _, err := s.op.EraseHistory(ctx, bad); !errors.Is(err, operator.ErrAmbiguous) {
			t.Errorf("EraseHistory(%q) = %v, want ErrAmbiguous", bad, err)
		}
	}
	for range 2 {
		if got, err := s.op.EraseHistory(ctx, "telegram:1:42"); err != nil || !got.Erased {
			t.Fatalf("EraseHistory = %+v, %v", got, err)
		}
	}
	for k, want := range map[string]int64{"telegram:1:42": 0, "telegram:1:43": 1} {
		if h, err := s.store.GetHistory(ctx, k, s.now); err != nil || h.Version != want {
			t.Errorf("%s: version %d, %v; want %d", k, h.Version, err, want)
		}
	}
}
