package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// Where a step was read from.
const (
	// SourceRecord: the state table, as the functions left it.
	SourceRecord = "record"
	// SourceLog: only a function's log line says so (an agent call's
	// latency, a duplicate's arrival, a failed attempt that was retried).
	SourceLog = "log"
)

// Step is one thing that happened to a message.
type Step struct {
	// At is when; zero when the record keeps no time for it.
	At time.Time `json:"at,omitzero"`
	// Name is the step: received, deduplicated, triaged, enqueued,
	// turn_claimed, agent_called, planned, unit, question, answer, or the
	// message of the log line it comes from.
	Name string `json:"step"`
	// Detail says what the step found, for a person.
	Detail string `json:"detail"`
	// Source is SourceRecord or SourceLog.
	Source string `json:"source"`
	// Function wrote the line (a log step).
	Function string `json:"function,omitempty"`
	// Unit is the unit the step is about (its unit key), if any.
	Unit string `json:"unit,omitempty"`
	// Level is a log step's level: WARN and ERROR are worth a look.
	Level string `json:"level,omitempty"`
	// Fields are the log line's fields, or the record's, that say more.
	Fields map[string]any `json:"fields,omitempty"`
}

// UnitView is a unit of a message's reply as stored.
type UnitView struct {
	// Key is the unit key (intent id#unit id): what parley resend and
	// abandon take.
	Key string `json:"key"`
	ID  string `json:"id"`
	// Kind is the content's kind (text, prompt); Text its text, or a
	// question's text form. Text from an agent: render it inert.
	Kind          string            `json:"kind"`
	Text          string            `json:"text"`
	Controls      []string          `json:"controls,omitempty"`
	State         message.UnitState `json:"state"`
	Attempt       int               `json:"attempt"`
	LeaseUntil    time.Time         `json:"lease_until,omitzero"`
	SentAt        time.Time         `json:"sent_at,omitzero"`
	Receipt       []string          `json:"receipt,omitempty"`
	FailureClass  string            `json:"failure_class,omitempty"`
	FailureReason string            `json:"failure_reason,omitempty"`
	NextAt        time.Time         `json:"next_at,omitzero"`
	Resends       int               `json:"resends,omitempty"`
	Reported      string            `json:"reported,omitempty"`
	UpdatedAt     time.Time         `json:"updated_at,omitzero"`
	// Parley marks Parley's own output (an error line, a re-prompt).
	Parley bool `json:"parley,omitempty"`
	// NeedsOperator: held in unknown_after_send, or failed (not abandoned).
	NeedsOperator bool `json:"needs_operator,omitempty"`
}

// Timeline is what happened to one message, from its webhook to its
// reply's receipts, read from the records the functions keep and, for
// what only the logs hold, from the lines that carry its correlation id.
type Timeline struct {
	// CorrelationID is the message's event key: every log line and record
	// of it carries it (field event_key).
	CorrelationID string `json:"correlation_id"`
	// IntentID is its turn's id, and its reply's intent's.
	IntentID string `json:"intent_id"`
	Thread   string `json:"thread,omitempty"`
	// Kind is the event's kind where a record or line says it.
	Kind  string     `json:"kind,omitempty"`
	Steps []Step     `json:"steps"`
	Units []UnitView `json:"units,omitempty"`
	// Notes say where the timeline is partial: what came from the logs,
	// what the records no longer hold.
	Notes []string `json:"notes,omitempty"`
}

// Message is the timeline of the message whose event key is key.
func (o *Operator) Message(ctx context.Context, key string) (Timeline, error) {
	if err := ParseEventKey(key); err != nil {
		return Timeline{}, err
	}
	now := o.now()
	id := intent.IDFor(key)
	tl := Timeline{CorrelationID: key, IntentID: id}
	found := false

	// The event's own key: written at ingress, settled by triage.
	claim, err := o.Store.GetClaim(ctx, key, now)
	switch {
	case err == nil:
		found = true
		tl.Steps = append(tl.Steps, receivedStep(claim))
	case errors.Is(err, store.ErrNotFound):
		tl.Notes = append(tl.Notes, "the event's key is not in the table: never received, or older than its dedupe window (8 days)")
	default:
		return Timeline{}, fmt.Errorf("read the event's key: %w", err)
	}

	// The turn's claim, which becomes the reply's intent.
	turn, err := o.Store.GetClaim(ctx, store.IntentKey(id), now)
	switch {
	case err == nil:
		found = true
		if turn.Thread.Platform != "" {
			tl.Thread = turn.Thread.Key()
		}
		tl.Steps = append(tl.Steps, turnStep(turn))
	case !errors.Is(err, store.ErrNotFound):
		return Timeline{}, fmt.Errorf("read the turn's claim: %w", err)
	}
	in, err := o.Store.GetIntent(ctx, id)
	switch {
	case err == nil:
		found = true
		tl.Thread = in.Thread.Key()
		tl.Steps = append(tl.Steps, Step{At: in.CreatedAt, Name: "planned", Source: SourceRecord,
			Detail: fmt.Sprintf("the reply's intent: %d unit(s), written before any send", len(in.Units))})
		for _, u := range in.Units {
			v := unitView(in, u)
			tl.Units = append(tl.Units, v)
			tl.Steps = append(tl.Steps, unitStep(v))
		}
		if q, ok := o.question(ctx, in.Thread); ok {
			tl.Steps = append(tl.Steps, questionSteps(q, key, id)...)
		}
	case !errors.Is(err, store.ErrNotFound):
		return Timeline{}, fmt.Errorf("read the intent: %w", err)
	}

	if o.Logs == nil {
		tl.Notes = append(tl.Notes, "no function logs were searched: latencies, duplicates and retried attempts are only in the logs")
	} else {
		lines, err := o.messageLines(ctx, key, id)
		if err != nil {
			tl.Notes = append(tl.Notes, "the function logs could not be searched: "+err.Error())
		}
		for _, l := range lines {
			found = true
			if tl.Thread == "" {
				tl.Thread = l.Field("thread_key")
			}
			if tl.Kind == "" {
				tl.Kind = l.Field("kind")
			}
			tl.Steps = append(tl.Steps, logStep(l, id))
		}
		if len(lines) > 0 {
			tl.Notes = append(tl.Notes, "steps marked log are read from the function logs by the correlation id (event_key): the records keep no agent latency, no duplicate arrivals and no retried attempts")
		}
	}
	if !found {
		return Timeline{}, fmt.Errorf("%w: no record and no log line of %s", ErrNotFound, key)
	}
	sortSteps(tl.Steps)
	return tl, nil
}

// sortSteps puts steps in time order. A record step the record keeps no
// time for (an event key written settled) sorts with the step before it,
// and the first with the earliest of all.
func sortSteps(steps []Step) {
	if len(steps) == 0 {
		return
	}
	keys := make([]time.Time, len(steps))
	var first time.Time
	for _, s := range steps {
		if !s.At.IsZero() && (first.IsZero() || s.At.Before(first)) {
			first = s.At
		}
	}
	prev := first
	for i, s := range steps {
		if !s.At.IsZero() {
			prev = s.At
		}
		keys[i] = prev
	}
	idx := make([]int, len(steps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return keys[a].Compare(keys[b]) })
	sorted := make([]Step, len(steps))
	for i, j := range idx {
		sorted[i] = steps[j]
	}
	copy(steps, sorted)
}

// messageLines are the lines of the message: those that carry its event
// key, and a platform's status reports on its units (which carry the
// status event's own key, and the unit's intent).
func (o *Operator) messageLines(ctx context.Context, key, id string) ([]Line, error) {
	since := o.since()
	lines, err := o.Logs.Search(ctx, Query{Field: "event_key", Value: key, Since: since})
	if err != nil {
		return nil, err
	}
	more, err := o.Logs.Search(ctx, Query{Field: "intent_id", Value: id, Since: since})
	if err != nil {
		return lines, err
	}
	for _, l := range more {
		if l.Field("event_key") != key {
			lines = append(lines, l)
		}
	}
	slices.SortStableFunc(lines, func(a, b Line) int { return a.Time.Compare(b.Time) })
	return lines, nil
}

func (o *Operator) question(ctx context.Context, t message.Thread) (store.Question, bool) {
	q, err := o.Store.GetQuestion(ctx, store.QuestionKey(t))
	return q, err == nil
}

func receivedStep(c store.Claim) Step {
	s := Step{Name: "received", Source: SourceRecord, At: c.ClaimedAt, Fields: map[string]any{"state": string(c.State)}}
	switch c.State {
	case store.ClaimEnqueued:
		s.Name, s.Detail = "enqueued", "verified, deduplicated by its key and put on inbound.fifo in its conversation's group"
	case store.ClaimSuppressed:
		s.Name, s.Detail = "triaged", "suppressed by triage: "+c.Reason
		s.Fields["reason"] = c.Reason
	case store.ClaimDeferred:
		s.Name, s.Detail = "triaged", "deferred by triage (quiet hours) until "+c.DueAt.UTC().Format(time.RFC3339)
		s.Fields["due"] = c.DueAt
	case store.ClaimPending:
		s.Detail = "being admitted (its claim is pending until " + c.LeaseUntil.UTC().Format(time.RFC3339) + ")"
	default:
		s.Detail = "its key is " + string(c.State)
	}
	if c.Attempts > 1 {
		s.Fields["attempts"] = c.Attempts
	}
	return s
}

func turnStep(c store.Claim) Step {
	s := Step{Name: "turn_claimed", At: c.ClaimedAt, Source: SourceRecord,
		Fields: map[string]any{"state": string(c.State), "attempts": c.Attempts}}
	switch c.State {
	case store.ClaimPending:
		s.Detail = fmt.Sprintf("the turn is running (attempt %d, lease until %s)", c.Attempts, c.LeaseUntil.UTC().Format(time.RFC3339))
	case store.ClaimDone:
		s.Detail = fmt.Sprintf("the turn ran %d time(s) (each attempt one agent call) and settled: %s", c.Attempts, c.Reason)
	case store.ClaimFailed:
		s.Detail = "the turn failed: " + c.Reason
	default:
		s.Detail = "the turn's claim is " + string(c.State)
	}
	if c.Reason != "" {
		s.Fields["outcome"] = c.Reason
	}
	return s
}

func unitView(in intent.Intent, u intent.Unit) UnitView {
	v := UnitView{
		Key: intent.UnitKey(in.ID, u.ID), ID: u.ID, Kind: string(u.Content.Kind()), State: u.State, Attempt: u.Attempt,
		LeaseUntil: u.LeaseUntil, SentAt: u.SentAt, Receipt: u.Receipt, FailureClass: string(u.FailureClass),
		FailureReason: u.FailureReason, NextAt: u.NextAt, Resends: u.Resends, Reported: u.Reported, UpdatedAt: u.UpdatedAt,
		Parley: u.Parley, NeedsOperator: u.NeedsOperator(),
	}
	switch {
	case u.Content.Prompt != nil:
		v.Text = u.Content.Prompt.Text
		for _, c := range append(slices.Clone(u.Content.Prompt.Options), u.Content.Prompt.Actions...) {
			v.Controls = append(v.Controls, c.Label)
		}
	case u.Content.React != nil:
		v.Text = reactionText(*u.Content.React)
	default:
		v.Text = u.Content.Text
	}
	return v
}

// reactionText is what a reaction unit shows an operator: the reaction,
// or a status reaction's two outcomes.
func reactionText(r message.React) string {
	if r.Status {
		return "(status reaction: " + r.Emoji + " when answered, " + r.Failed + " when a bubble failed)"
	}
	return "(reaction " + r.Emoji + ")"
}

func unitStep(v UnitView) Step {
	s := Step{Name: "unit", Unit: v.Key, Source: SourceRecord, At: v.UpdatedAt,
		Fields: map[string]any{"state": string(v.State), "attempt": v.Attempt}}
	switch v.State {
	case message.UnitSent:
		s.At = v.SentAt
		s.Detail = fmt.Sprintf("%s sent on attempt %d; receipt %s", v.ID, v.Attempt, strings.Join(v.Receipt, ", "))
		if v.Reported != "" {
			s.Detail += "; the platform reports it " + v.Reported
		}
	case message.UnitFailed:
		s.Detail = fmt.Sprintf("%s failed (%s): %s", v.ID, v.FailureClass, v.FailureReason)
	case message.UnitUnknown:
		s.Detail = fmt.Sprintf("%s held in unknown_after_send (%s): the send may have happened; an operator decides", v.ID, v.FailureReason)
	case message.UnitSending:
		s.Detail = fmt.Sprintf("%s leased for attempt %d until %s", v.ID, v.Attempt, v.LeaseUntil.UTC().Format(time.RFC3339))
	case message.UnitPending:
		s.Detail = v.ID + " waiting to be sent"
		if v.FailureClass != "" {
			s.Detail += fmt.Sprintf(" again after %s: %s (%s)", v.NextAt.UTC().Format(time.RFC3339), v.FailureClass, v.FailureReason)
		}
	}
	if v.Resends > 0 {
		s.Fields["resends"] = v.Resends
	}
	if v.FailureClass != "" {
		s.Fields["failure_class"] = v.FailureClass
	}
	return s
}

// questionSteps are the thread's current question, as it concerns the
// message: asked by its turn, or answered or closed by it.
func questionSteps(q store.Question, key, id string) []Step {
	var out []Step
	if q.IntentID == id || q.Origin == key {
		s := Step{At: q.CreatedAt, Name: "question", Source: SourceRecord, Unit: intent.UnitKey(q.IntentID, q.UnitID),
			Fields: map[string]any{"question_id": q.ID, "state": string(q.State), "field": q.Field}}
		s.Detail = fmt.Sprintf("asked question %s (%d field(s)); it is %s", q.Short, len(q.Form.Fields), q.State)
		if q.Owner != "" {
			s.Detail += "; only " + q.Owner + " may answer"
		}
		if q.ClosedBy != "" {
			s.Detail += "; closed by " + q.ClosedBy
			s.Fields["closed_by"] = q.ClosedBy
		}
		out = append(out, s)
	}
	if q.ClosedBy == key {
		out = append(out, Step{Name: "answer", Source: SourceRecord,
			Detail: fmt.Sprintf("this event closed question %s (asked by %s): %s", q.Short, q.Origin, q.State),
			Fields: map[string]any{"question_id": q.ID, "asked_by": q.Origin, "state": string(q.State)}})
	}
	return out
}

// logFields are a line's fields worth showing beside its message: not the
// ones every line of a message repeats.
func logFields(l Line) map[string]any {
	out := map[string]any{}
	for k, v := range l.Fields {
		switch k {
		case "event_key", "thread_key", "intent_id", "platform", "_aws":
			continue
		}
		out[k] = v
	}
	return out
}

func logStep(l Line, id string) Step {
	s := Step{At: l.Time, Name: l.Msg, Source: SourceLog, Function: l.Function, Level: l.Level, Fields: logFields(l)}
	if u := l.Field("unit_id"); u != "" {
		in := l.Field("intent_id")
		if in == "" {
			in = id
		}
		s.Unit = intent.UnitKey(in, u)
	}
	switch l.Msg {
	case "agent answered":
		s.Name, s.Detail = "agent_called", fmt.Sprintf("the agent answered %s in %s ms", l.Field("status"), l.Field("agent_ms"))
	case "agent call failed":
		s.Name, s.Detail = "agent_called", fmt.Sprintf("the agent call failed (%s, status %s) after %s ms; the turn retries", l.Field("kind"), l.Field("status"), l.Field("agent_ms"))
	case "event suppressed":
		if l.Field("reason") == "duplicate" {
			s.Name, s.Detail = "deduplicated", "a redelivery of the event, answered duplicate (its key was "+l.Field("previous")+")"
		} else {
			s.Name, s.Detail = "triaged", "suppressed: "+l.Field("reason")
		}
	case "event accepted":
		s.Name, s.Detail = "received", "the webhook was verified and the event accepted: "+l.Field("result")
	case "unit delivered":
		s.Detail = fmt.Sprintf("sent on attempt %s in %s ms", l.Field("attempt"), l.Field("send_ms"))
	default:
		if r := l.Field("reason"); r != "" {
			s.Detail = r
		}
		if c := l.Field("failure_class"); c != "" {
			s.Detail = strings.TrimSpace(c + " " + s.Detail)
		}
	}
	return s
}

// ThreadMessage is one message of a thread, as its logs list it.
type ThreadMessage struct {
	CorrelationID string    `json:"correlation_id"`
	At            time.Time `json:"at"`
	Kind          string    `json:"kind,omitempty"`
}

// Thread lists the messages of thread key (platform:account:chat[:thread])
// that the logs hold, oldest first, and the timeline of each: the table
// has no index by thread, the logs do.
func (o *Operator) Thread(ctx context.Context, key string) ([]ThreadMessage, []Timeline, error) {
	if strings.Count(key, ":") < 2 || strings.ContainsAny(key, " #") {
		return nil, nil, fmt.Errorf("%w: %q is not a thread key: want platform:account:chat or platform:account:chat:thread, as the logs' thread_key and the console show it", ErrAmbiguous, key)
	}
	if o.Logs == nil {
		return nil, nil, errors.New("a thread's messages are found in the function logs, and no logs are configured")
	}
	lines, err := o.Logs.Search(ctx, Query{Field: "thread_key", Value: key, Since: o.since()})
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	var msgs []ThreadMessage
	for _, l := range lines {
		k := l.Field("event_key")
		if k == "" || seen[k] || ParseEventKey(k) != nil {
			continue
		}
		seen[k] = true
		msgs = append(msgs, ThreadMessage{CorrelationID: k, At: l.Time, Kind: l.Field("kind")})
	}
	if len(msgs) == 0 {
		return nil, nil, fmt.Errorf("%w: no log line names thread %s", ErrNotFound, key)
	}
	var tls []Timeline
	for _, m := range msgs {
		tl, err := o.Message(ctx, m.CorrelationID)
		if err != nil {
			return nil, nil, err
		}
		tls = append(tls, tl)
	}
	return msgs, tls, nil
}
