package fakeapi

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// Draft is a preview a fake showed that is no message (Telegram's
// sendMessageDraft): it animates under its DraftID and expires on its own.
type Draft struct {
	Platform     message.Platform
	Chat, Thread string
	DraftID      string
	Text         string
	At           time.Time
	// Args are the call's arguments as the platform got them, by name.
	Args map[string]json.RawMessage
}

// Deletion is a message a fake deleted.
type Deletion struct {
	Platform        message.Platform
	Chat, MessageID string
	At              time.Time
}

// Drafted records a draft, stamped with the recorder's clock, and prints it.
func (r *Recorder) Drafted(d Draft) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d.At = r.opt.Now()
	r.drafts = append(r.drafts, d)
	if r.opt.Out != nil {
		printBubble(r.opt.Out, d.At.Sub(r.lastAt), Delivery{Platform: d.Platform, Chat: d.Chat, Thread: d.Thread, Text: "(draft) " + d.Text}, nil)
	}
	r.lastAt = d.At
	r.changedLocked()
}

// Drafts returns a copy of every draft, in order.
func (r *Recorder) Drafts() []Draft {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Draft(nil), r.drafts...)
}

// Deleted records a deletion, stamped with the recorder's clock.
func (r *Recorder) Deleted(d Deletion) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d.At = r.opt.Now()
	r.deletions = append(r.deletions, d)
	if r.opt.Out != nil {
		_, _ = fmt.Fprintf(r.opt.Out, "[+%.2fs] %s chat=%s (deleted message %s)\n", d.At.Sub(r.lastAt).Seconds(), d.Platform, d.Chat, d.MessageID)
	}
	r.lastAt = d.At
	r.changedLocked()
}

// Deletions returns a copy of every deletion, in order.
func (r *Recorder) Deletions() []Deletion {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Deletion(nil), r.deletions...)
}

// Visible is what a person sees in chat now: every delivered message of the
// platform there that was not deleted, with its newest edit's text, in
// delivery order.
func (r *Recorder) Visible(p message.Platform, chat string) []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	gone := map[string]bool{}
	for _, d := range r.deletions {
		if d.Platform == p && d.Chat == chat {
			gone[d.MessageID] = true
		}
	}
	var out []Delivery
	for _, d := range r.delivered {
		if d.Platform != p || d.Chat != chat || gone[d.MessageID] {
			continue
		}
		for _, e := range r.edits {
			if e.Platform == p && e.Chat == chat && e.MessageID == d.MessageID {
				d.Text = e.Text
			}
		}
		out = append(out, d)
	}
	return out
}

// IsDeleted reports whether the message was deleted.
func (r *Recorder) IsDeleted(p message.Platform, chat, messageID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.deletions {
		if d.Platform == p && d.Chat == chat && d.MessageID == messageID {
			return true
		}
	}
	return false
}

// changedLocked wakes WaitFor's callers; r.mu is held.
func (r *Recorder) changedLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}
