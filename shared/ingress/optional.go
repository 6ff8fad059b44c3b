package ingress

import (
	"fmt"
	"slices"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Optional is which of a person's actions besides a new message the
// deployment takes: reactions (PARLEY_REACTIONS), and edits and deletions
// (PARLEY_EDITS). The zero value takes none: receivers parse them, and the
// core ignores them before any write, at no cost.
type Optional struct {
	// Reactions takes reactions to messages (message.KindReaction).
	Reactions bool
	// Emoji, when set, are the only reactions taken (a removed reaction
	// whose emoji the platform does not name is not one of them): a
	// deployment that wants 👎 heard need not wake its agent for every 👍.
	Emoji []string
	// TriageReactions puts the reactions taken through the thread's
	// triage policy (PARLEY_TRIAGE: quiet hours, cooldown, daily cap) as
	// proactive events are: a reaction the policy refuses is suppressed.
	TriageReactions bool
	// Edits takes edits and deletions of a person's messages
	// (message.KindEdit, message.KindDelete).
	Edits bool
}

// ParseReactions reads PARLEY_REACTIONS: "off" (or empty), "on" (every
// reaction), or a comma-separated list of the emoji that are taken; either
// may add "triage" (reactions go through the triage policy).
func ParseReactions(s string) (Optional, error) {
	var o Optional
	for part := range strings.SplitSeq(s, ",") {
		switch part = strings.TrimSpace(part); part {
		case "", "off":
		case "on":
			o.Reactions = true
		case "triage":
			o.TriageReactions = true
		default:
			if strings.ContainsAny(part, " \t") || len(part) > 64 {
				return Optional{}, fmt.Errorf("%q is not an emoji: want off, on, or emoji separated by commas, optionally with triage", part)
			}
			o.Reactions = true
			o.Emoji = append(o.Emoji, part)
		}
	}
	if o.TriageReactions && !o.Reactions {
		return Optional{}, fmt.Errorf("triage names no reactions to triage: add on, or the emoji to take")
	}
	return o, nil
}

// admits reports whether ev is taken, and the stable reason of an
// optional event that is not (the reasons an edit and a deletion had
// before they were events: "edited", "deleted"; "reaction").
func (o Optional) admits(ev message.Event) (bool, string) {
	switch ev.Kind {
	case message.KindReaction:
		if !o.Reactions || ev.Reaction == nil {
			return false, platform.IgnoredReaction
		}
		if len(o.Emoji) > 0 && !slices.Contains(o.Emoji, ev.Reaction.Emoji) {
			return false, platform.IgnoredReaction
		}
	case message.KindEdit:
		if !o.Edits {
			return false, platform.IgnoredEdited
		}
	case message.KindDelete:
		if !o.Edits {
			return false, platform.IgnoredDeleted
		}
	}
	return true, ""
}

// triaged reports whether ev goes through triage: a proactive event, or a
// reaction when the deployment asks for it.
func (o Optional) triaged(ev message.Event) bool {
	return ev.Proactive() || (ev.Kind == message.KindReaction && o.TriageReactions)
}
