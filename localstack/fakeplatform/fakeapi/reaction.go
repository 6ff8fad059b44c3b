package fakeapi

import (
	"fmt"
	"slices"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// Reaction is a change a fake accepted to the bot's reactions on a message:
// one set (Emoji), one taken back (Removed), or, where the platform keeps
// one reaction per message and replaces it (Telegram, WhatsApp), the whole
// set replaced by Emoji ("" clears it).
type Reaction struct {
	Platform        message.Platform
	Chat, MessageID string
	Emoji           string
	Removed         bool
	Replace         bool
	At              time.Time
}

// Reacted records a change to the bot's reactions, stamped with the
// recorder's clock, and prints it.
func (r *Recorder) Reacted(x Reaction) {
	r.mu.Lock()
	defer r.mu.Unlock()
	x.At = r.opt.Now()
	r.reactions = append(r.reactions, x)
	if r.opt.Out != nil {
		verb := "reacts"
		if x.Removed {
			verb = "takes back"
		}
		_, _ = fmt.Fprintf(r.opt.Out, "  (%s %s %s on message %s)\n", x.Platform, verb, x.Emoji, x.MessageID)
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// Reactions returns a copy of every reaction change, in order.
func (r *Recorder) Reactions() []Reaction {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reactions)
}

// ReactionsOn is the bot's reactions on a message now, from the changes
// it accepted, in the order they were set.
func (r *Recorder) ReactionsOn(p message.Platform, chat, messageID string) []string {
	var on []string
	for _, x := range r.Reactions() {
		if x.Platform != p || x.Chat != chat || x.MessageID != messageID {
			continue
		}
		switch {
		case x.Replace:
			on = nil
			if x.Emoji != "" {
				on = []string{x.Emoji}
			}
		case x.Removed:
			on = slices.DeleteFunc(on, func(e string) bool { return e == x.Emoji })
		case !slices.Contains(on, x.Emoji):
			on = append(on, x.Emoji)
		}
	}
	return on
}
