package questions

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// Config tunes questions.
type Config struct {
	// TTL bounds an open question (PARLEY_QUESTION_TTL): unanswered by
	// then, it is cancelled to the agent. Defaults to 24 hours.
	TTL time.Duration
	// Off turns questions off (PARLEY_QUESTIONS=off): an ask is answered to
	// the agent with cancel at once, and nothing is rendered.
	Off bool
}

// MaxTTL bounds Config.TTL: the record and its sweep entry must outlive it.
const MaxTTL = 7 * 24 * time.Hour

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	c.TTL = cmp.Or(c.TTL, 24*time.Hour)
	return c
}

// Cancel reasons (store.Question.Reason, message.Cancel.Reason).
const (
	ReasonExpired    = "expired"
	ReasonSuperseded = "superseded"
	ReasonOff        = "off"
	// ReasonNoOwner: asked into a group with nobody named to answer it
	// (a proactive event's or a send's owner), it would be an approval
	// anyone there could give; it is never shown.
	ReasonNoOwner = "no_owner"
)

// Notices a person sees, in answer to a press or a message.
const (
	NoticeNotOwner = "Only the person who was asked can answer."
	NoticeClosed   = "This question is closed."
	NoticeAnswered = "That is already answered."
	// NoticeTooLong answers an answer too long to keep with the question.
	NoticeTooLong = "That answer is too long. Please reply with a shorter one."
)

// shortLen is how much of a question's id its controls carry: enough to
// tell a thread's questions apart, short enough for 64-byte callback data.
const shortLen = 10

// New is the record of the question form the agent asked in the turn of ev,
// whose reply is intent intentID and whose question message is unit unitID.
// id is the question's id (the intent id). The owner is the sender of a
// person's message or press; for Parley's cancel of a question, that
// question's owner, which the cancel carries (a question asked again keeps
// its owner); else the owner the event names (a proactive event's source,
// an agent's send; empty: anyone in the chat, which the turn allows only
// in a one-to-one chat).
func New(form message.Question, id string, ev message.Event, intentID, unitID string, now time.Time, cfg Config) store.Question {
	cfg = cfg.WithDefaults()
	owner := ev.Owner
	if (ev.Kind == message.KindMessage || ev.Kind == message.KindAnswer) && ev.Cancel == nil {
		owner = ev.Sender.ID
	}
	return store.Question{
		Thread: ev.Thread, ID: id, Short: id[:min(shortLen, len(id))], Origin: ev.Key(), Owner: owner, Form: form,
		IntentID: intentID, UnitID: unitID, State: store.QuestionOpen,
		CreatedAt: now, DueAt: now.Add(cfg.TTL), ExpiresAt: now.Add(cfg.TTL + 7*24*time.Hour), Sweep: true,
	}
}

// Outcome is what an answer, a press or a cancel does to a question.
type Outcome struct {
	// Next is the record to write (a compare-and-set on its version) when
	// Write is set.
	Next  store.Question
	Write bool
	// Notice is for the person who pressed or wrote: a short line, shown
	// to them alone where the platform can. Empty: nothing to say.
	Notice string
	// Edit, when set, is the question message's new form: the next field,
	// the marks of a multi-select, or closed.
	Edit *message.Prompt
	// Answer, when set, closed the question: it goes to the agent.
	Answer *agent.Answer
}

// Control data: "<short>:<field>:<option index>", "<short>:<field>:d"
// (Done), "<short>:<field>:s" (a select menu; the chosen options' data in
// Press.Values), "<short>:x" (Skip). At most 10+1+2+1+2 bytes.
func optionData(q store.Question, field, option int) string {
	return q.Short + ":" + strconv.Itoa(field) + ":" + strconv.Itoa(option)
}

func doneData(q store.Question, field int) string { return q.Short + ":" + strconv.Itoa(field) + ":d" }
func selectData(q store.Question, field int) string {
	return q.Short + ":" + strconv.Itoa(field) + ":s"
}
func skipData(q store.Question) string { return q.Short + ":x" }

// options are the choices of field f: a select's options, or yes and no.
func options(f message.Field) []message.Option { return f.Choices() }

// textHint says how to answer a field that has no controls.
func textHint(f message.Field) string { return f.Hint() }

// optional reports whether the form can be skipped: none of its fields is
// required.
func optional(form message.Question) bool { return form.Optional() }

// controls are a question's control data: its short id, the field, the
// option (see optionData).
type controls struct{ q store.Question }

func (c controls) Option(field, option int) string { return optionData(c.q, field, option) }
func (c controls) Done(field int) string           { return doneData(c.q, field) }
func (c controls) Select(field int) string         { return selectData(c.q, field) }
func (c controls) Skip() string                    { return skipData(c.q) }

// Prompt is the question message for the record's current field
// (message.Question.Prompt), or its closed form.
func Prompt(q store.Question) message.Prompt {
	if q.State != store.QuestionOpen || q.Field >= len(q.Form.Fields) {
		return Closed(q)
	}
	return q.Form.Prompt(q.Field, q.Selected, controls{q})
}

// Closed is the question message once closed: the question and what became
// of it, with no controls.
func Closed(q store.Question) message.Prompt {
	var b strings.Builder
	b.WriteString(q.Form.Message)
	b.WriteString("\n\n")
	switch q.State {
	case store.QuestionAnswered:
		for i, f := range q.Form.Fields {
			if i > 0 {
				b.WriteString("\n")
			}
			if len(q.Form.Fields) > 1 {
				b.WriteString(cmp.Or(f.Title, f.ID) + ": ")
			}
			b.WriteString("✓ " + label(f, q.Answers[f.Key]))
		}
	case store.QuestionDeclined:
		b.WriteString("Skipped.")
	case store.QuestionCancelled:
		switch q.Reason {
		case ReasonExpired:
			b.WriteString("This question expired.")
		case ReasonSuperseded:
			b.WriteString("A newer question replaced this one.")
		default:
			b.WriteString("This question was withdrawn.")
		}
	default:
		return Prompt(q)
	}
	return message.Prompt{Text: b.String()}
}

// label shows an answer as a person reads it: options by their labels.
func label(f message.Field, v any) string {
	byValue := func(s string) string {
		for _, o := range options(f) {
			if o.Value == s {
				return o.Label()
			}
		}
		return s
	}
	switch v := v.(type) {
	case nil:
		return "—"
	case string:
		return byValue(v)
	case bool:
		return byValue(strconv.FormatBool(v))
	case []string:
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = byValue(s)
		}
		return strings.Join(out, ", ")
	case []any:
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = byValue(fmt.Sprint(s))
		}
		return strings.Join(out, ", ")
	}
	return fmt.Sprint(v)
}

// Press applies a press of one of the question's controls by who, carried by
// the event eventKey.
func Press(q store.Question, p message.Press, who, eventKey string) Outcome {
	if q.ClosedBy == eventKey && q.State != store.QuestionOpen {
		// The same press again (a redelivery after a crash): carry on.
		return Outcome{Edit: ptr(Closed(q)), Answer: answerOf(q)}
	}
	short, rest, _ := strings.Cut(p.Data, ":")
	if q.State != store.QuestionOpen || short != q.Short {
		return Outcome{Notice: NoticeClosed}
	}
	if q.Owner != "" && who != q.Owner {
		return Outcome{Notice: NoticeNotOwner}
	}
	if rest == "x" {
		if !optional(q.Form) {
			return Outcome{Notice: NoticeClosed}
		}
		return decline(q, eventKey)
	}
	fieldStr, action, ok := strings.Cut(rest, ":")
	field, err := strconv.Atoi(fieldStr)
	if !ok || err != nil || field < 0 || field >= len(q.Form.Fields) {
		return Outcome{Notice: NoticeClosed}
	}
	if field != q.Field {
		return Outcome{Notice: NoticeAnswered}
	}
	f := q.Form.Fields[field]
	opts := options(f)
	switch action {
	case "d":
		if f.Kind != message.FieldMultiSelect {
			return Outcome{Notice: NoticeClosed}
		}
		return done(q, f, eventKey)
	case "s":
		var chosen []string
		for _, d := range p.Values {
			i, ok := optionIndex(q, field, d, len(opts))
			if !ok {
				return Outcome{Notice: NoticeClosed}
			}
			chosen = append(chosen, opts[i].Value)
		}
		if f.Kind == message.FieldMultiSelect {
			// A native multi-select sends the whole choice; Done submits.
			if f.MaxItems != nil && len(chosen) > *f.MaxItems {
				return Outcome{Notice: fmt.Sprintf("Choose at most %d.", *f.MaxItems)}
			}
			q.Selected = inOrder(opts, chosen)
			return Outcome{Next: q, Write: true, Edit: ptr(Prompt(q))}
		}
		if len(chosen) != 1 {
			return Outcome{Notice: "Choose one."}
		}
		return advance(q, f, value(f, chosen[0]), eventKey)
	}
	i, err := strconv.Atoi(action)
	if err != nil || i < 0 || i >= len(opts) {
		return Outcome{Notice: NoticeClosed}
	}
	if f.Kind == message.FieldMultiSelect {
		return toggle(q, f, opts[i].Value)
	}
	if len(opts) == 0 {
		return Outcome{Notice: NoticeClosed}
	}
	return advance(q, f, value(f, opts[i].Value), eventKey)
}

// optionIndex reads an option's control data back to its index.
func optionIndex(q store.Question, field int, data string, n int) (int, bool) {
	prefix := q.Short + ":" + strconv.Itoa(field) + ":"
	s, ok := strings.CutPrefix(data, prefix)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil && i >= 0 && i < n
}

func toggle(q store.Question, f message.Field, v string) Outcome {
	if i := slices.Index(q.Selected, v); i >= 0 {
		q.Selected = slices.Delete(slices.Clone(q.Selected), i, i+1)
	} else {
		if f.MaxItems != nil && len(q.Selected) >= *f.MaxItems {
			return Outcome{Notice: fmt.Sprintf("Choose at most %d.", *f.MaxItems)}
		}
		q.Selected = inOrder(options(f), append(slices.Clone(q.Selected), v))
	}
	return Outcome{Next: q, Write: true, Edit: ptr(Prompt(q))}
}

func done(q store.Question, f message.Field, eventKey string) Outcome {
	least := 0
	if f.Required {
		least = 1
	}
	if f.MinItems != nil {
		least = *f.MinItems
	}
	if len(q.Selected) < least {
		return Outcome{Notice: fmt.Sprintf("Choose at least %d.", least)}
	}
	return advance(q, f, slices.Clone(q.Selected), eventKey)
}

// inOrder returns chosen in the options' order, each once.
func inOrder(opts []message.Option, chosen []string) []string {
	var out []string
	for _, o := range opts {
		if slices.Contains(chosen, o.Value) {
			out = append(out, o.Value)
		}
	}
	return out
}

// value is an option's answer as the agent receives it.
func value(f message.Field, v string) any {
	if f.Kind == message.FieldBoolean {
		return v == "true"
	}
	return v
}

// advance records v for f and asks the next field, or closes the question.
func advance(q store.Question, f message.Field, v any, eventKey string) Outcome {
	answers := make(map[string]any, len(q.Answers)+1)
	for k, a := range q.Answers {
		answers[k] = a
	}
	answers[f.Key] = v
	q.Answers, q.Selected = answers, nil
	q.Field++
	if q.Field < len(q.Form.Fields) {
		return Outcome{Next: q, Write: true, Edit: ptr(Prompt(q))}
	}
	q.State, q.ClosedBy, q.Sweep = store.QuestionAnswered, eventKey, false
	return Outcome{Next: q, Write: true, Edit: ptr(Closed(q)), Answer: answerOf(q)}
}

func decline(q store.Question, eventKey string) Outcome {
	q.State, q.ClosedBy, q.Sweep = store.QuestionDeclined, eventKey, false
	return Outcome{Next: q, Write: true, Edit: ptr(Closed(q)), Answer: answerOf(q)}
}

// Cancel closes an open question without an answer, for reason. The record
// stays on the sweeper's list until its cancel event is enqueued.
func Cancel(q store.Question, reason, eventKey string) Outcome {
	if q.State != store.QuestionOpen {
		return Outcome{}
	}
	q.State, q.Reason, q.ClosedBy = store.QuestionCancelled, reason, eventKey
	return Outcome{Next: q, Write: true, Edit: ptr(Closed(q)), Answer: answerOf(q)}
}

// answerOf is what the agent hears of a closed question.
func answerOf(q store.Question) *agent.Answer {
	a := &agent.Answer{QuestionID: q.ID}
	switch q.State {
	case store.QuestionAnswered:
		a.Action, a.Content = agent.AnswerAccept, q.Answers
	case store.QuestionDeclined:
		a.Action = agent.AnswerDecline
	default:
		a.Action = agent.AnswerCancel
	}
	return a
}

// CancelEvent is the event that tells the agent, in order with the thread's
// turns, that q closed without an answer: a KindAnswer from Parley itself.
// It carries q's owner, who owns a question the agent asks in its turn.
func CancelEvent(q store.Question, now time.Time) message.Event {
	closed := Closed(q)
	return message.Event{
		Platform: message.Parley, Account: "questions", EventID: "cancel:" + q.ID, Kind: message.KindAnswer,
		Thread: q.Thread, Time: now, Owner: q.Owner,
		Cancel: &message.Cancel{QuestionID: q.ID, Reason: q.Reason, IntentID: q.IntentID, UnitID: q.UnitID, Text: closed.Text},
	}
}

func ptr[T any](v T) *T { return &v }
