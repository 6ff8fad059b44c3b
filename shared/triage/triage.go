package triage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// Reasons a proactive event is suppressed: stable words, logged as reason and
// used as the reason dimension of the TriageDecision metric.
const (
	// ReasonDuplicate: the event id was seen before (the ingress dedupe
	// claim decides this, before triage).
	ReasonDuplicate = "duplicate"
	// ReasonQuietHours: the event came during the conversation's quiet
	// hours, whose mode is suppress.
	ReasonQuietHours = "quiet_hours"
	// ReasonCooldown: the conversation's last accepted proactive event is
	// more recent than the cooldown.
	ReasonCooldown = "cooldown"
	// ReasonDailyCap: the conversation has had its daily cap of proactive
	// events today.
	ReasonDailyCap = "daily_cap"
)

// KeyPrefix starts every counter key: "tri#<chat key>".
const KeyPrefix = "tri#"

// CounterKey is the counter key of the conversation t: its chat, as the
// platform knows it ("tri#platform:account:chat"). Every thread of a chat
// shares it, so a sender cannot escape a chat's cooldown or daily cap by
// naming another thread of it (the people who are woken are the chat's);
// targets reach here canonical, so cosmetic variations of a chat share it too.
func CounterKey(t message.Thread) string {
	t.Thread = ""
	return KeyPrefix + t.Key()
}

// DayLayout formats a local day, as Take.Day holds it.
const DayLayout = "2006-01-02"

// Counters keeps every conversation's triage counters: per local day, how
// many proactive events were accepted, and when the last one was. Every
// change is one conditional write, so counters hold across concurrent Lambda
// instances and restarts. Implemented by store/dynamostore; proved by
// store/storetest.
type Counters interface {
	// Take counts one accepted event on t.Key, if the cooldown and the cap
	// allow it: it adds one to t.Day's count and sets the last accepted
	// time to t.At. When a rule refuses, it changes nothing and returns a
	// *LimitError saying which.
	Take(ctx context.Context, t Take) (Taken, error)
	// GiveBack undoes what Take counted, only if nothing was taken on the
	// key since; otherwise it changes nothing and returns ErrMovedOn.
	GiveBack(ctx context.Context, t Taken) error
}

// Take is one Counters.Take call's parameters.
type Take struct {
	// Key is the counter key (CounterKey).
	Key string
	// At is when the event counts as delivered (now, or the end of quiet
	// hours for a deferred event): the new last accepted time.
	At time.Time
	// Day is At's local day (DayLayout), the count Cap applies to.
	Day string
	// Forget names earlier days whose counts are dropped in the same write,
	// so the record does not grow.
	Forget []string
	// Cooldown refuses the take while the last accepted time is later than
	// At minus Cooldown. 0 turns it off.
	Cooldown time.Duration
	// Cap refuses the take when Day's count has reached it. 0 turns it off.
	Cap int
	// TTL keeps the record at least this long after At.
	TTL time.Duration
	// Token identifies this take, so GiveBack applies only to it.
	Token string
}

// Taken is what a Take counted, and what GiveBack needs to undo it.
type Taken struct {
	Key   string
	Day   string
	At    time.Time
	Token string
	// Count is Day's count after the take.
	Count int
	// PrevLast and PrevToken are the last accepted time and token before
	// the take (zero when there were none).
	PrevLast  time.Time
	PrevToken string
}

// Counter is a conversation's counters as stored, for tests and operators.
type Counter struct {
	Key string
	// Days maps local days (DayLayout) to their count.
	Days map[string]int
	// Last is the last accepted time; Token the take that set it.
	Last      time.Time
	Token     string
	ExpiresAt time.Time
}

// ErrLimited is wrapped by every *LimitError.
var ErrLimited = errors.New("triage: limit reached")

// ErrMovedOn is returned by GiveBack when the counters changed since the take.
var ErrMovedOn = errors.New("triage: counters changed since the take")

// LimitError says which rule refused a Take, read from the record in the
// same call. It wraps ErrLimited.
type LimitError struct {
	// Reason is ReasonCooldown or ReasonDailyCap.
	Reason string
	// Count is the day's count; Last the last accepted time.
	Count int
	Last  time.Time
}

func (e *LimitError) Error() string { return "triage: " + e.Reason }

func (e *LimitError) Unwrap() error { return ErrLimited }

// Triage decides proactive events, in order: quiet hours, then cooldown and
// daily cap in one conditional write. (The ingress pipeline's dedupe claim
// comes first and never reaches here for a duplicate.) Safe for concurrent
// use.
type Triage struct {
	counters Counters
	def      compiled
	conv     map[string]compiled
	log      *slog.Logger
}

// New validates cfg and returns a Triage on counters. log receives the
// outcome of give-backs; nil means slog.Default().
func New(cfg Config, counters Counters, log *slog.Logger) (*Triage, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if counters == nil {
		return nil, errors.New("triage: no counter store")
	}
	def, _ := compile(cfg.Default)
	t := &Triage{counters: counters, def: def, conv: map[string]compiled{}, log: log}
	for key, o := range cfg.Conversations {
		t.conv[key], _ = compile(o.Apply(cfg.Default))
	}
	if t.log == nil {
		t.log = slog.Default()
	}
	return t, nil
}

func (t *Triage) policy(th message.Thread) compiled {
	if p, ok := t.conv[th.Key()]; ok {
		return p
	}
	chat := th
	chat.Thread = ""
	if p, ok := t.conv[chat.Key()]; ok {
		return p
	}
	return t.def
}

// counterTTL keeps a record past the end of its day (at most 25 hours after
// any instant of it, on a DST change) and past the cooldown, with margin.
func counterTTL(cooldown time.Duration) time.Duration {
	return max(cooldown, 48*time.Hour) + time.Hour
}

// Decision is triage's answer for one proactive event.
type Decision struct {
	// Accepted is true when the event goes on to the agent.
	Accepted bool
	// Reason is the stable suppression reason (quiet_hours, cooldown,
	// daily_cap) when not Accepted.
	Reason string
	// NotBefore, when set, defers an accepted event until then.
	NotBefore time.Time
	// Revert gives back what an accepted decision consumed (cap, cooldown)
	// when the event could not be enqueued. May be nil.
	Revert func(ctx context.Context) error
	// Counted records what the decision consumed, for the event's retry
	// when Revert fails: handed back to Admit as counted.
	Counted string
}

// Admit decides one proactive event at now. Only Take's refusals suppress;
// a store failure is an error, so the pipeline answers 5xx and the sender
// retries. counted is an earlier attempt's Decision.Counted for this same
// event: it was counted already and could not be given back, so it is
// accepted as it was then, without counting it again (and without its own
// count refusing it).
func (t *Triage) Admit(ctx context.Context, ev message.Event, now time.Time, counted string) (Decision, error) {
	if at, ok := parseCounted(counted); ok {
		d := Decision{Accepted: true, Counted: counted}
		if at.After(now) {
			d.NotBefore = at
		}
		return d, nil
	}
	p := t.policy(ev.Thread)
	at := now
	var notBefore time.Time
	if p.quiet.Contains(now, p.loc) {
		if p.mode != QuietDefer {
			return Decision{Reason: ReasonQuietHours}, nil
		}
		// Deferred: the event counts as delivered when quiet hours end,
		// so a quiet night's events wake the conversation once, within
		// the cooldown and that day's cap.
		at = p.quiet.End(now, p.loc)
		notBefore = at
	}
	if p.cooldown == 0 && p.cap == 0 {
		return Decision{Accepted: true, NotBefore: notBefore}, nil // nothing to count against
	}
	local := at.In(p.loc)
	forget := make([]string, 0, 3)
	for back := 2; back <= 4; back++ {
		// Two days back and more: yesterday's count stays, as a deferred
		// event may already count against tomorrow.
		forget = append(forget, time.Date(local.Year(), local.Month(), local.Day()-back, 12, 0, 0, 0, p.loc).Format(DayLayout))
	}
	taken, err := t.counters.Take(ctx, Take{
		Key: CounterKey(ev.Thread), At: at, Day: local.Format(DayLayout), Forget: forget,
		Cooldown: p.cooldown, Cap: p.cap, TTL: counterTTL(p.cooldown), Token: store.NewOwner(),
	})
	var limit *LimitError
	if errors.As(err, &limit) {
		return Decision{Reason: limit.Reason}, nil
	}
	if err != nil {
		return Decision{}, fmt.Errorf("take triage counters: %w", err)
	}
	return Decision{Accepted: true, NotBefore: notBefore, Revert: t.reverter(taken), Counted: countedNote(at)}, nil
}

// countedPrefix starts a Decision.Counted note: "triage:<unix ms of the
// time the event counts as delivered>".
const countedPrefix = "triage:"

func countedNote(at time.Time) string { return countedPrefix + strconv.FormatInt(at.UnixMilli(), 10) }

func parseCounted(s string) (time.Time, bool) {
	ms, ok := strings.CutPrefix(s, countedPrefix)
	if !ok {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(n).UTC(), true
}

// reverter gives back an accepted event's count and cooldown when it could
// not be enqueued. If another event was accepted since, the give-back is
// skipped: this event keeps counting, which can only suppress more, never
// let more through.
func (t *Triage) reverter(taken Taken) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		err := t.counters.GiveBack(context.WithoutCancel(ctx), taken)
		if errors.Is(err, ErrMovedOn) {
			t.log.Warn("triage give-back skipped: the counters moved on", "counter_key", taken.Key, "day", taken.Day)
			return nil
		}
		if err != nil {
			return fmt.Errorf("give back triage counters: %w", err)
		}
		return nil
	}
}
