package fakeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
)

// Delivery is a message a fake platform accepted.
type Delivery struct {
	Platform message.Platform
	// Chat is the chat_id or channel, Thread the message_thread_id or
	// thread_ts ("" for none), ReplyTo the quoted message id.
	Chat, Thread, Text, ReplyTo string
	// At is the recorder's clock when the message was accepted.
	At time.Time
	// MessageID is what the platform answered: a Telegram message_id or a
	// Slack ts.
	MessageID string
	// Args are the call's arguments as the platform got them, by name (form
	// fields as JSON strings): what decides how the text renders
	// (parse_mode, link_names …).
	Args map[string]json.RawMessage
	// Controls are the buttons (or a select's options) the message
	// carries, in order.
	Controls []Control
}

// Control is a button, or an option of a select, on a delivered message:
// what it shows, and the data a press of it sends back.
type Control struct {
	Label, Data string
}

// Edit is a change a fake accepted to a message it delivered.
type Edit struct {
	Platform        message.Platform
	Chat, MessageID string
	Text            string
	Controls        []Control
	At              time.Time
}

// Notice is what a fake showed one person alone: the answer to a press
// (Telegram's toast, with AckID the callback query it answered), or an
// ephemeral message (Slack's, to User).
type Notice struct {
	Platform          message.Platform
	Chat, User, AckID string
	Text              string
	At                time.Time
}

// Action is a chat action (Telegram's sendChatAction) a fake accepted.
type Action struct {
	Platform     message.Platform
	Chat, Thread string
	Action       string
	// MessageID is the person's message an action is for (WhatsApp's
	// typing indicator names no chat, only the message).
	MessageID string
	At        time.Time
}

// Fault is a failure queued for the next matching send. Each fake answers
// it in its platform's own format.
type Fault struct {
	// Platform the fault applies to; empty matches every platform.
	Platform message.Platform
	// Chat, when set, restricts the fault to sends into this chat.
	Chat string
	// Status answers with this HTTP status in the platform's error format.
	// For 429, RetryAfter goes where the platform puts it (Telegram's
	// parameters.retry_after, Slack's Retry-After header), in whole seconds
	// rounded up.
	Status     int
	RetryAfter time.Duration
	// Error is the platform's own error: Slack's code, answered HTTP 200
	// {"ok":false,"error":Error} (with Retry-After when RetryAfter is set);
	// Telegram's description, answered with Status (400 when unset).
	Error string
	// DropResponseAfterCommit records the message as delivered, then closes
	// the connection without answering: the client sees an unknown outcome.
	DropResponseAfterCommit bool
	// Delay holds the answer this long (wall time). The message is still
	// handled afterwards, as a slow platform would, even if the client gave
	// up meanwhile.
	Delay time.Duration
	// Times is how many sends the fault hits. Defaults to 1.
	Times int
	// Edits makes the fault hit edits of messages (Telegram's
	// editMessageText) instead of sends: only the edits of a fake that
	// runs them through Recorder.Edit, and never a send.
	Edits bool
}

// Fails reports whether f answers with an error instead of handling the
// send.
func (f Fault) Fails() bool { return f.Status != 0 || f.Error != "" }

// RetryAfterSeconds is RetryAfter in whole seconds, rounded up, as the
// platforms write it.
func (f Fault) RetryAfterSeconds() int64 {
	return int64((f.RetryAfter + time.Second - 1) / time.Second)
}

// Options configure a Recorder.
type Options struct {
	// Now stamps deliveries and message ids. Defaults to time.Now.
	Now func() time.Time
	// Out, when set, gets one line per delivered message: the bubble, with
	// the time since the previous one. Defaults to nil: nothing is printed.
	Out io.Writer
	// PressHint, when set, is printed under each control of a printed
	// message: how to press it (make run prints a command to paste).
	PressHint func(d Delivery, c Control) string
}

// Recorder records what fake platforms accepted and queues their faults.
// Fakes that share one Recorder share one timeline: one list of
// deliveries, one fault queue, one printed conversation. It is safe for
// concurrent use.
type Recorder struct {
	opt Options

	mu        sync.Mutex
	delivered []Delivery
	actions   []Action
	edits     []Edit
	reactions []Reaction
	notices   []Notice
	drafts    []Draft
	deletions []Deletion
	faults    []Fault
	calls     int
	lastAt    time.Time
	changed   chan struct{} // closed and replaced on every delivery
}

// New returns a Recorder.
func New(opt Options) *Recorder {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Recorder{opt: opt, changed: make(chan struct{})}
}

// Delivered returns a copy of every delivered message, in acceptance order.
func (r *Recorder) Delivered() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.delivered...)
}

// Actions returns a copy of every accepted chat action.
func (r *Recorder) Actions() []Action {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Action(nil), r.actions...)
}

// Calls is the number of send attempts received, failed ones included.
func (r *Recorder) Calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// Inject queues f for the next matching send(s).
func (r *Recorder) Inject(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, f)
}

// WaitFor blocks until at least n messages were delivered, and returns them
// all. When ctx ends first it returns what was delivered and ctx's error.
func (r *Recorder) WaitFor(ctx context.Context, n int) ([]Delivery, error) {
	for {
		r.mu.Lock()
		got := append([]Delivery(nil), r.delivered...)
		changed := r.changed
		r.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return got, fmt.Errorf("fakeplatform: %d of %d deliveries: %w", len(got), n, ctx.Err())
		case <-changed:
		}
	}
}

// Refused counts a send attempt the platform refused before any fault
// could apply (a wrong token, arguments that do not parse).
func (r *Recorder) Refused() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
}

// attempt counts a send and takes the first queued fault that matches it.
func (r *Recorder) attempt(p message.Platform, chat string, edit bool) (Fault, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	for i := range r.faults {
		f := &r.faults[i]
		if (f.Platform != "" && f.Platform != p) || (f.Chat != "" && f.Chat != chat) || f.Edits != edit {
			continue
		}
		hit := *f
		if f.Times--; f.Times == 0 {
			r.faults = append(r.faults[:i], r.faults[i+1:]...)
		}
		return hit, true
	}
	return Fault{}, false
}

// deliver records d, stamping it and giving it its message id from ids
// (under the lock, so ids follow delivery order).
func (r *Recorder) deliver(d Delivery, ids IDs) Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	d.At = r.opt.Now()
	d.MessageID = ids.Next(d.Chat, d.At)
	r.delivered = append(r.delivered, d)
	if r.opt.Out != nil {
		var since time.Duration
		if len(r.delivered) > 1 {
			since = d.At.Sub(r.lastAt)
		}
		printBubble(r.opt.Out, since, d, r.opt.PressHint)
	}
	r.lastAt = d.At
	close(r.changed)
	r.changed = make(chan struct{})
	return d
}

// Act records a chat action, stamped with the recorder's clock.
func (r *Recorder) Act(a Action) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a.At = r.opt.Now()
	r.actions = append(r.actions, a)
}

// Edited records an edit, stamped with the recorder's clock, and prints it.
func (r *Recorder) Edited(e Edit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.At = r.opt.Now()
	r.edits = append(r.edits, e)
	if r.opt.Out != nil {
		printBubble(r.opt.Out, e.At.Sub(r.lastAt), Delivery{Platform: e.Platform, Chat: e.Chat, MessageID: e.MessageID, Text: "(edited) " + e.Text, Controls: e.Controls}, r.opt.PressHint)
	}
	r.lastAt = e.At
	close(r.changed)
	r.changed = make(chan struct{})
}

// Edits returns a copy of every accepted edit, in order.
func (r *Recorder) Edits() []Edit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Edit(nil), r.edits...)
}

// Notified records a notice to one person, stamped with the recorder's
// clock.
func (r *Recorder) Notified(n Notice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n.At = r.opt.Now()
	r.notices = append(r.notices, n)
	if r.opt.Out != nil && n.Text != "" {
		_, _ = fmt.Fprintf(r.opt.Out, "  (%s shows one person) %s\n", n.Platform, n.Text)
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// Notices returns a copy of every notice, in order.
func (r *Recorder) Notices() []Notice {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Notice(nil), r.notices...)
}

// Now reads the recorder's clock.
func (r *Recorder) Now() time.Time { return r.opt.Now() }

func printBubble(w io.Writer, since time.Duration, d Delivery, hint func(Delivery, Control) string) {
	head := fmt.Sprintf("[+%.2fs] %s chat=%s", since.Seconds(), d.Platform, d.Chat)
	if d.Thread != "" {
		head += " thread=" + d.Thread
	}
	head += " "
	indent := strings.Repeat(" ", utf8.RuneCountInString(head))
	var b strings.Builder
	for i, line := range strings.Split(d.Text, "\n") {
		if i == 0 {
			b.WriteString(head)
		} else {
			b.WriteString(indent)
		}
		b.WriteString("| " + line + "\n")
	}
	for _, c := range d.Controls {
		b.WriteString(indent + "  [ " + c.Label + " ]\n")
		if hint != nil {
			if h := hint(d, c); h != "" {
				b.WriteString(indent + "      " + h + "\n")
			}
		}
	}
	_, _ = io.WriteString(w, b.String())
}

// IDs issues the ids of the messages a fake accepts. A Recorder calls Next
// under its lock, so an IDs needs no lock of its own, but must not be
// shared between Recorders.
type IDs interface {
	// Next is the id of the next message accepted in chat at at.
	Next(chat string, at time.Time) string
}

// Sequence issues 1, 2, 3 … per chat, as Telegram numbers message_id.
func Sequence() IDs { return sequence{} }

type sequence map[string]int64

func (s sequence) Next(chat string, _ time.Time) string {
	s[chat]++
	return strconv.FormatInt(s[chat], 10)
}

// Timestamps issues Slack ts values: unix seconds and a microsecond
// sequence, unique and increasing per channel even when the clock stands
// still.
func Timestamps() IDs { return timestamps{} }

type timestamps map[string]int64

func (s timestamps) Next(chat string, at time.Time) string {
	us := max(at.UnixMicro(), s[chat]+1)
	s[chat] = us
	return fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
}
