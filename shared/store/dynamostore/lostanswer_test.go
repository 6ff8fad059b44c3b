package dynamostore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
	"github.com/parleyhq/parley/shared/triage"
)

// lostAnswerCase is one conditional write of the store: setup brings the
// item to where the write applies (through a store without faults), and
// write makes it through a store whose first applied answer is lost, so the
// SDK sends it again and the second attempt meets the first one's write.
type lostAnswerCase struct {
	name string
	// op is the DynamoDB operation the write makes.
	op    string
	setup func(ctx context.Context, s *dynamostore.Store) error
	// write returns an error when the store reported anything but the
	// write's own success.
	write func(ctx context.Context, s *dynamostore.Store) error
}

func lostAnswerCases() []lostAnswerCase {
	const key = "evt#events#cron#lost"
	claim := func(ctx context.Context, s *dynamostore.Store) error {
		spec := claimSpec("owner-1")
		spec.Sweep = true
		_, err := s.Claim(ctx, key, spec)
		return err
	}
	in := fixtureIntent("4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c", []intent.Unit{
		{ID: "b1#1", Content: message.Text("one"), State: message.UnitPending},
		{ID: "b2#1", Content: message.Text("two"), State: message.UnitPending},
	})
	create := func(ctx context.Context, s *dynamostore.Store) error {
		_, _, err := s.CreateIntent(ctx, in)
		return err
	}
	lease := func(ctx context.Context, s *dynamostore.Store) (intent.Intent, error) {
		if err := create(ctx, s); err != nil {
			return intent.Intent{}, err
		}
		return s.Apply(ctx, in.ID, intent.Lease(in.Units[0], 0, ms(time.Second), ms(31*time.Second)))
	}
	// apply makes transition t of the intent the setup left, and checks
	// the unit it moved ends where t puts it.
	apply := func(setup func(context.Context, *dynamostore.Store) (intent.Intent, error), t func(intent.Intent) intent.Transition) (func(context.Context, *dynamostore.Store) error, func(context.Context, *dynamostore.Store) error) {
		var tr intent.Transition
		return func(ctx context.Context, s *dynamostore.Store) error {
				cur, err := setup(ctx, s)
				tr = t(cur)
				return err
			}, func(ctx context.Context, s *dynamostore.Store) error {
				got, err := s.Apply(ctx, in.ID, tr)
				if err != nil {
					return err
				}
				if u := got.Units[tr.Unit]; u.State != tr.To || u.Attempt != tr.NextAttempt {
					return errors.New("the unit is " + string(u.State) + ", not where the transition put it")
				}
				return nil
			}
	}
	leaseSetup, leaseWrite := apply(func(ctx context.Context, s *dynamostore.Store) (intent.Intent, error) {
		return in, create(ctx, s)
	}, func(cur intent.Intent) intent.Transition {
		return intent.Lease(cur.Units[0], 0, ms(time.Second), ms(31*time.Second))
	})
	sentSetup, sentWrite := apply(lease, func(cur intent.Intent) intent.Transition {
		return intent.MarkSent(cur.Units[0], 0, ms(2*time.Second), message.Receipt{MessageIDs: []string{"77"}})
	})
	retrySetup, retryWrite := apply(lease, func(cur intent.Intent) intent.Transition {
		return intent.MarkRetryable(cur.Units[0], 0, ms(2*time.Second), ms(time.Minute), message.FailRateLimit, "429")
	})
	unknownSetup, unknownWrite := apply(lease, func(cur intent.Intent) intent.Transition {
		return intent.MarkUnknown(cur.Units[0], 0, ms(2*time.Second), "timeout after send", false)
	})
	failSetup, failWrite := apply(lease, func(cur intent.Intent) intent.Transition {
		return cur.Closing(intent.MarkFailed(cur.Units[0], 0, ms(2*time.Second), message.FailPermission, "blocked"))
	})
	resendSetup, resendWrite := apply(func(ctx context.Context, s *dynamostore.Store) (intent.Intent, error) {
		cur, err := lease(ctx, s)
		if err != nil {
			return cur, err
		}
		return s.Apply(ctx, in.ID, intent.MarkUnknown(cur.Units[0], 0, ms(2*time.Second), "timeout after send", false))
	}, func(cur intent.Intent) intent.Transition {
		return intent.Resend(cur.Units[0], 0, ms(3*time.Second), ms(33*time.Second))
	})
	q := fixtureQuestion()
	ask := func(ctx context.Context, s *dynamostore.Store) error {
		_, _, err := s.AskQuestion(ctx, q)
		return err
	}
	aw := fixtureAwait()
	open := func(ctx context.Context, s *dynamostore.Store) error {
		_, _, err := s.OpenAwait(ctx, aw)
		return err
	}
	const triKey = "tri#telegram#7000000001#lost"
	var taken triage.Taken
	takeOnce := func(ctx context.Context, s *dynamostore.Store) error {
		_, err := s.Take(ctx, take(triKey, "2026-11-29", "tok-1", base))
		return err
	}
	none := func(context.Context, *dynamostore.Store) error { return nil }

	return []lostAnswerCase{
		{name: "Claim", op: "UpdateItem", setup: none, write: claim},
		{name: "ClaimSettledAtOnce", op: "PutItem", setup: none, write: func(ctx context.Context, s *dynamostore.Store) error {
			spec := claimSpec("owner-1")
			spec.State = store.ClaimEnqueued
			_, err := s.Claim(ctx, key, spec)
			return err
		}},
		{name: "ClaimAgainAfterRelease", op: "UpdateItem", setup: func(ctx context.Context, s *dynamostore.Store) error {
			if err := claim(ctx, s); err != nil {
				return err
			}
			return s.Release(ctx, key, "owner-1", store.ReleaseSpec{})
		}, write: func(ctx context.Context, s *dynamostore.Store) error {
			c, err := s.Claim(ctx, key, claimSpec("owner-2"))
			if err == nil && c.Attempts != 2 {
				return errors.New("the claim counts its attempts twice")
			}
			return err
		}},
		{name: "Settle", op: "UpdateItem", setup: claim, write: func(ctx context.Context, s *dynamostore.Store) error {
			return s.Settle(ctx, key, "owner-1", store.ClaimDone, "enqueued", base, store.DedupeTTL)
		}},
		{name: "Release", op: "UpdateItem", setup: claim, write: func(ctx context.Context, s *dynamostore.Store) error {
			return s.Release(ctx, key, "owner-1", store.ReleaseSpec{Until: ms(time.Minute), Note: "n"})
		}},
		{name: "Forget", op: "DeleteItem", setup: func(ctx context.Context, s *dynamostore.Store) error {
			spec := claimSpec("owner-1")
			spec.State = store.ClaimEnqueued
			_, err := s.Claim(ctx, key, spec)
			return err
		}, write: func(ctx context.Context, s *dynamostore.Store) error {
			return s.Forget(ctx, key, "owner-1")
		}},
		{name: "Defer", op: "UpdateItem", setup: claim, write: func(ctx context.Context, s *dynamostore.Store) error {
			return s.Defer(ctx, key, "owner-1", []byte("body"), ms(time.Hour), base, store.DedupeTTL)
		}},
		{name: "Undefer", op: "UpdateItem", setup: func(ctx context.Context, s *dynamostore.Store) error {
			if err := claim(ctx, s); err != nil {
				return err
			}
			return s.Defer(ctx, key, "owner-1", []byte("body"), ms(time.Hour), base, store.DedupeTTL)
		}, write: func(ctx context.Context, s *dynamostore.Store) error {
			return s.Undefer(ctx, key, ms(time.Hour))
		}},
		{name: "CreateIntent", op: "PutItem", setup: none, write: func(ctx context.Context, s *dynamostore.Store) error {
			if _, created, err := s.CreateIntent(ctx, in); err != nil || !created {
				return errors.Join(err, errIf(!created, "its own write reads as an earlier attempt's"))
			}
			return nil
		}},
		{name: "CommitIntent", op: "UpdateItem", setup: func(ctx context.Context, s *dynamostore.Store) error {
			_, err := s.Claim(ctx, store.IntentKey(in.ID), claimSpec("turn-owner"))
			return err
		}, write: func(ctx context.Context, s *dynamostore.Store) error {
			if _, created, err := s.CommitIntent(ctx, in, "turn-owner", "enqueued", base); err != nil || !created {
				return errors.Join(err, errIf(!created, "its own commit reads as an earlier attempt's"))
			}
			return nil
		}},
		{name: "ApplyLease", op: "UpdateItem", setup: leaseSetup, write: leaseWrite},
		{name: "ApplyMarkSent", op: "UpdateItem", setup: sentSetup, write: sentWrite},
		{name: "ApplyMarkRetryable", op: "UpdateItem", setup: retrySetup, write: retryWrite},
		{name: "ApplyMarkUnknown", op: "UpdateItem", setup: unknownSetup, write: unknownWrite},
		{name: "ApplyMarkFailedClosing", op: "UpdateItem", setup: failSetup, write: failWrite},
		{name: "ApplyResend", op: "UpdateItem", setup: resendSetup, write: resendWrite},
		{name: "AskQuestion", op: "PutItem", setup: none, write: func(ctx context.Context, s *dynamostore.Store) error {
			if _, created, err := s.AskQuestion(ctx, q); err != nil || !created {
				return errors.Join(err, errIf(!created, "its own question reads as an earlier attempt's"))
			}
			return nil
		}},
		{name: "UpdateQuestionToggle", op: "PutItem", setup: ask, write: func(ctx context.Context, s *dynamostore.Store) error {
			cur := q
			cur.Version = 1
			cur.Selected = []string{"window"}
			got, err := s.UpdateQuestion(ctx, cur)
			if err == nil && (got.Version != 2 || !reflect.DeepEqual(got.Selected, cur.Selected)) {
				return errors.New("the toggle did not land once")
			}
			return err
		}},
		{name: "OpenAwait", op: "PutItem", setup: none, write: func(ctx context.Context, s *dynamostore.Store) error {
			if _, created, err := s.OpenAwait(ctx, aw); err != nil || !created {
				return errors.Join(err, errIf(!created, "its own await reads as an earlier attempt's"))
			}
			return nil
		}},
		{name: "SetAwaitHandle", op: "UpdateItem", setup: open, write: func(ctx context.Context, s *dynamostore.Store) error {
			return s.SetAwaitHandle(ctx, aw.TurnID, "h")
		}},
		{name: "FinishAwait", op: "UpdateItem", setup: open, write: func(ctx context.Context, s *dynamostore.Store) error {
			_, err := s.FinishAwait(ctx, aw.TurnID, store.AwaitPost{ID: "p", ContentType: "text/plain", Body: []byte("x"), At: base}, base)
			return err
		}},
		{name: "AddAwaitPost", op: "UpdateItem", setup: open, write: func(ctx context.Context, s *dynamostore.Store) error {
			got, err := s.AddAwaitPost(ctx, aw.TurnID, "p1", 2, 0, base)
			if err == nil && got.Bubbles != 2 {
				return errors.New("the post counted twice")
			}
			return err
		}},
		{name: "ExpireAwait", op: "UpdateItem", setup: open, write: func(ctx context.Context, s *dynamostore.Store) error {
			_, err := s.ExpireAwait(ctx, aw.TurnID)
			return err
		}},
		{name: "TakeTriage", op: "UpdateItem", setup: takeOnce, write: func(ctx context.Context, s *dynamostore.Store) error {
			var err error
			taken, err = s.Take(ctx, take(triKey, "2026-11-29", "tok-2", ms(2*time.Minute)))
			want := triage.Taken{Key: triKey, Day: "2026-11-29", At: ms(2 * time.Minute), Token: "tok-2", Count: 2, PrevLast: base, PrevToken: "tok-1"}
			if err == nil && !reflect.DeepEqual(taken, want) {
				return errors.New("the take is not the one made")
			}
			return err
		}},
		// Cap only, no cooldown: nothing but the take's own token refuses
		// its retry (found by the simulator, localstack/sim).
		{name: "TakeTriageCapOnly", op: "UpdateItem", setup: takeOnce, write: func(ctx context.Context, s *dynamostore.Store) error {
			tk := take(triKey, "2026-11-29", "tok-2", ms(2*time.Minute))
			tk.Cooldown = 0
			got, err := s.Take(ctx, tk)
			want := triage.Taken{Key: triKey, Day: "2026-11-29", At: ms(2 * time.Minute), Token: "tok-2", Count: 2, PrevLast: base, PrevToken: "tok-1"}
			if err == nil && !reflect.DeepEqual(got, want) {
				return fmt.Errorf("the take is not the one made: %+v", got)
			}
			return err
		}},
		{name: "GiveBackTriage", op: "UpdateItem", setup: func(ctx context.Context, s *dynamostore.Store) error {
			if err := takeOnce(ctx, s); err != nil {
				return err
			}
			var err error
			taken, err = s.Take(ctx, take(triKey, "2026-11-29", "tok-2", ms(2*time.Minute)))
			return err
		}, write: func(ctx context.Context, s *dynamostore.Store) error {
			return s.GiveBack(ctx, taken)
		}},
		{name: "Reschedule", op: "UpdateItem", setup: claim, write: func(ctx context.Context, s *dynamostore.Store) error {
			return s.Reschedule(ctx, key, ms(30*time.Second+store.SweepGrace), ms(time.Hour))
		}},
		{name: "Unsweep", op: "UpdateItem", setup: claim, write: func(ctx context.Context, s *dynamostore.Store) error {
			return s.Unsweep(ctx, key, ms(30*time.Second+store.SweepGrace))
		}},
	}
}

func errIf(cond bool, msg string) error {
	if cond {
		return errors.New(msg)
	}
	return nil
}

// TestAppliedAnswerLostIsNoConflict makes every conditional write of the
// store once with its first answer lost after DynamoDB applied it (a 5xx or
// a broken connection on the way back), which the SDK retries: the retry
// meets the item the write left. Each write must still report its own
// success, never a conflict with itself (a unit leased by "someone else",
// a question toggled twice, a take refused by its own cooldown).
func TestAppliedAnswerLostIsNoConflict(t *testing.T) {
	t.Parallel()
	for _, c := range lostAnswerCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := emulatortest.New(t)
			ctx := t.Context()
			plain := dynamostore.New(env.DynamoDB, env.Resources.Table)
			if err := c.setup(ctx, plain); err != nil {
				t.Fatalf("setup: %v", err)
			}
			faults := awsfault.New()
			fired := faults.Add(awsfault.Fault{Op: "DynamoDB." + c.op, LostAnswer: true})
			lossy := dynamostore.New(dynamodb.NewFromConfig(faults.Attach(env.AWS)), env.Resources.Table)
			if err := c.write(ctx, lossy); err != nil {
				t.Fatalf("a write whose answer was lost and retried reports: %v", err)
			}
			if fired() != 1 {
				t.Fatalf("the answer was lost %d times, want 1: the scenario did not happen", fired())
			}
		})
	}
}
