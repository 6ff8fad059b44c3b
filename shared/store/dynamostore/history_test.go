package dynamostore_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// TestHistoryRecord: a transcript is written only over the version read
// (a stale writer is refused, and the record is unchanged), reads back
// entry for entry, expires in code at its TTL, and is gone once erased,
// after which a writer that read it before the erase is refused too.
func TestHistoryRecord(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	s := dynamostore.New(env.DynamoDB, env.Resources.Table)
	ctx := t.Context()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	const thread = "telegram:7000000001:42"
	h, err := s.GetHistory(ctx, thread, now)
	if err != nil || h.Version != 0 || len(h.Entries) != 0 {
		t.Fatalf("empty thread: %+v, %v", h, err)
	}
	h.Entries = []history.Entry{{ID: "evt#telegram#7000000001#1", Role: history.RolePerson, Kind: history.KindMessage, Text: "hi <b> & \u2028",
		Sender: &message.Sender{ID: "42", Name: "Ada"}, MessageIDs: []string{"17"}, Time: now}}
	h.Open = []string{"i1"}
	if err := s.PutHistory(ctx, h, now, time.Hour); err != nil {
		t.Fatal(err)
	}
	stale := h // a second writer that read version 0 too
	stale.Entries = nil
	var conflict *store.HistoryConflictError
	if err := s.PutHistory(ctx, stale, now, time.Hour); !errors.As(err, &conflict) || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a stale write: %v, want a conflict", err)
	}
	got, err := s.GetHistory(ctx, thread, now)
	if err != nil || got.Version != 1 || !reflect.DeepEqual(got.Entries, h.Entries) || !reflect.DeepEqual(got.Open, h.Open) {
		t.Fatalf("read back %+v, %v; want %+v at version 1", got, err, h)
	}
	if late, _ := s.GetHistory(ctx, thread, now.Add(2*time.Hour)); late.Version != 0 || late.Entries != nil {
		t.Fatalf("an expired record read as %+v", late)
	}
	if err := s.EraseHistory(ctx, thread); err != nil {
		t.Fatal(err)
	}
	if err := s.EraseHistory(ctx, thread); err != nil {
		t.Fatalf("erasing an erased thread: %v", err)
	}
	if err := s.PutHistory(ctx, got, now, time.Hour); !errors.As(err, &conflict) {
		t.Fatalf("a write over the erased record's version: %v, want a conflict", err)
	}
	if gone, _ := s.GetHistory(ctx, thread, now); gone.Version != 0 || gone.Entries != nil {
		t.Fatalf("erased record read as %+v", gone)
	}
}

// TestHistoryRecordBoundedUnder400KB: a transcript at the largest bound a
// deployment may set, in characters that grow most when encoded, makes an
// item DynamoDB takes (under 400 KB).
func TestHistoryRecordBoundedUnder400KB(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	s := dynamostore.New(env.DynamoDB, env.Resources.Table)
	now := time.Now()
	c := history.Config{Entries: history.MaxEntries, Bytes: history.MaxBytes}
	var tr []history.Entry
	for i := range 40 {
		tr = c.Merge(tr, history.Entry{ID: strings.Repeat("k", 100) + string(rune('a'+i%26)) + time.Duration(i).String(), Role: history.RolePerson,
			Kind: history.KindMessage, Text: strings.Repeat("\u0001\"<👍", 3000), Time: now.Add(time.Duration(i))})
	}
	if history.Size(tr) > c.Bytes {
		t.Fatalf("transcript %d bytes over its bound", history.Size(tr))
	}
	h := store.History{ThreadKey: "slack:T1:C1:" + strings.Repeat("9", 100), Entries: tr}
	for i := range store.MaxOpen {
		h.Open = append(h.Open, strings.Repeat(string(rune('0'+i)), 32))
	}
	if err := s.PutHistory(t.Context(), h, now, time.Hour); err != nil {
		t.Fatalf("the largest transcript: %v", err)
	}
}

// TestGetIntentsReadsSeveralInOneCall: intents are read by id, a missing
// id is left out, and a claim that holds no intent yet is no intent.
func TestGetIntentsReadsSeveralInOneCall(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	s := dynamostore.New(env.DynamoDB, env.Resources.Table)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	th := message.Thread{Platform: message.Telegram, Account: "1", Chat: "2"}
	for _, id := range []string{"a1", "b2"} {
		in := intent.Intent{ID: id, Origin: "evt#" + id, Thread: th, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
			Units: []intent.Unit{{ID: "b#1", Content: message.Text("hello " + id), State: message.UnitPending}}}
		if _, _, err := s.CreateIntent(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Claim(ctx, store.IntentKey("c3"), store.ClaimSpec{Owner: "o", Now: now, Lease: time.Minute, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetIntents(ctx, []string{"a1", "b2", "c3", "zz", "a1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["a1"].Units[0].Content.Text != "hello a1" || got["b2"].ID != "b2" {
		t.Fatalf("got %+v", got)
	}
	raw, err := env.DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Resources.Table),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: store.IntentKey("c3")}}})
	if err != nil || raw.Item == nil {
		t.Fatalf("the claim: %v", err)
	}
}

// TestReactionUnitsReadBack: a reaction unit (the agent's, and the status
// lifecycle's) is stored and read back as it was written.
func TestReactionUnitsReadBack(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	s := dynamostore.New(env.DynamoDB, env.Resources.Table)
	now := time.Now().UTC().Truncate(time.Millisecond)
	in := intent.Intent{ID: "r1", Origin: "evt#r1", Thread: message.Thread{Platform: message.Slack, Account: "T1", Chat: "D1"},
		CreatedAt: now, ExpiresAt: now.Add(time.Hour), Units: []intent.Unit{
			{ID: "react#1", Content: message.Content{React: &message.React{Emoji: "👍"}}, ReplyTo: "1.2", State: message.UnitPending},
			{ID: "b1#1", Content: message.Text("hi"), State: message.UnitPending},
			{ID: "status#1", Content: message.Content{React: &message.React{Emoji: "✅", Status: true, Failed: "❌", Received: "👀"}}, ReplyTo: "1.2", State: message.UnitPending},
		}}
	if _, _, err := s.CreateIntent(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetIntent(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Units, in.Units) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got.Units, in.Units)
	}
}
