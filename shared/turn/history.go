package turn

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// History is the transcript store as the turn uses it (PARLEY_HISTORY):
// one record per thread, written over the version read.
type History interface {
	GetHistory(ctx context.Context, threadKey string, now time.Time) (store.History, error)
	PutHistory(ctx context.Context, h store.History, now time.Time, ttl time.Duration) error
	// GetIntents reads the intents of the record's open turns, in one
	// call: what they delivered is recorded from their receipts.
	GetIntents(ctx context.Context, ids []string) (map[string]intent.Intent, error)
}

// MaxRequestBytes bounds a turn request's body: the history it carries is
// cut (oldest first) to keep the request within it, as the echo agent and
// a careful agent limit what they read.
const MaxRequestBytes = 1 << 20

// heardAt is one event a turn answers, with when Parley received it (the
// time its transcript entry is kept at, beside the bubbles' send times).
type heardAt struct {
	ev message.Event
	at time.Time
}

// converse brings the thread's transcript up to date for a turn and
// returns what the turn request carries of it: the transcript before the
// turn's own events, and those events with what they quote filled in from
// it. Up to date means: the bubbles the thread's open turns delivered
// since the last write (from their receipts), the turn's events as the
// person's entries (or an edit or deletion of one), and the turn (intentID)
// open, so that the next write records what its reply delivers. The write
// is a compare-and-set on the record's version, tried again on a conflict.
// With history off, it only returns the events as they are.
func (p *Processor) converse(ctx context.Context, log *slog.Logger, cfg Config, evs []heardAt, intentID string, answer *agent.Answer) ([]history.Entry, []message.Event, error) {
	out := make([]message.Event, len(evs))
	for i, e := range evs {
		out[i] = e.ev
	}
	hc := cfg.History
	if p.History == nil || !hc.On() || len(evs) == 0 {
		return nil, out, nil
	}
	thread := evs[0].ev.Thread
	now := p.now()
	for range 3 {
		h, err := p.History.GetHistory(ctx, thread.Key(), now)
		if err != nil {
			return nil, nil, fmt.Errorf("read history: %w", err)
		}
		open, delivered, err := p.deliveredSince(ctx, h.Open)
		if err != nil {
			return nil, nil, err
		}
		entries := hc.Merge(h.Entries, delivered...)
		own := map[string]bool{}
		for _, e := range evs {
			own[e.ev.Key()] = true
		}
		for i := range out {
			p.quote(ctx, log, hc, &out[i], entries, now)
		}
		seen := history.Recent(entries, hc.Bytes, func(e history.Entry) bool { return own[e.ID] })
		for i, e := range evs {
			entries = record(hc, entries, out[i], e.at, answer)
		}
		if intentID != "" && !slices.Contains(open, intentID) {
			open = append(open, intentID)
		}
		if len(open) > store.MaxOpen {
			open = open[len(open)-store.MaxOpen:]
		}
		if slices.Equal(open, h.Open) && sameEntries(entries, h.Entries) {
			return seen, out, nil // a retry of this turn: written already
		}
		err = p.History.PutHistory(ctx, store.History{ThreadKey: thread.Key(), Entries: entries, Open: open, Version: h.Version}, now, hc.TTL)
		var conflict *store.HistoryConflictError
		switch {
		case errors.As(err, &conflict):
			continue
		case errors.Is(err, store.ErrInvalid):
			// The same write fails on every try: the turn goes on without
			// it, never held back or asked of the agent again for it.
			log.Error("the thread's history cannot be stored; the turn goes on without recording it", "outcome", "history_invalid", "error", err)
			return seen, out, nil
		case err != nil:
			return nil, nil, fmt.Errorf("write history: %w", err)
		}
		return seen, out, nil
	}
	return nil, nil, errors.New("the thread's history kept changing under us")
}

// deliveredSince reads the open turns' intents and returns the ones still
// delivering and the bubbles they all delivered: every sent unit, as its
// receipt names it. A turn whose units are all settled, or whose intent is
// gone (it never had one, or it expired), is closed.
func (p *Processor) deliveredSince(ctx context.Context, ids []string) ([]string, []history.Entry, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	intents, err := p.History.GetIntents(ctx, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("read the open turns of the history: %w", err)
	}
	var open []string
	var out []history.Entry
	for _, id := range ids {
		in, ok := intents[id]
		if !ok {
			continue
		}
		if in.FirstOpen() < len(in.Units) {
			open = append(open, id)
		}
		out = append(out, bubbles(in)...)
	}
	return open, out, nil
}

// bubbles are in's units the platform accepted, as transcript entries:
// what the person saw, each with its message ids and turn.
func bubbles(in intent.Intent) []history.Entry {
	var out []history.Entry
	for _, u := range in.Units {
		if u.State != message.UnitSent {
			continue
		}
		text := u.Content.Text
		var files []history.File
		switch {
		case u.Content.Prompt != nil:
			text = u.Content.Prompt.Text
		case u.Content.React != nil:
			continue // a reaction is no bubble
		case u.Content.Media != nil:
			m := u.Content.Media
			text, files = m.Caption, []history.File{history.NewFile(string(m.Kind), m.Name, "")}
		}
		role := history.RoleAgent
		if u.Parley {
			role = history.RoleParley
		}
		out = append(out, history.Entry{
			ID: intent.UnitKey(in.ID, u.ID), Role: role, Kind: history.KindBubble, Text: text,
			MessageIDs: slices.Clone(u.Receipt), TurnID: in.ID, Time: u.SentAt, Files: files,
		})
	}
	return out
}

// record changes entries for one of the turn's events: a person's message,
// answer or reaction is added; an edit or a deletion changes the message
// it names. Parley's own events and the agent's sends add nothing.
func record(hc history.Config, entries []history.Entry, ev message.Event, at time.Time, answer *agent.Answer) []history.Entry {
	if ev.Platform == message.Parley {
		return entries
	}
	e := history.Entry{ID: ev.Key(), Role: history.RolePerson, Kind: history.KindMessage, Text: ev.Text, Time: at}
	if ev.Sender.ID != "" {
		s := ev.Sender
		e.Sender = &s
	}
	if ev.MessageID != "" {
		e.MessageIDs = []string{ev.MessageID}
	}
	for _, a := range ev.Attachments {
		e.Files = append(e.Files, history.NewFile(string(a.Kind), a.Name, a.MIME))
	}
	if answer != nil && ev.Kind != message.KindReaction {
		e.Answer = &history.Answer{QuestionID: answer.QuestionID, Action: answer.Action, Content: answer.Content}
	}
	switch ev.Kind {
	case message.KindMessage:
	case message.KindAnswer:
		if e.Answer == nil {
			return entries
		}
		e.Kind, e.MessageIDs = history.KindAnswer, nil
	case message.KindReaction:
		if ev.Reaction == nil {
			return entries
		}
		r := *ev.Reaction
		e.Kind, e.Text, e.MessageIDs, e.Reaction = history.KindReaction, "", nil, &r
	case message.KindEdit:
		if edited, ok := history.Edit(entries, ev.MessageID, ev.Text); ok {
			return hc.Trim(edited)
		}
		return entries
	case message.KindDelete:
		if kept, ok := history.Delete(entries, ev.MessageID); ok {
			return kept
		}
		return entries
	default:
		return entries
	}
	return hc.Merge(entries, e)
}

// quote fills in what ev quotes or reacts to from the thread's transcript
// (and, for a reply in a thread of a chat, from the chat's own transcript,
// where a bubble sent before the thread began lives: a Slack thread
// started on one of Parley's messages). What the platform said stays; the
// transcript adds the text, the author and, for a bubble, its turn.
func (p *Processor) quote(ctx context.Context, log *slog.Logger, hc history.Config, ev *message.Event, entries []history.Entry, now time.Time) {
	id := ev.ReplyTo
	if ev.Kind == message.KindReaction && ev.Reaction != nil {
		id = ev.Reaction.MessageID
	}
	if ev.Quote != nil && ev.Quote.MessageID != "" {
		id = ev.Quote.MessageID
	}
	if id == "" {
		return
	}
	e, ok := history.Find(entries, id)
	if !ok && ev.Thread.Thread != "" {
		chat := ev.Thread
		chat.Thread = ""
		h, err := p.History.GetHistory(ctx, chat.Key(), now)
		if err != nil {
			log.Warn("read the chat's history for a quote failed; the quote is left as the platform gave it", "error", err)
			return
		}
		// The chat's last bubbles may not be in its record yet: its next
		// turn records them. Read them from their turns, writing nothing.
		_, delivered, err := p.deliveredSince(ctx, h.Open)
		if err != nil {
			log.Warn("read the chat's open turns for a quote failed; the quote is left as the platform gave it", "error", err)
			return
		}
		e, ok = history.Find(hc.Merge(h.Entries, delivered...), id)
	}
	if !ok {
		return
	}
	q := history.Quote(e, id)
	if given := ev.Quote; given != nil {
		q.Text = cmp.Or(given.Text, q.Text)
		if given.Sender != nil {
			q.Sender = given.Sender
		}
		q.Parley = q.Parley || given.Parley
	}
	ev.Quote = q
}

// sameEntries reports whether a and b hold the same entries.
func sameEntries(a, b []history.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// fitHistory is seen, cut from its oldest entry until req carrying it is
// within MaxRequestBytes.
func fitHistory(req agent.TurnRequest, seen []history.Entry) []history.Entry {
	if len(seen) == 0 {
		return nil
	}
	req.History = nil
	b, _ := json.Marshal(req)
	room := MaxRequestBytes - len(b) - len(`,"history":`)
	return history.Recent(seen, room, nil)
}
