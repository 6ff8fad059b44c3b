package console

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/operator"
	"github.com/parleyhq/parley/shared/platform/registry"
)

// Control is a control on a bubble: pressing it posts the platform's press
// webhook (POST /api/press with the bubble's message and its index).
type Control struct {
	Label string `json:"label"`
}

// Item is one thing a conversation shows, as the person sees it.
type Item struct {
	// Kind is person (what someone wrote or pressed), bubble (what the
	// platform received from Parley), notice (what it showed one person),
	// or held (a unit Parley planned and has not sent).
	Kind string    `json:"kind"`
	At   time.Time `json:"at"`
	// SinceMS is a bubble's time since the bubble before it in the
	// conversation.
	SinceMS int64  `json:"since_ms,omitempty"`
	Text    string `json:"text"`
	Sender  string `json:"sender,omitempty"`
	// Content is what a bubble carries: text, or prompt (a question with
	// controls). The page draws each kind its own way; a kind it does not
	// know yet (a live preview, media) it shows as such.
	Content  string    `json:"content,omitempty"`
	Controls []Control `json:"controls,omitempty"`
	Edited   bool      `json:"edited,omitempty"`
	// Platform, Chat and MessageID name a bubble on its platform (a
	// press's target).
	Platform  string `json:"platform,omitempty"`
	Chat      string `json:"chat,omitempty"`
	MessageID string `json:"message_id,omitempty"`
	// CorrelationID is the message's event key: its timeline's key.
	CorrelationID string `json:"correlation_id,omitempty"`
	Unit          string `json:"unit,omitempty"`
	State         string `json:"state,omitempty"`
	Note          string `json:"note,omitempty"`
}

// Conversation is one thread, drawn as its person sees it.
type Conversation struct {
	Thread   string `json:"thread"`
	Platform string `json:"platform"`
	ChatType string `json:"chat_type,omitempty"`
	Items    []Item `json:"items"`
}

// Composer says where the composer can write.
type Composer struct {
	Platform  string   `json:"platform"`
	ChatTypes []string `json:"chat_types"`
}

// State is everything the page draws.
type State struct {
	Conversations []Conversation  `json:"conversations"`
	Attention     []operator.Item `json:"attention"`
	Composer      []Composer      `json:"composer"`
	Notes         []string        `json:"notes,omitempty"`
}

// event is a message the log names.
type event struct {
	key, thread, kind string
	at                time.Time
}

// state reads what the functions keep (the log's events, their intents,
// the attention list) and what the fake platforms received, and draws
// every conversation.
func (c *Console) state(ctx context.Context) (State, error) {
	st := State{Conversations: []Conversation{}, Attention: []operator.Item{}}
	for _, a := range registry.Chat() {
		st.Composer = append(st.Composer, Composer{Platform: string(a.Platform()), ChatTypes: fakeplatform.ChatTypes(a.Platform())})
	}
	events, err := c.inbound(ctx)
	if err != nil {
		st.Notes = append(st.Notes, err.Error())
	}
	convs := map[string]*Conversation{}
	conv := func(thread string) *Conversation {
		cv, ok := convs[thread]
		if !ok {
			p, _, _ := strings.Cut(thread, ":")
			cv = &Conversation{Thread: thread, Platform: p, Items: []Item{}}
			convs[thread] = cv
		}
		return cv
	}
	// Bubbles are found by their platform message ids in the units'
	// receipts; a thread by its platform, chat and thread.
	type place struct{ platform, chat, thread string }
	byReceipt := map[string]Item{}
	threads := map[place]string{}
	c.mu.Lock()
	said := make(map[string]said, len(c.said))
	for k, v := range c.said {
		said[k] = v
	}
	c.mu.Unlock()
	for _, ev := range events {
		cv := conv(ev.thread)
		s, mine := said[ev.key]
		it := Item{Kind: "person", At: ev.at, CorrelationID: ev.key}
		switch {
		case mine && s.Press:
			it.Text, it.Sender, it.Note = s.Text, s.Sender, "pressed"
		case mine:
			it.Text, it.Sender, cv.ChatType = s.Text, s.Sender, s.ChatType
		case ev.kind == string(message.KindAnswer):
			it.Text, it.Note = "(a press)", "pressed outside the console"
		case ev.kind == string(message.KindMessage) || ev.kind == "":
			it.Text, it.Note = "(a message posted outside the console: Parley keeps no text of what people write)", "outside"
		default:
			it.Text, it.Note = "("+ev.kind+")", ev.kind
		}
		cv.Items = append(cv.Items, it)
		in, err := c.opt.Operator.Store.GetIntent(ctx, intent.IDFor(ev.key))
		if err != nil {
			continue
		}
		t := in.Thread
		threads[place{string(t.Platform), t.Chat, t.Thread}] = t.Key()
		for _, u := range in.Units {
			unit := Item{CorrelationID: ev.key, Unit: intent.UnitKey(in.ID, u.ID), State: string(u.State), Content: string(u.Content.Kind())}
			for _, id := range u.Receipt {
				byReceipt[string(t.Platform)+"|"+t.Chat+"|"+id] = unit
			}
			if u.State != message.UnitSent {
				// Planned and not (known to be) sent: shown where it
				// would go, for an operator.
				unit.Kind, unit.At, unit.Text = "held", u.UpdatedAt, unitText(u)
				if unit.At.IsZero() {
					unit.At = in.CreatedAt
				}
				unit.Note = string(u.State)
				if u.FailureClass != "" {
					unit.Note += " (" + string(u.FailureClass) + ": " + u.FailureReason + ")"
				}
				cv := conv(t.Key())
				cv.Items = append(cv.Items, unit)
			}
		}
	}
	for _, d := range withEdits(c.opt.Recorder) {
		it := Item{Kind: "bubble", At: d.At, Text: d.Text, Platform: string(d.Platform), Chat: d.Chat, MessageID: d.MessageID, Content: "text", Edited: d.edited}
		for _, ctl := range d.Controls {
			it.Controls = append(it.Controls, Control{Label: ctl.Label})
		}
		if len(it.Controls) > 0 {
			it.Content = "prompt"
		}
		thread := threads[place{string(d.Platform), d.Chat, d.Thread}]
		if u, ok := byReceipt[string(d.Platform)+"|"+d.Chat+"|"+d.MessageID]; ok {
			it.CorrelationID, it.Unit, it.State = u.CorrelationID, u.Unit, u.State
			if u.Content != "" {
				it.Content = u.Content
			}
		} else {
			it.Note = "no unit's receipt names this message (its send's answer was lost?)"
		}
		if thread == "" {
			thread = string(d.Platform) + ":?:" + d.Chat
			if d.Thread != "" {
				thread += ":" + d.Thread
			}
		}
		cv := conv(thread)
		cv.Items = append(cv.Items, it)
	}
	for _, n := range c.opt.Recorder.Notices() {
		for _, cv := range convs {
			if cv.Platform == string(n.Platform) && strings.Contains(cv.Thread, ":"+n.Chat) && n.Text != "" {
				cv.Items = append(cv.Items, Item{Kind: "notice", At: n.At, Text: n.Text, Platform: string(n.Platform)})
				break
			}
		}
	}
	for _, cv := range convs {
		slices.SortStableFunc(cv.Items, func(a, b Item) int { return a.At.Compare(b.At) })
		var last time.Time
		for i := range cv.Items {
			if cv.Items[i].Kind != "bubble" {
				continue
			}
			if !last.IsZero() {
				cv.Items[i].SinceMS = cv.Items[i].At.Sub(last).Milliseconds()
			}
			last = cv.Items[i].At
		}
		st.Conversations = append(st.Conversations, *cv)
	}
	// The newest conversation first.
	slices.SortFunc(st.Conversations, func(a, b Conversation) int {
		return lastAt(b).Compare(lastAt(a))
	})
	items, notes, err := c.opt.Operator.Attention(ctx)
	if err != nil {
		st.Notes = append(st.Notes, "the attention list: "+err.Error())
	} else if items != nil {
		st.Attention = items
	}
	st.Notes = append(st.Notes, notes...)
	return st, nil
}

func lastAt(c Conversation) time.Time {
	if len(c.Items) == 0 {
		return time.Time{}
	}
	return c.Items[len(c.Items)-1].At
}

func unitText(u intent.Unit) string {
	if u.Content.Prompt != nil {
		return u.Content.Prompt.Text
	}
	if r := u.Content.React; r != nil {
		return "(reaction " + r.Emoji + ")"
	}
	return u.Content.Text
}

// events_ lists the events the log names at ingress, oldest first: a
// person's messages and presses, an agent's sends, proactive events.
func (c *Console) inbound(ctx context.Context) ([]event, error) {
	logs, ok := c.opt.Operator.Logs.(operator.FileLogs)
	if !ok {
		return nil, fmt.Errorf("the console reads make run's log file")
	}
	seen := map[string]bool{}
	var out []event
	err := logs.Each(ctx, `"event_key"`, func(l operator.Line) bool {
		key, thread := l.Field("event_key"), l.Field("thread_key")
		if key == "" || thread == "" || seen[key] || l.Field("kind") == string(message.KindStatus) {
			return true
		}
		if l.Msg != "event accepted" && l.Msg != "event suppressed" {
			return true
		}
		seen[key] = true
		out = append(out, event{key: key, thread: thread, kind: l.Field("kind"), at: l.Time})
		return true
	})
	return out, err
}

// delivered is a delivery with its last edit applied.
type delivered struct {
	fakeapi.Delivery
	edited bool
}

// withEdits are the recorder's deliveries, each as its last edit left it.
func withEdits(r *fakeapi.Recorder) []delivered {
	ds := r.Delivered()
	out := make([]delivered, len(ds))
	for i, d := range ds {
		out[i] = delivered{Delivery: d}
	}
	for _, e := range r.Edits() {
		for i := range out {
			d := &out[i]
			if d.Platform == e.Platform && d.Chat == e.Chat && d.MessageID == e.MessageID {
				d.Text, d.Controls, d.edited = e.Text, e.Controls, true
			}
		}
	}
	return out
}

// events streams a change notice whenever what the page draws may have
// changed: a delivery, an edit or a notice at a fake platform, or a new
// line in the functions' log (every step of a message writes one).
func (c *Console) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		problem(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, "retry: 1000\n\n")
	flusher.Flush()
	last := ""
	tick := time.NewTicker(c.opt.Poll)
	defer tick.Stop()
	beat := time.Now()
	for {
		v := c.version()
		if v != last {
			last = v
			_, _ = fmt.Fprintf(w, "event: change\ndata: %s\n\n", v)
			flusher.Flush()
		} else if time.Since(beat) > 15*time.Second {
			_, _ = fmt.Fprint(w, ": beat\n\n")
			flusher.Flush()
			beat = time.Now()
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// version changes whenever the page may need drawing again.
func (c *Console) version() string {
	rec := c.opt.Recorder
	size := int64(0)
	if fi, err := os.Stat(c.opt.Operator.Target.LogFile); err == nil {
		size = fi.Size()
	}
	c.mu.Lock()
	n := len(c.said)
	c.mu.Unlock()
	return fmt.Sprintf("%d.%d.%d.%d.%d", len(rec.Delivered()), len(rec.Edits()), len(rec.Notices()), size, n)
}
