package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

func askedQuestion(id string, thread message.Thread) store.Question {
	min := 1
	return store.Question{
		Thread: thread, ID: id, Short: id[:4], Origin: "evt#telegram#1#" + id, Owner: "42",
		Form: message.Question{Message: "Which seat?", Fields: []message.Field{
			{ID: "q0", Key: "seat", Kind: message.FieldSingleSelect, Required: true, Options: []message.Option{{Value: "12A", Title: "Window"}, {Value: "12C"}}},
			{ID: "q1", Key: "note", Kind: message.FieldText, MinLength: &min},
		}},
		IntentID: id, UnitID: "ask#1", State: store.QuestionOpen,
		CreatedAt: t0, DueAt: t0.Add(time.Hour), ExpiresAt: t0.Add(48 * time.Hour), Sweep: true,
	}
}

// questions: a thread's current question is one record; asking is
// idempotent for the same question and refused while another is open;
// every update is a compare-and-set on the version, and the record (form,
// answers with exact numbers, selections) reads back as written. An open
// question is on the sweeper's list for its expiry.
func questions(t *testing.T, s Store) {
	ctx := context.Background()
	th := message.Thread{Platform: message.Telegram, Account: "1", Chat: "42"}
	key := store.QuestionKey(th)
	if _, err := s.GetQuestion(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("before asking: %v", err)
	}
	q := askedQuestion("aaaa1111", th)
	got, created, err := s.AskQuestion(ctx, q)
	if err != nil || !created || got.Version != 1 {
		t.Fatalf("ask: %+v created=%v err=%v", got, created, err)
	}
	again, created, err := s.AskQuestion(ctx, q)
	if err != nil || created || again.ID != q.ID || again.Version != 1 {
		t.Fatalf("ask again: %+v created=%v err=%v", again, created, err)
	}
	other := askedQuestion("bbbb2222", th)
	var conflict *store.QuestionConflictError
	if _, _, err := s.AskQuestion(ctx, other); !errors.As(err, &conflict) || conflict.Current.ID != q.ID {
		t.Fatalf("asking over an open question: %v", err)
	}
	if due := dueKeys(t, s, t0.Add(2*time.Hour)); !contains(due, key) {
		t.Fatalf("open question not on the sweep list: %v", due)
	}

	read, err := s.GetQuestion(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(read.Form, q.Form) || read.Owner != "42" || read.State != store.QuestionOpen || !read.DueAt.Equal(q.DueAt) || !read.Sweep {
		t.Fatalf("read back %+v", read)
	}
	read.Selected = []string{"12A"}
	read.Answers = map[string]any{"seat": "12A", "count": json.Number("12345678901234567891")}
	read.Field = 1
	up, err := s.UpdateQuestion(ctx, read)
	if err != nil || up.Version != 2 {
		t.Fatalf("update: %+v %v", up, err)
	}
	if _, err := s.UpdateQuestion(ctx, read); !errors.As(err, &conflict) || conflict.Current.Version != 2 {
		t.Fatalf("a stale update: %v", err)
	}
	read, err = s.GetQuestion(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if read.Field != 1 || !reflect.DeepEqual(read.Selected, []string{"12A"}) || read.Answers["count"] != json.Number("12345678901234567891") {
		t.Fatalf("updated record reads back %+v", read)
	}
	read.State, read.ClosedBy, read.Sweep = store.QuestionAnswered, "evt#telegram#1#cb:9", false
	if _, err := s.UpdateQuestion(ctx, read); err != nil {
		t.Fatal(err)
	}
	if due := dueKeys(t, s, t0.Add(2*time.Hour)); contains(due, key) {
		t.Fatalf("a closed question is still on the sweep list")
	}
	// Closed: a newer question takes the thread.
	if got, created, err := s.AskQuestion(ctx, other); err != nil || !created || got.ID != other.ID {
		t.Fatalf("asking after the close: %+v %v %v", got, created, err)
	}
	if read, _ := s.GetQuestion(ctx, key); read.ID != other.ID || read.Version != 1 || read.Answers != nil {
		t.Fatalf("the thread's question is %+v", read)
	}
}

func dueKeys(t *testing.T, s Store, now time.Time) []string {
	t.Helper()
	entries, err := s.DueForSweep(context.Background(), now, 100)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range entries {
		keys = append(keys, e.Key)
	}
	return keys
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
