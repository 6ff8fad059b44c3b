package line

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
)

// Quick reply limits (https://developers.line.biz/en/reference/messaging-api/#quick-reply).
const (
	// MaxQuickReplies is the most buttons a message's quick reply holds.
	MaxQuickReplies = 13
	// MaxLabel is the most a button's label holds. LINE counts labels in
	// grapheme clusters; Parley cuts them by code points, each at least part
	// of one cluster, so a label of MaxLabel code points always fits.
	MaxLabel = 20
	// MaxDisplayText is the most the text a tap shows in the chat holds
	// (grapheme clusters; cut by code points, likewise).
	MaxDisplayText = 300
	// MaxPostbackData is the most a postback's data holds, in UTF-16 code
	// units.
	MaxPostbackData = 300
)

// promptMessage lays a question out as one text message with quick
// replies, postback buttons whose data is the control's Choice.Data and
// whose tap shows the full label in the chat as the person's answer:
//
//   - a closed question: its text alone;
//   - one choice among at most MaxQuickReplies options and actions: the
//     text, a button per option, then per action;
//   - more options than that, or a multi-select: the numbered text form
//     (Prompt.FallbackText), answered by writing numbers, with buttons for
//     the actions only (Done, Skip), which stay one tap. LINE has no
//     multi-select control, and a quick reply is gone once tapped and
//     cannot be edited back, so toggles would vanish at the first tap.
//
// A label over MaxLabel is cut to MaxLabel-1 code points and "…". When two
// buttons would then read the same, the options are numbered ("1. Lisbon,
// the old to…") and the text is the numbered form with every label in full,
// so that which is which is never lost.
func promptMessage(p message.Prompt, quote string) (LineTextMessage, error) {
	msg := textMessage(p.Text, quote)
	if p.Closed() {
		return msg, nil
	}
	native := !p.Multi && len(p.Options)+len(p.Actions) <= MaxQuickReplies
	var options []message.Choice
	if native {
		options = p.Options
	} else {
		msg.Text = p.FallbackText()
	}
	actions := p.Actions
	if len(options)+len(actions) > MaxQuickReplies {
		// More actions than buttons: the text form names them all.
		actions = nil
	}
	choices := make([]message.Choice, 0, len(options)+len(actions))
	choices = append(append(choices, options...), actions...)

	labels := make([]string, len(choices))
	seen := map[string]bool{}
	clash := false
	for i, ch := range choices {
		labels[i] = cut(labelOf(ch, i), MaxLabel)
		clash = clash || seen[labels[i]]
		seen[labels[i]] = true
	}
	if clash && len(options) > 0 {
		msg.Text = p.FallbackText()
		for i, ch := range options {
			prefix := strconv.Itoa(i+1) + ". "
			labels[i] = prefix + cut(labelOf(ch, i), MaxLabel-utf8.RuneCountInString(prefix))
		}
	}

	items := make([]LineQuickReplyItem, 0, len(choices))
	for i, ch := range choices {
		if ch.Data == "" || len(utf16.Encode([]rune(ch.Data))) > MaxPostbackData {
			return LineTextMessage{}, &message.SendError{Class: message.FailInvalidPayload,
				Reason: "a question's control data is empty or over " + strconv.Itoa(MaxPostbackData) + " UTF-16 code units"}
		}
		items = append(items, LineQuickReplyItem{Type: "action", Action: LinePostbackAction{
			Type: "postback", Label: labels[i], Data: ch.Data, DisplayText: cut(labelOf(ch, i), MaxDisplayText),
		}})
	}
	if len(items) > 0 {
		msg.QuickReply = &LineQuickReply{Items: items}
	}
	return msg, nil
}

// labelOf is what a control shows: its label, or its number when it has
// none (LINE refuses an empty label).
func labelOf(ch message.Choice, i int) string {
	if ch.Label == "" {
		return "#" + strconv.Itoa(i+1)
	}
	return ch.Label
}

// cut shortens s to at most n code points, the last one "…" when it cut
// (after the words it kept, not after a space).
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, kept := 0, 0
	for kept < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		kept++
	}
	return strings.TrimRight(s[:i], " ") + "…"
}
