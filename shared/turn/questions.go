package turn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/metrics"
	"github.com/parleyhq/parley/shared/questions"
	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/store"
)

// Questions is the question store as the turn uses it: one record per
// thread, every change a compare-and-set.
type Questions interface {
	GetQuestion(ctx context.Context, key string) (store.Question, error)
	AskQuestion(ctx context.Context, q store.Question) (store.Question, bool, error)
	UpdateQuestion(ctx context.Context, q store.Question) (store.Question, error)
}

// Inbox takes Parley's own events for a thread's inbound group: a
// question's cancel, which the agent hears in order with the thread's turns.
type Inbox interface {
	Send(ctx context.Context, m queue.Message) error
}

// askUnitID is the unit of an intent that holds its question message.
const askUnitID = "ask#1"

// heard is what a turn learned from the questions before it asks the agent
// anything: the answer to give it, and units to send in any case (a
// re-prompt, the next field where the platform cannot edit).
type heard struct {
	answer *agent.Answer
	units  []intent.Unit
	// handled: the event was about a question, and the agent is asked only
	// when answer is set.
	handled bool
}

// hear applies an event to its thread's question: a press of a control, a
// message answering a free-text field, or Parley's own cancel.
func (p *Processor) hear(ctx context.Context, log *slog.Logger, cfg Config, ev message.Event, ch Channel) (heard, error) {
	if ev.Kind == message.KindAnswer && ev.Cancel != nil {
		if ev.Platform != message.Parley {
			// Only Parley makes cancels; a webhook cannot claim it.
			log.Warn("answer dropped: a cancel not from Parley", "outcome", "forged_cancel")
			return heard{handled: true}, nil
		}
		p.edit(ctx, log, ch, ev, ev.Cancel.IntentID, ev.Cancel.UnitID, message.Prompt{Text: ev.Cancel.Text})
		return heard{handled: true, answer: &agent.Answer{QuestionID: ev.Cancel.QuestionID, Action: agent.AnswerCancel}}, nil
	}
	switch ev.Kind {
	case message.KindReaction, message.KindEdit, message.KindDelete:
		return heard{}, nil // about a message, never an answer to a question
	}
	if p.Questions == nil || cfg.Questions.Off {
		if ev.Kind == message.KindAnswer {
			p.acknowledge(ctx, log, ch, ev, questions.NoticeClosed)
			return heard{handled: true}, nil
		}
		return heard{}, nil
	}
	key := store.QuestionKey(ev.Thread)
	for range 3 { // a lost compare-and-set reads again and decides again
		q, err := p.Questions.GetQuestion(ctx, key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			if ev.Kind == message.KindAnswer {
				p.acknowledge(ctx, log, ch, ev, questions.NoticeClosed)
				return heard{handled: true}, nil
			}
			return heard{}, nil
		case err != nil:
			return heard{}, fmt.Errorf("read question: %w", err)
		}
		var o questions.Outcome
		if ev.Kind == message.KindAnswer {
			if ev.Press == nil {
				return heard{handled: true}, nil
			}
			o = questions.Press(q, *ev.Press, ev.Sender.ID, ev.Key())
		} else {
			var ok bool
			if o, ok = questions.Text(q, ev.Text, ev.Sender.ID, ev.Key()); !ok {
				return heard{}, nil // a message like any other: the question stays open
			}
		}
		if o.Write {
			var conflict *store.QuestionConflictError
			next, err := p.Questions.UpdateQuestion(ctx, o.Next)
			if errors.As(err, &conflict) {
				continue
			}
			if errors.Is(err, store.ErrInvalid) {
				// The record would be over the store's item limit with
				// this answer, on every try: not taken, the question
				// stays open, and the person is told.
				log.Warn("answer not taken: the question's record would be too large", "outcome", "answer_too_large")
				return p.after(ctx, log, ch, ev, q, questions.Outcome{Notice: questions.NoticeTooLong}), nil
			}
			if err != nil {
				return heard{}, fmt.Errorf("record the answer: %w", err)
			}
			q = next
		}
		return p.after(ctx, log, ch, ev, q, o), nil
	}
	return heard{}, errors.New("the question kept changing under us")
}

// after does what an applied answer asks: acknowledge the press (with a
// notice), show the question's progress, and hand the answer on.
func (p *Processor) after(ctx context.Context, log *slog.Logger, ch Channel, ev message.Event, q store.Question, o questions.Outcome) heard {
	h := heard{handled: true, answer: o.Answer}
	if ev.Kind == message.KindAnswer {
		p.acknowledge(ctx, log, ch, ev, o.Notice)
	} else if o.Notice != "" {
		// A re-prompt: the question stays open.
		h.units = append(h.units, intent.Unit{ID: "notice#1", Content: message.Text(o.Notice), State: message.UnitPending, Parley: true})
	}
	if o.Edit != nil {
		if ch.Editor != nil {
			p.edit(ctx, log, ch, ev, q.IntentID, q.UnitID, *o.Edit)
		} else if !o.Edit.Closed() {
			// The platform cannot edit: the next field is a new message.
			h.units = append(h.units, intent.Unit{ID: askUnitID, Content: message.Content{Prompt: o.Edit}, State: message.UnitPending})
		}
	}
	if o.Answer != nil && o.Write {
		log.LogAttrs(ctx, slog.LevelInfo, "question closed", append([]slog.Attr{slog.String("question_id", q.ID), slog.String("action", o.Answer.Action)},
			metrics.Count(p.now(), metrics.Question, metrics.Dim{Name: metrics.DimOutcome, Value: outcomeOf(o.Answer.Action)})...)...)
	}
	return h
}

func outcomeOf(action string) string {
	switch action {
	case agent.AnswerAccept:
		return "answered"
	case agent.AnswerDecline:
		return "declined"
	}
	return "cancelled"
}

// ask records the question the agent asked in the turn of ev (its reply is
// intent intentID) before any of it is sent, superseding the thread's open
// question, whose agent hears cancel. Under PARLEY_QUESTIONS=off, or when
// nobody owns a question asked into a group, the agent hears cancel at once
// and nothing is rendered. It returns the question's unit, or none.
func (p *Processor) ask(ctx context.Context, log *slog.Logger, cfg Config, ev message.Event, ch Channel, intentID string, form message.Question) ([]intent.Unit, error) {
	now := p.now()
	q := questions.New(form, intentID, ev, intentID, askUnitID, now, cfg.Questions)
	reason := ""
	switch {
	case p.Questions == nil || cfg.Questions.Off:
		reason = questions.ReasonOff
	case q.Owner == "":
		person, private := privateChat(ev, ch)
		if !private {
			// Anyone in a group could answer it: "deploy?" approved by
			// whoever pressed first.
			log.Warn("question not asked: asked into a group, nobody owns it", "outcome", questions.ReasonNoOwner)
			reason = questions.ReasonNoOwner
		}
		q.Owner = person // the one person in the chat; unnamed: whoever is in it
	}
	if reason != "" {
		q.State, q.Reason = store.QuestionCancelled, reason
		q.IntentID, q.UnitID = "", ""
		if err := p.enqueueCancel(ctx, q, now); err != nil {
			return nil, err
		}
		p.questionMetric(ctx, log, now, q.ID, reason)
		return nil, nil
	}
	for range 3 {
		stored, created, err := p.Questions.AskQuestion(ctx, q)
		var conflict *store.QuestionConflictError
		if errors.As(err, &conflict) {
			if err := p.supersede(ctx, log, conflict.Current, ev, now); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("record the question: %w", err)
		}
		if created {
			p.questionMetric(ctx, log, now, q.ID, "asked")
		}
		return []intent.Unit{{ID: askUnitID, Content: message.Content{Prompt: ptr(questions.Prompt(stored))}, State: message.UnitPending}}, nil
	}
	return nil, errors.New("the thread's question kept changing under us")
}

// privateChat reports whether ev's chat is one-to-one with the bot, and the
// person in it when known: as the event says, else as its thread says.
func privateChat(ev message.Event, ch Channel) (string, bool) {
	switch {
	case ev.ChatType == message.ChatPrivate:
		return "", true
	case ev.ChatType == "" && ch.Private != nil:
		return ch.Private(ev.Thread)
	}
	return "", false
}

// supersede closes the thread's current question for a newer one: an open
// one is cancelled, and its agent hears it; one cancelled before whose
// cancel may not have been enqueued yet (it is still on the sweeper's list)
// is enqueued again, harmlessly (the cancel's own turn claim dedupes it).
func (p *Processor) supersede(ctx context.Context, log *slog.Logger, cur store.Question, ev message.Event, now time.Time) error {
	if cur.State == store.QuestionOpen {
		o := questions.Cancel(cur, questions.ReasonSuperseded, "cancel:"+cur.ID)
		next, err := p.Questions.UpdateQuestion(ctx, o.Next)
		var conflict *store.QuestionConflictError
		if errors.As(err, &conflict) {
			return nil // moved meanwhile: decide again
		}
		if err != nil {
			return fmt.Errorf("supersede question %s: %w", cur.ID, err)
		}
		cur = next
		p.questionMetric(ctx, log, now, cur.ID, "superseded")
	}
	if err := p.enqueueCancel(ctx, cur, now); err != nil {
		return err
	}
	// Off the sweeper's list: its cancel is on the queue.
	cur.Sweep = false
	if _, err := p.Questions.UpdateQuestion(ctx, cur); err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("settle superseded question %s: %w", cur.ID, err)
	}
	return nil
}

// enqueueCancel puts q's cancel on its thread's inbound group.
func (p *Processor) enqueueCancel(ctx context.Context, q store.Question, now time.Time) error {
	if p.Inbox == nil {
		return errors.New("no inbound queue to tell the agent a question was cancelled")
	}
	ev := questions.CancelEvent(q, now)
	body, err := intent.EncodeInbound(intent.Inbound{Event: ev, ReceivedAt: now})
	if err != nil {
		return err
	}
	if err := p.Inbox.Send(ctx, queue.Message{Group: ev.Thread.Key(), Dedup: ev.Key(), Body: body}); err != nil {
		return fmt.Errorf("enqueue the cancel of question %s: %w", q.ID, err)
	}
	return nil
}

// acknowledge answers a press, best effort: a spinner left hanging is a
// nuisance, not a loss.
func (p *Processor) acknowledge(ctx context.Context, log *slog.Logger, ch Channel, ev message.Event, notice string) {
	if ch.Acknowledger == nil || ev.Kind != message.KindAnswer || ev.Platform == message.Parley {
		return
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := ch.Acknowledger.Acknowledge(actx, ev, notice); err != nil {
		log.Warn("press not acknowledged", "error", err)
	}
}

// edit changes the question message (unit unitID of intent intentID) to
// prompt, best effort: the answer stands whatever the message shows. When
// ev is a press of that very message, the press edits it where the channel
// can (PressEditor), and the channel's Editor is the fallback.
func (p *Processor) edit(ctx context.Context, log *slog.Logger, ch Channel, ev message.Event, intentID, unitID string, prompt message.Prompt) {
	if ch.Editor == nil || intentID == "" || p.Intents == nil {
		return
	}
	in, err := p.Intents.GetIntent(ctx, intentID)
	if err != nil {
		log.Warn("question message not edited: its intent is unreadable", "error", err)
		return
	}
	i := in.Index(unitID)
	if i < 0 || len(in.Units[i].Receipt) == 0 {
		log.Info("question message not edited: it was not sent", "unit_id", unitID)
		return
	}
	ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	msgID, content := in.Units[i].Receipt[0], message.Content{Prompt: &prompt}
	if pe, ok := ch.Editor.(PressEditor); ok && ev.Kind == message.KindAnswer && ev.Press != nil && ev.Press.MessageID == msgID {
		err := pe.EditPressed(ectx, ev, content)
		if err == nil {
			return
		}
		log.Info("question message not edited through its press; editing it in its channel", "error", err)
	}
	if err := ch.Editor.Edit(ectx, ev.Thread, msgID, content); err != nil {
		log.Warn("question message not edited", "error", err)
	}
}

func (p *Processor) questionMetric(ctx context.Context, log *slog.Logger, now time.Time, id, outcome string) {
	log.LogAttrs(ctx, slog.LevelInfo, "question "+outcome, append([]slog.Attr{slog.String("question_id", id)},
		metrics.Count(now, metrics.Question, metrics.Dim{Name: metrics.DimOutcome, Value: outcome})...)...)
}

func ptr[T any](v T) *T { return &v }
