package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// previews: a recorded preview reads back whole, a later record replaces
// it, it expires at its TTL, and a dropped one is gone (dropping twice is
// fine).
func previews(t *testing.T, s store.Previews) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	if _, err := s.GetPreview(ctx, "none", now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("absent preview: %v, want ErrNotFound", err)
	}
	p := message.Preview{Thread: message.Thread{Platform: message.Telegram, Account: "1", Chat: "-100", Thread: "7"}, Key: "k1", ReplyTo: "41", MessageID: "42"}
	if err := s.RecordPreview(ctx, p, now, time.Hour); err != nil {
		t.Fatal(err)
	}
	other := p
	other.Key, other.MessageID = "k2", "99"
	if err := s.RecordPreview(ctx, other, now, time.Hour); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetPreview(ctx, "k1", now)
	if err != nil || got != p {
		t.Fatalf("read back %+v, %v; want %+v", got, err, p)
	}
	p.MessageID = "43"
	if err := s.RecordPreview(ctx, p, now, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetPreview(ctx, "k1", now); err != nil || got.MessageID != "43" {
		t.Fatalf("replaced record reads %+v, %v", got, err)
	}
	if _, err := s.GetPreview(ctx, "k1", now.Add(2*time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired preview: %v, want ErrNotFound", err)
	}
	for range 2 {
		if err := s.DropPreview(ctx, "k1"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetPreview(ctx, "k1", now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("dropped preview: %v, want ErrNotFound", err)
	}
	if got, err := s.GetPreview(ctx, "k2", now); err != nil || got != other {
		t.Fatalf("the other preview reads %+v, %v", got, err)
	}
}
