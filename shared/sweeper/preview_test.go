package sweeper_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/sweeper"
)

const tgToken = "7000000001:AAFakeTokenForParleyTests_0123456789"

var group = message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "-1001000000042"}

// withTelegram gives the sweeper a Telegram sender on a fake Bot API, and
// shows a group preview under key through it, recorded at t0 as the turn
// records it.
func (s *setup) withTelegram(key string) (message.Preview, *fakeapi.Recorder) {
	s.t.Helper()
	rec := fakeapi.New(fakeapi.Options{})
	srv := httptest.NewServer(faketelegram.New(faketelegram.Options{Token: tgToken, Recorder: rec}))
	s.t.Cleanup(srv.Close)
	c := &telegram.Client{Token: tgToken, BotID: "7000000001", BaseURL: srv.URL}
	s.p.Previewers = map[message.Platform]sweeper.Previewer{message.Telegram: c}
	pv, err := c.Preview(s.t.Context(), message.Preview{Thread: group, Key: key}, "let me see")
	if err != nil || pv.MessageID == "" {
		s.t.Fatalf("preview: %+v, %v", pv, err)
	}
	if err := s.store.RecordPreview(s.t.Context(), pv, t0, 24*time.Hour); err != nil {
		s.t.Fatal(err)
	}
	return pv, rec
}

// TestPreviewsLeftBehind: a preview's record is on the sweeper's list from
// when it is written. Its turn still to run keeps it; a preview the reply's
// first bubble finalized only loses its record; one whose turn ended
// without settling it (the turn failed and its clear failed, or its reply
// has no bubble to become it) is deleted on the platform, then its record
// dropped, once.
func TestPreviewsLeftBehind(t *testing.T) {
	t.Parallel()
	due := t0.Add(intent.SweepGrace)

	t.Run("TheTurnFailedWithoutClearingIt", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t)
		pv, rec := s.withTelegram("pvfailed")
		key := store.IntentKey("pvfailed")
		if _, err := s.store.Claim(t.Context(), key, store.ClaimSpec{Owner: "o", Now: t0, Lease: time.Minute, TTL: 24 * time.Hour}); err != nil {
			t.Fatal(err)
		}
		if err := s.store.Settle(t.Context(), key, "o", store.ClaimFailed, "agent_failed", t0, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
		s.now = due.Add(-time.Second)
		if r := s.run(); r.Due != 0 {
			t.Fatalf("before its time: %+v", r)
		}
		s.now = due
		if r := s.run(); r.PreviewsCleared != 1 {
			t.Fatalf("report %+v", r)
		}
		if d := rec.Deletions(); len(d) != 1 || d[0].MessageID != pv.MessageID {
			t.Fatalf("deletions %+v", d)
		}
		if _, err := s.store.GetPreview(t.Context(), "pvfailed", s.now); err == nil {
			t.Fatal("the record stays")
		}
		if r := s.run(); r.Due != 0 || len(rec.Deletions()) != 1 {
			t.Fatalf("again: %+v, deletions %d", r, len(rec.Deletions()))
		}
		if f := s.findings(); f[sweeper.FindingPreview] != 1 {
			t.Fatalf("findings %v", f)
		}
	})

	t.Run("ATurnStillToRunKeepsIt", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t)
		_, rec := s.withTelegram("pvpending")
		lease := 10 * time.Minute
		if _, err := s.store.Claim(t.Context(), store.IntentKey("pvpending"), store.ClaimSpec{Owner: "o", Now: t0, Lease: lease, TTL: 24 * time.Hour}); err != nil {
			t.Fatal(err)
		}
		s.now = due
		if r := s.run(); r.Rescheduled != 1 || r.PreviewsCleared != 0 {
			t.Fatalf("report %+v", r)
		}
		if len(rec.Deletions()) != 0 {
			t.Fatalf("deletions %+v", rec.Deletions())
		}
		if _, err := s.store.GetPreview(t.Context(), "pvpending", s.now); err != nil {
			t.Fatalf("record: %v", err)
		}
		if e, _ := s.store.DueForSweep(t.Context(), t0.Add(lease+intent.SweepGrace), 10); len(e) != 1 || !e[0].At.Equal(t0.Add(lease+intent.SweepGrace)) {
			t.Fatalf("due again %+v: want at the lease's end and a grace", e)
		}
	})

	t.Run("AFinalizedPreviewOnlyLosesItsRecord", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t)
		_, rec := s.withTelegram("pvdone")
		s.intent("pvdone", intent.Unit{ID: "b1#1", Content: message.Text("the reply"), State: message.UnitSent,
			Replaces: intent.UnitKey("pvdone", intent.PreviewUnit), Receipt: []string{"1"}})
		s.now = due
		if r := s.run(); r.PreviewsCleared != 0 {
			t.Fatalf("report %+v", r)
		}
		if len(rec.Deletions()) != 0 {
			t.Fatalf("the reply was deleted: %+v", rec.Deletions())
		}
		if _, err := s.store.GetPreview(t.Context(), "pvdone", s.now); err == nil {
			t.Fatal("the record stays")
		}
	})

	t.Run("AnIntentThatDoesNotReplaceItClearsIt", func(t *testing.T) {
		t.Parallel()
		s := newSetup(t)
		pv, rec := s.withTelegram("pvquestion")
		s.intent("pvquestion", intent.Unit{ID: "q#1", Content: message.Content{Prompt: &message.Prompt{Text: "Which seat?"}}, State: message.UnitSent, Receipt: []string{"2"}})
		s.now = due
		if r := s.run(); r.PreviewsCleared != 1 {
			t.Fatalf("report %+v", r)
		}
		if d := rec.Deletions(); len(d) != 1 || d[0].MessageID != pv.MessageID {
			t.Fatalf("deletions %+v", d)
		}
	})
}
