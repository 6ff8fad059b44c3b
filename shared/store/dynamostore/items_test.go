package dynamostore_test

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/triage"
)

// Items a release wrote must read back in every later release: the tables
// outlive the code (claims and intents for 8 days, questions and counters
// longer). testdata/items/<writer>/ holds the raw items, as DynamoDB stores
// them, of every kind and state the store writes, each written by the store
// of the release the folder names; TestStoredItemsRead puts each back into
// DynamoDB Local as it is and reads it through today's store, field by
// field.
//
// To capture today's items (a new folder, for a release that changes what
// it writes):
//
//	go test ./shared/store/dynamostore -run TestGenerateItems -items-out testdata/items/<writer>

var itemsOut = flag.String("items-out", "", "write every item kind as the store writes it, as JSON fixtures, into this folder")

// base is the fixtures' clock: every time in them derives from it.
var base = time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)

var fixtureThread = message.Thread{Platform: message.Slack, Account: "T0TEAM0001", Chat: "C0CHAN0001", Thread: "1700000000.000100"}

// itemCase is one stored item: how the store writes it, and what reading it
// back must give.
type itemCase struct {
	name string
	key  string
	// raw edits the item as written before it is captured (a layout an
	// earlier release wrote, which today's store no longer writes).
	raw   func(map[string]types.AttributeValue)
	write func(ctx context.Context, s *dynamostore.Store) error
	check func(t *testing.T, ctx context.Context, s *dynamostore.Store)
}

func ms(d time.Duration) time.Time { return base.Add(d) }

func claimSpec(owner string) store.ClaimSpec {
	return store.ClaimSpec{Owner: owner, Now: base, Lease: 30 * time.Second, TTL: store.DedupeTTL}
}

// wantClaim reads key's claim and compares every field with want.
func wantClaim(want store.Claim) func(*testing.T, context.Context, *dynamostore.Store) {
	return func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
		t.Helper()
		got, err := s.GetClaim(ctx, want.Key, base.Add(time.Second))
		if err != nil {
			t.Fatalf("GetClaim: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("claim read back\n got %+v\nwant %+v", got, want)
		}
	}
}

func wantSweep(t *testing.T, ctx context.Context, s *dynamostore.Store, key string, at time.Time) {
	t.Helper()
	entries, err := s.DueForSweep(ctx, at.Add(time.Hour), 100)
	if err != nil {
		t.Fatalf("DueForSweep: %v", err)
	}
	want := store.SweepEntry{Key: key, At: at}
	if !slices.Contains(entries, want) {
		t.Fatalf("sweep index holds %+v, want %+v among them", entries, want)
	}
}

func textUnits() []intent.Unit {
	return []intent.Unit{
		{ID: "b1#1", Content: message.Text("on it"), ReplyTo: "1700000000.000100", State: message.UnitSent, Attempt: 1,
			LeaseUntil: ms(40 * time.Second), Receipt: []string{"1700000001.000200"}, SentAt: ms(2 * time.Second), UpdatedAt: ms(2 * time.Second)},
		{ID: "b2#1", Content: message.Text("your flight moved to 8pm\ngate B12 👋"), State: message.UnitPending, Attempt: 2,
			FailureClass: message.FailRateLimit, FailureReason: "429 retry_after 30", NextAt: ms(35 * time.Second), UpdatedAt: ms(5 * time.Second)},
		{ID: "b3#1", Content: message.Text("held"), State: message.UnitUnknown, Attempt: 1, LeaseUntil: ms(45 * time.Second),
			FailureClass: message.FailUnknown, FailureReason: "timeout after send", Resent: true, Resends: 1, UpdatedAt: ms(6 * time.Second)},
		{ID: "b4#1", Content: message.Text("refused"), State: message.UnitFailed, Attempt: 3, FailureClass: message.FailPermission,
			FailureReason: "not_in_channel", UpdatedAt: ms(7 * time.Second)},
	}
}

func fixtureIntent(id string, units []intent.Unit) intent.Intent {
	return intent.Intent{
		ID: id, Origin: "evt#slack#T0TEAM0001#Ev0001", Thread: fixtureThread, Units: units,
		CreatedAt: base, ExpiresAt: base.Add(store.DedupeTTL).Truncate(time.Second), SweepAt: ms(2 * time.Minute),
	}
}

func wantIntent(want intent.Intent) func(*testing.T, context.Context, *dynamostore.Store) {
	return func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
		t.Helper()
		got, err := s.GetIntent(ctx, want.ID)
		if err != nil {
			t.Fatalf("GetIntent: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("intent read back\n got %+v\nwant %+v", got, want)
		}
	}
}

func fixtureQuestion() store.Question {
	minItems := 1
	return store.Question{
		Thread: fixtureThread, ID: "3f1c0a9b8d7e6f5a4b3c2d1e0f9a8b7c", Short: "q3f1c", Origin: "evt#slack#T0TEAM0001#Ev0002",
		Owner: "U0ADA00001",
		Form: message.Question{Message: "Where and how many?", Fields: []message.Field{
			{ID: "q0", Key: "seats", Kind: message.FieldMultiSelect, Title: "Seats", Required: true, MinItems: &minItems,
				Options: []message.Option{{Value: "window", Title: "Window"}, {Value: "aisle"}, {Value: "exit"}}},
			{ID: "q1", Key: "count", Kind: message.FieldInteger, Title: "How many"},
		}},
		IntentID: "3f1c0a9b8d7e6f5a4b3c2d1e0f9a8b7c", UnitID: "ask#1", State: store.QuestionOpen,
		CreatedAt: base, DueAt: ms(time.Hour), ExpiresAt: base.Add(store.DedupeTTL).Truncate(time.Second), Sweep: true,
	}
}

func wantQuestion(want store.Question) func(*testing.T, context.Context, *dynamostore.Store) {
	return func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
		t.Helper()
		got, err := s.GetQuestion(ctx, store.QuestionKey(want.Thread))
		if err != nil {
			t.Fatalf("GetQuestion: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("question read back\n got %+v\nwant %+v", got, want)
		}
	}
}

func fixtureAwait() store.Await {
	return store.Await{
		TurnID: "7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d", Thread: fixtureThread, EventKey: "evt#slack#T0TEAM0001#Ev0003",
		ClaimKey: "int#7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d", ClaimOwner: "turn-owner-1", Deadline: ms(15 * time.Minute),
		CreatedAt: base, ExpiresAt: base.Add(store.DedupeTTL).Truncate(time.Second),
	}
}

func wantAwait(want store.Await) func(*testing.T, context.Context, *dynamostore.Store) {
	return func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
		t.Helper()
		got, err := s.GetAwait(ctx, want.TurnID)
		if err != nil {
			t.Fatalf("GetAwait: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("await read back\n got %+v\nwant %+v", got, want)
		}
	}
}

func take(key, day, token string, at time.Time, forget ...string) triage.Take {
	return triage.Take{Key: key, At: at, Day: day, Forget: forget, Cooldown: time.Minute, Cap: 5, TTL: 48 * time.Hour, Token: token}
}

func wantCounter(want triage.Counter) func(*testing.T, context.Context, *dynamostore.Store) {
	return func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
		t.Helper()
		got, err := s.GetCounter(ctx, want.Key)
		if err != nil {
			t.Fatalf("GetCounter: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("counter read back\n got %+v\nwant %+v", got, want)
		}
	}
}

func itemCases() []itemCase {
	expires := base.Add(store.DedupeTTL).Truncate(time.Second)
	body := []byte(`{"version":"parley.inbound.v1","event":{"platform":"telegram","text":"héllo 👋"}}`)
	sweepSpec := claimSpec("owner-sweep")
	sweepSpec.Sweep = true
	v2 := fixtureIntent("0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e", append(textUnits(),
		intent.Unit{ID: "ask#1", Content: message.Content{Prompt: &message.Prompt{
			Text: "Where?", Options: []message.Choice{{Label: "Window", Data: "q3f1c:0:0", Selected: true}, {Label: "aisle", Data: "q3f1c:0:1"}},
			Multi: true, Select: "q3f1c:0", Actions: []message.Choice{{Label: "Done", Data: "q3f1c:done"}},
		}}, Parley: true, Replaces: "0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e#b1#1", State: message.UnitSent, Attempt: 1,
			Receipt: []string{"m1", "m2"}, SentAt: ms(3 * time.Second), Reported: message.StatusRead, UpdatedAt: ms(9 * time.Second)},
	))
	v2.ReplyContext = &message.ReplyContext{Token: "reply-token-0001", Until: ms(time.Minute)}
	v1 := fixtureIntent("1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f", textUnits())
	v1.SweepAt = time.Time{}
	committed := fixtureIntent("2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a", textUnits()[:2])
	committedKey := store.IntentKey(committed.ID)
	q := fixtureQuestion()
	selecting := q
	selecting.Selected = []string{"window", "exit"}
	selecting.Version = 2
	answered := selecting
	answered.Selected = nil
	answered.Field = 1
	answered.State = store.QuestionAnswered
	answered.Answers = map[string]any{"seats": []any{"window", "exit"}, "count": json.Number("12345678901234567")}
	answered.ClosedBy = "evt#slack#T0TEAM0001#Ev0009"
	answered.Sweep = false
	answered.Version = 3
	cancelled := q
	cancelled.Thread.Thread = "1700000000.000200"
	cancelled.State, cancelled.Reason, cancelled.ClosedBy, cancelled.Version = store.QuestionCancelled, "expired", "cancel:"+q.ID, 2
	aw := fixtureAwait()
	const triKey = "tri#telegram#7000000001#42"

	return []itemCase{
		{name: "claim-pending", key: "evt#events#cron#alert-1",
			write: func(ctx context.Context, s *dynamostore.Store) error {
				_, err := s.Claim(ctx, "evt#events#cron#alert-1", sweepSpec)
				return err
			},
			check: func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
				wantClaim(store.Claim{Key: "evt#events#cron#alert-1", State: store.ClaimPending, Owner: "owner-sweep",
					LeaseUntil: ms(30 * time.Second), ExpiresAt: expires, ClaimedAt: base, Attempts: 1})(t, ctx, s)
				wantSweep(t, ctx, s, "evt#events#cron#alert-1", ms(30*time.Second+store.SweepGrace))
			}},
		{name: "claim-released", key: "int#released",
			write: func(ctx context.Context, s *dynamostore.Store) error {
				if _, err := s.Claim(ctx, "int#released", sweepSpec); err != nil {
					return err
				}
				return s.Release(ctx, "int#released", "owner-sweep", store.ReleaseSpec{Until: ms(time.Minute), Note: "triage:taken"})
			},
			check: func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
				wantClaim(store.Claim{Key: "int#released", State: store.ClaimPending, Owner: "owner-sweep",
					LeaseUntil: ms(time.Minute), ExpiresAt: expires, ClaimedAt: base, Attempts: 1, Note: "triage:taken"})(t, ctx, s)
				wantSweep(t, ctx, s, "int#released", ms(time.Minute+store.SweepGrace))
			}},
		{name: "claim-reclaimed", key: "int#reclaimed",
			write: func(ctx context.Context, s *dynamostore.Store) error {
				if _, err := s.Claim(ctx, "int#reclaimed", claimSpec("owner-1")); err != nil {
					return err
				}
				if err := s.Release(ctx, "int#reclaimed", "owner-1", store.ReleaseSpec{}); err != nil {
					return err
				}
				_, err := s.Claim(ctx, "int#reclaimed", claimSpec("owner-2"))
				return err
			},
			check: wantClaim(store.Claim{Key: "int#reclaimed", State: store.ClaimPending, Owner: "owner-2",
				LeaseUntil: ms(30 * time.Second), ExpiresAt: expires, ClaimedAt: base, Attempts: 2})},
		{name: "claim-enqueued", key: "evt#telegram#7000000001#900000001",
			write: func(ctx context.Context, s *dynamostore.Store) error {
				spec := claimSpec("owner-ack")
				spec.State = store.ClaimEnqueued
				_, err := s.Claim(ctx, "evt#telegram#7000000001#900000001", spec)
				return err
			},
			check: wantClaim(store.Claim{Key: "evt#telegram#7000000001#900000001", State: store.ClaimEnqueued, Owner: "owner-ack",
				ExpiresAt: expires, Attempts: 1})},
		settled("claim-suppressed", store.ClaimSuppressed, "cooldown", expires),
		settled("claim-done", store.ClaimDone, "enqueued", expires),
		settled("claim-failed", store.ClaimFailed, "agent_failed", expires),
		{name: "claim-deferred", key: "evt#events#cron#deferred",
			write: func(ctx context.Context, s *dynamostore.Store) error {
				if _, err := s.Claim(ctx, "evt#events#cron#deferred", sweepSpec); err != nil {
					return err
				}
				return s.Defer(ctx, "evt#events#cron#deferred", "owner-sweep", body, ms(8*time.Hour), ms(time.Second), store.DedupeTTL)
			},
			check: func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
				wantClaim(store.Claim{Key: "evt#events#cron#deferred", State: store.ClaimDeferred, Owner: "owner-sweep",
					LeaseUntil: ms(30 * time.Second), ExpiresAt: ms(time.Second).Add(store.DedupeTTL), ClaimedAt: base, Attempts: 1,
					Reason: "quiet_hours", Body: body, DueAt: ms(8 * time.Hour)})(t, ctx, s)
				wantSweep(t, ctx, s, "evt#events#cron#deferred", ms(8*time.Hour))
			}},
		{name: "claim-undeferred", key: "evt#events#cron#undeferred",
			write: func(ctx context.Context, s *dynamostore.Store) error {
				if _, err := s.Claim(ctx, "evt#events#cron#undeferred", sweepSpec); err != nil {
					return err
				}
				if err := s.Defer(ctx, "evt#events#cron#undeferred", "owner-sweep", body, ms(8*time.Hour), ms(time.Second), store.DedupeTTL); err != nil {
					return err
				}
				return s.Undefer(ctx, "evt#events#cron#undeferred", ms(8*time.Hour))
			},
			check: wantClaim(store.Claim{Key: "evt#events#cron#undeferred", State: store.ClaimEnqueued, Owner: "owner-sweep",
				LeaseUntil: ms(30 * time.Second), ExpiresAt: ms(time.Second).Add(store.DedupeTTL), ClaimedAt: base, Attempts: 1,
				Reason: "quiet_hours", DueAt: ms(8 * time.Hour)})},
		{name: "intent-v1-text", key: store.IntentKey(v1.ID),
			// Release 88c5028^ wrote intents without a version
			// attribute, with text units only and none of the unit
			// attributes added since (ck, q, o, edit, rep, rc): today's
			// text-only intent without its "v", each unit's text back
			// in the unit (version 3 moved it to "tx") and its id in
			// "id", is that item.
			raw: func(item map[string]types.AttributeValue) {
				delete(item, "v")
				item["id"] = &types.AttributeValueMemberS{Value: strings.TrimPrefix(item["pk"].(*types.AttributeValueMemberS).Value, "int#")}
				z, ok := item["tx"].(*types.AttributeValueMemberB)
				if !ok {
					return
				}
				delete(item, "tx")
				raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(z.Value)))
				var texts []string
				if err != nil || json.Unmarshal(raw, &texts) != nil {
					panic("fixture: tx does not decode")
				}
				for i, u := range item["units"].(*types.AttributeValueMemberL).Value {
					u.(*types.AttributeValueMemberM).Value["text"] = &types.AttributeValueMemberS{Value: texts[i]}
				}
			},
			write: func(ctx context.Context, s *dynamostore.Store) error {
				_, _, err := s.CreateIntent(ctx, v1)
				return err
			},
			check: wantIntent(v1)},
		{name: "intent-v2-prompt-reply", key: store.IntentKey(v2.ID),
			write: func(ctx context.Context, s *dynamostore.Store) error {
				_, _, err := s.CreateIntent(ctx, v2)
				return err
			},
			check: func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
				wantIntent(v2)(t, ctx, s)
				wantSweep(t, ctx, s, store.IntentKey(v2.ID), v2.SweepAt)
			}},
		{name: "intent-transitioned", key: store.IntentKey("3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b"),
			write: func(ctx context.Context, s *dynamostore.Store) error {
				in := fixtureIntent("3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b", []intent.Unit{
					{ID: "b1#1", Content: message.Text("one"), State: message.UnitPending},
					{ID: "b2#1", Content: message.Text("two"), State: message.UnitPending},
				})
				if _, _, err := s.CreateIntent(ctx, in); err != nil {
					return err
				}
				in, err := s.Apply(ctx, in.ID, intent.Lease(in.Units[0], 0, ms(time.Second), ms(31*time.Second)))
				if err != nil {
					return err
				}
				in, err = s.Apply(ctx, in.ID, intent.MarkSent(in.Units[0], 0, ms(2*time.Second), message.Receipt{MessageIDs: []string{"77"}}))
				if err != nil {
					return err
				}
				in, err = s.Apply(ctx, in.ID, intent.Lease(in.Units[1], 1, ms(3*time.Second), ms(33*time.Second)))
				if err != nil {
					return err
				}
				_, err = s.Apply(ctx, in.ID, in.Closing(intent.MarkUnknown(in.Units[1], 1, ms(4*time.Second), "timeout after send", false)))
				return err
			},
			check: func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
				want := fixtureIntent("3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b", []intent.Unit{
					{ID: "b1#1", Content: message.Text("one"), State: message.UnitSent, Attempt: 1,
						Receipt: []string{"77"}, SentAt: ms(2 * time.Second), UpdatedAt: ms(2 * time.Second)},
					{ID: "b2#1", Content: message.Text("two"), State: message.UnitUnknown, Attempt: 1,
						FailureClass: message.FailUnknown, FailureReason: "timeout after send", UpdatedAt: ms(4 * time.Second)},
				})
				want.SweepAt = time.Time{}
				wantIntent(want)(t, ctx, s)
			}},
		{name: "intent-committed-on-claim", key: committedKey,
			write: func(ctx context.Context, s *dynamostore.Store) error {
				spec := claimSpec("turn-owner")
				spec.Sweep = true
				if _, err := s.Claim(ctx, committedKey, spec); err != nil {
					return err
				}
				_, _, err := s.CommitIntent(ctx, committed, "turn-owner", "enqueued", ms(time.Second))
				return err
			},
			check: func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
				want := committed
				// The claim's place on the sweeper's list stands.
				want.SweepAt = ms(30*time.Second + store.SweepGrace)
				wantIntent(want)(t, ctx, s)
				// A committed claim is its intent: the intent's thread and
				// origin say whose turn it was (ClaimSpec.Thread, Origin).
				// Since intent version 3 the commit drops the settled
				// claim's owner and lease, which the releases before kept.
				claim := store.Claim{Key: committedKey, State: store.ClaimDone, ExpiresAt: committed.ExpiresAt, ClaimedAt: base, Attempts: 1,
					Reason: "enqueued", Thread: committed.Thread, Origin: committed.Origin}
				if got, err := s.GetClaim(ctx, committedKey, base.Add(time.Second)); err == nil && got.Owner != "" {
					claim.Owner, claim.LeaseUntil = "turn-owner", ms(30*time.Second)
				}
				wantClaim(claim)(t, ctx, s)
			}},
		{name: "question-open", key: store.QuestionKey(q.Thread),
			write: func(ctx context.Context, s *dynamostore.Store) error {
				_, _, err := s.AskQuestion(ctx, q)
				return err
			},
			check: func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
				want := q
				want.Version = 1
				wantQuestion(want)(t, ctx, s)
				wantSweep(t, ctx, s, store.QuestionKey(q.Thread), q.DueAt)
			}},
		{name: "question-multi-select", key: store.QuestionKey(q.Thread),
			write: func(ctx context.Context, s *dynamostore.Store) error {
				cur, _, err := s.AskQuestion(ctx, q)
				if err != nil {
					return err
				}
				cur.Selected = []string{"window"}
				if cur, err = s.UpdateQuestion(ctx, cur); err != nil {
					return err
				}
				cur.Selected = append(cur.Selected, "exit")
				_, err = s.UpdateQuestion(ctx, cur)
				return err
			},
			check: func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
				want := selecting
				want.Version = 3
				wantQuestion(want)(t, ctx, s)
			}},
		{name: "question-answered", key: store.QuestionKey(q.Thread),
			write: func(ctx context.Context, s *dynamostore.Store) error {
				cur, _, err := s.AskQuestion(ctx, q)
				if err != nil {
					return err
				}
				sel := selecting
				sel.Version = cur.Version
				if cur, err = s.UpdateQuestion(ctx, sel); err != nil {
					return err
				}
				a := answered
				a.Version = cur.Version
				_, err = s.UpdateQuestion(ctx, a)
				return err
			},
			check: wantQuestion(answered)},
		{name: "question-cancelled", key: store.QuestionKey(cancelled.Thread),
			write: func(ctx context.Context, s *dynamostore.Store) error {
				open := cancelled
				open.State, open.Reason, open.ClosedBy = store.QuestionOpen, "", ""
				cur, _, err := s.AskQuestion(ctx, open)
				if err != nil {
					return err
				}
				c := cancelled
				c.Version = cur.Version
				_, err = s.UpdateQuestion(ctx, c)
				return err
			},
			check: wantQuestion(cancelled)},
		{name: "await-open", key: store.AwaitKey(aw.TurnID),
			write: func(ctx context.Context, s *dynamostore.Store) error {
				if _, _, err := s.OpenAwait(ctx, aw); err != nil {
					return err
				}
				return s.SetAwaitHandle(ctx, aw.TurnID, "AQEB-handle==")
			},
			check: func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
				want := aw
				want.State, want.Handle, want.Posts = store.AwaitOpen, "AQEB-handle==", map[string]int{}
				wantAwait(want)(t, ctx, s)
			}},
		{name: "await-posts", key: store.AwaitKey(aw.TurnID),
			write: func(ctx context.Context, s *dynamostore.Store) error {
				if _, _, err := s.OpenAwait(ctx, aw); err != nil {
					return err
				}
				if _, err := s.AddAwaitPost(ctx, aw.TurnID, "msg_p1", 2, 0, ms(time.Second)); err != nil {
					return err
				}
				_, err := s.AddAwaitPost(ctx, aw.TurnID, "msg_p2", 3, 2, ms(2*time.Second))
				return err
			},
			check: func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
				want := aw
				want.State, want.Posts, want.Bubbles = store.AwaitOpen, map[string]int{"msg_p1": 2, "msg_p2": 3}, 5
				wantAwait(want)(t, ctx, s)
			}},
		{name: "await-posted", key: store.AwaitKey(aw.TurnID),
			write: func(ctx context.Context, s *dynamostore.Store) error {
				if _, _, err := s.OpenAwait(ctx, aw); err != nil {
					return err
				}
				_, err := s.FinishAwait(ctx, aw.TurnID, store.AwaitPost{ID: "msg_final", ContentType: "application/json",
					Body: []byte(`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"done"}]}`), At: ms(time.Minute), Replaces: "x#b1#1"}, ms(time.Minute))
				return err
			},
			check: func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
				want := aw
				want.State, want.Posts = store.AwaitFinal, map[string]int{}
				want.Post = store.AwaitPost{ID: "msg_final", ContentType: "application/json",
					Body: []byte(`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"done"}]}`), At: ms(time.Minute), Replaces: "x#b1#1"}
				wantAwait(want)(t, ctx, s)
			}},
		{name: "await-expired", key: store.AwaitKey(aw.TurnID),
			write: func(ctx context.Context, s *dynamostore.Store) error {
				if _, _, err := s.OpenAwait(ctx, aw); err != nil {
					return err
				}
				_, err := s.ExpireAwait(ctx, aw.TurnID)
				return err
			},
			check: func(t *testing.T, ctx context.Context, s *dynamostore.Store) {
				want := aw
				want.State, want.Posts = store.AwaitExpired, map[string]int{}
				wantAwait(want)(t, ctx, s)
			}},
		{name: "triage-counters", key: triKey,
			write: func(ctx context.Context, s *dynamostore.Store) error {
				if _, err := s.Take(ctx, take(triKey, "2026-11-28", "tok-1", ms(-20*time.Hour))); err != nil {
					return err
				}
				if _, err := s.Take(ctx, take(triKey, "2026-11-29", "tok-2", base)); err != nil {
					return err
				}
				_, err := s.Take(ctx, take(triKey, "2026-11-29", "tok-3", ms(2*time.Minute), "2026-11-27"))
				return err
			},
			check: wantCounter(triage.Counter{Key: triKey, Days: map[string]int{"2026-11-28": 1, "2026-11-29": 2},
				Last: ms(2 * time.Minute), Token: "tok-3", ExpiresAt: ms(2*time.Minute + 48*time.Hour)})},
		{name: "triage-given-back", key: triKey,
			write: func(ctx context.Context, s *dynamostore.Store) error {
				if _, err := s.Take(ctx, take(triKey, "2026-11-29", "tok-1", base)); err != nil {
					return err
				}
				taken, err := s.Take(ctx, take(triKey, "2026-11-29", "tok-2", ms(2*time.Minute)))
				if err != nil {
					return err
				}
				return s.GiveBack(ctx, taken)
			},
			check: wantCounter(triage.Counter{Key: triKey, Days: map[string]int{"2026-11-29": 1},
				Last: base, Token: "tok-1", ExpiresAt: ms(2*time.Minute + 48*time.Hour)})},
	}
}

// settled is a claim settled by Settle in state, for reason.
func settled(name string, state store.ClaimState, reason string, expires time.Time) itemCase {
	key := "int#" + name
	return itemCase{name: name, key: key,
		write: func(ctx context.Context, s *dynamostore.Store) error {
			spec := claimSpec("owner-settle")
			spec.Sweep = true
			if _, err := s.Claim(ctx, key, spec); err != nil {
				return err
			}
			return s.Settle(ctx, key, "owner-settle", state, reason, base, store.DedupeTTL)
		},
		check: wantClaim(store.Claim{Key: key, State: state, Owner: "owner-settle", LeaseUntil: ms(30 * time.Second),
			ExpiresAt: expires, ClaimedAt: base, Attempts: 1, Reason: reason})}
}

// TestGenerateItems writes every item case with the store and saves the raw
// item DynamoDB holds for it into -items-out. It runs only when asked.
func TestGenerateItems(t *testing.T) {
	if *itemsOut == "" {
		t.Skip("-items-out not set: nothing to generate")
	}
	if err := os.MkdirAll(*itemsOut, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range itemCases() {
		t.Run(c.name, func(t *testing.T) {
			env := emulatortest.New(t)
			s := dynamostore.New(env.DynamoDB, env.Resources.Table)
			ctx := t.Context()
			if err := c.write(ctx, s); err != nil {
				t.Fatalf("write: %v", err)
			}
			item := rawItem(t, env.DynamoDB, env.Resources.Table, c.key)
			if c.raw != nil {
				c.raw(item)
			}
			j, err := itemJSON(item)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.MarshalIndent(j, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(*itemsOut, c.name+".json"), append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func rawItem(t *testing.T, db *dynamodb.Client, table, key string) map[string]types.AttributeValue {
	t.Helper()
	out, err := db.GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}},
	})
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	if len(out.Item) == 0 {
		t.Fatalf("no item at %s", key)
	}
	return out.Item
}

// TestStoredItemsRead puts every fixture item, as an earlier release wrote
// it, into DynamoDB Local unchanged and reads it through today's store:
// every field must come back as that release wrote it.
func TestStoredItemsRead(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob("testdata/items/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixture folders under testdata/items: %v", err)
	}
	cases := map[string]itemCase{}
	for _, c := range itemCases() {
		cases[c.name] = c
	}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(files) != len(cases) {
			t.Errorf("%s holds %d items, want one per case (%d)", dir, len(files), len(cases))
		}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".json")
			t.Run(filepath.Base(dir)+"/"+name, func(t *testing.T) {
				c, ok := cases[name]
				if !ok {
					t.Fatalf("no case reads %s", f)
				}
				raw, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				item, err := itemFromJSON(raw)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				// Each item in a table of its own: the sweep index
				// checks see no other case's entries.
				env := emulatortest.New(t)
				if _, err := env.DynamoDB.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(env.Resources.Table), Item: item}); err != nil {
					t.Fatalf("put %s: %v", f, err)
				}
				c.check(t, t.Context(), dynamostore.New(env.DynamoDB, env.Resources.Table))
			})
		}
	}
}

// TestPreviousLayoutStillDelivers: an intent the previous release committed
// (intent version 2: every unit's empty fields written, its text in the
// unit) is leased, sent and settled by today's store, and reads back as
// sent, its text whole, off the sweeper's list.
func TestPreviousLayoutStillDelivers(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/items/cfe3790/intent-committed-on-claim.json")
	if err != nil {
		t.Fatal(err)
	}
	item, err := itemFromJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	env := emulatortest.New(t)
	ctx := t.Context()
	if _, err := env.DynamoDB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Resources.Table), Item: item}); err != nil {
		t.Fatal(err)
	}
	s := dynamostore.New(env.DynamoDB, env.Resources.Table)
	id := strings.TrimPrefix(item["pk"].(*types.AttributeValueMemberS).Value, "int#")
	in, err := s.GetIntent(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// Unit b2#1 waits for its retry after a 429 (attempt 2): past it, it
	// goes, and its receipt ends the intent.
	u := in.Units[1]
	if u.State != message.UnitPending || u.Attempt != 2 || u.Content.Text == "" {
		t.Fatalf("fixture's second unit = %+v, want pending at attempt 2 with its text", u)
	}
	at := u.NextAt.Add(time.Second)
	in, err = s.Apply(ctx, id, in.Closing(intent.Lease(u, 1, at, at.Add(time.Minute))))
	if err != nil {
		t.Fatalf("lease: %v", err)
	}
	if in.Units[1].State != message.UnitSending || in.Units[1].Content != u.Content {
		t.Fatalf("leased unit = %+v", in.Units[1])
	}
	if _, err := s.Apply(ctx, id, in.Closing(intent.MarkSent(in.Units[1], 1, at, message.Receipt{MessageIDs: []string{"1700000009.000900"}}))); err != nil {
		t.Fatalf("receipt: %v", err)
	}
	got, err := s.GetIntent(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	sent := got.Units[1]
	if sent.State != message.UnitSent || sent.Attempt != 3 || !slices.Equal(sent.Receipt, []string{"1700000009.000900"}) ||
		sent.Content != u.Content || sent.FailureClass != "" || !sent.NextAt.IsZero() || !got.SweepAt.IsZero() {
		t.Fatalf("after its receipt the unit = %+v, sweep at %v; want sent at attempt 3, its failure and retry cleared, off the list", sent, got.SweepAt)
	}
	if got.Units[0].State != message.UnitSent || !slices.Equal(got.Units[0].Receipt, in.Units[0].Receipt) {
		t.Fatalf("first unit = %+v, want it as the previous release left it", got.Units[0])
	}
	if due, err := s.DueForSweep(ctx, at.Add(24*time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("sweep index after the last receipt = %v, %v; want empty", due, err)
	}
}

// TestPreviousReaderRefusesVersion3: the previous release decoded an
// intent's "v" into an int. A version 3 intent, whose texts it would not
// see, must fail that decode (its function retries the record, and a
// function of this release takes it), never read as units without text.
func TestPreviousReaderRefusesVersion3(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/items/intent-v3/intent-committed-on-claim.json")
	if err != nil {
		t.Fatal(err)
	}
	item, err := itemFromJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var previous struct {
		Version int `dynamodbav:"v,omitempty"`
		Units   []struct {
			Text string `dynamodbav:"text"`
		} `dynamodbav:"units"`
	}
	if err := attributevalue.UnmarshalMap(item, &previous); err == nil {
		t.Fatalf("the previous release's decoder read a version 3 intent: %+v", previous)
	}
}

// TestIntentSequenceReadsBack: an intent's place in its event's reply (a
// sequential post's, or the final after posts) is kept as "seq" and read
// back; a turn's own intent (0) writes no attribute, so its item is what
// it was before the field (earlier releases' readers, and ADR 0019's
// write units).
func TestIntentSequenceReadsBack(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	s := dynamostore.New(env.DynamoDB, env.Resources.Table)
	for _, seq := range []int{0, 3} {
		in := fixtureIntent(fmt.Sprintf("5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0%d", seq), textUnits()[:1])
		in.Sequence = seq
		if _, _, err := s.CreateIntent(t.Context(), in); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetIntent(t.Context(), in.ID)
		if err != nil || got.Sequence != seq {
			t.Fatalf("intent written with Sequence %d read back %d, %v", seq, got.Sequence, err)
		}
		if _, written := rawItem(t, env.DynamoDB, env.Resources.Table, store.IntentKey(in.ID))["seq"]; written != (seq != 0) {
			t.Fatalf("Sequence %d: the item has seq: %v", seq, written)
		}
	}
}
