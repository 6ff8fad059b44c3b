package dynamostore_test

import (
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// TestWindowIndex: a person's message claimed with a window is found as
// its thread's last inbound, the newest of several; other threads' and
// claims without one are not; a thread nobody wrote in has none. The
// window rides on the claim's one PutItem: no other write.
func TestWindowIndex(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	s := dynamostore.New(env.DynamoDB, env.Resources.Table)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const ada, grace = "whatsapp:106540352242922:15551230001", "whatsapp:106540352242922:15551230002"
	claim := func(key, thread string, at time.Time) {
		t.Helper()
		spec := store.ClaimSpec{Owner: store.NewOwner(), Now: now, TTL: store.DedupeTTL, State: store.ClaimEnqueued, Window: thread, WindowAt: at}
		if _, err := s.Claim(t.Context(), key, spec); err != nil {
			t.Fatal(err)
		}
	}
	claim("evt#whatsapp#1#a1", ada, now.Add(-3*time.Hour))
	claim("evt#whatsapp#1#a2", ada, now.Add(-time.Hour))
	claim("evt#whatsapp#1#a3", ada, now.Add(-2*time.Hour)) // delivered late: not the newest
	claim("evt#whatsapp#1#g1", grace, now.Add(-30*time.Hour))
	claim("evt#telegram#1#x", "", now) // no window: not listed
	for thread, want := range map[string]time.Time{ada: now.Add(-time.Hour), grace: now.Add(-30 * time.Hour), "whatsapp:1:nobody": {}} {
		got, err := s.LastInbound(t.Context(), thread, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("LastInbound(%s) = %v, %v; want %v", thread, got, err, want)
		}
	}
}
