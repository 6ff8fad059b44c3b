package message

import (
	"strconv"
	"strings"
)

// MaxControlData is the most a control's data may hold, in bytes: Telegram's
// callback_data limit, the tightest of the platforms (Discord custom_id 100,
// LINE postback data 300, WhatsApp reply ids 256, Slack values 2000).
const MaxControlData = 64

// Prompt is one question message as an adapter renders it: the text, and the
// controls to attach, each carrying Parley's own short data, never the
// agent's field names or values. Parley builds it from a Question and its
// state (which field is being asked, what is selected); an adapter only lays
// it out. A prompt without options and actions is a closed question: its
// text only, controls removed.
type Prompt struct {
	// Text is shown above the controls, as written (inert, like any text).
	Text string `json:"text"`
	// Options are the choices of the field being asked, in order.
	Options []Choice `json:"options,omitempty"`
	// Multi says several options may be chosen. A platform with a native
	// multi-select renders one (its presses carry every chosen option's
	// Data in Press.Values, and Select as Press.Data); one without shows
	// each option as a control that toggles it, marked when Selected.
	Multi bool `json:"multi,omitempty"`
	// Select is the data of a select menu holding Options, for platforms
	// that render many options, or a multi-select, as one menu.
	Select string `json:"select,omitempty"`
	// Actions are the controls after the options: "Done" for a
	// multi-select, "Skip" for an optional question.
	Actions []Choice `json:"actions,omitempty"`
}

// Choice is one control of a prompt.
type Choice struct {
	// Label is what the control shows.
	Label string `json:"label"`
	// Data is what a press of it carries back (Press.Data, or one of
	// Press.Values): at most MaxControlData bytes.
	Data string `json:"data"`
	// Selected marks a chosen option of a multi-select.
	Selected bool `json:"selected,omitempty"`
}

// Closed reports whether the prompt has no controls left.
func (p Prompt) Closed() bool { return len(p.Options) == 0 && len(p.Actions) == 0 }

// FallbackText renders the prompt for a platform without controls: the text,
// then the options numbered, then the actions by word, with how to answer.
// The person answers by replying with a number (or several, for a
// multi-select) or a word.
func (p Prompt) FallbackText() string {
	if p.Closed() {
		return p.Text
	}
	var b strings.Builder
	b.WriteString(p.Text)
	if len(p.Options) > 0 {
		b.WriteString("\n")
		for i, o := range p.Options {
			mark := ""
			if o.Selected {
				mark = " ✓"
			}
			b.WriteString("\n" + strconv.Itoa(i+1) + ". " + o.Label + mark)
		}
		b.WriteString("\n\n")
		if p.Multi {
			b.WriteString("Reply with the numbers you choose, like 1 3.")
		} else {
			b.WriteString("Reply with a number.")
		}
	}
	if len(p.Actions) > 0 {
		words := make([]string, len(p.Actions))
		for i, a := range p.Actions {
			words[i] = strings.ToLower(a.Label)
		}
		b.WriteString("\nOr reply " + strings.Join(words, " or ") + ".")
	}
	return b.String()
}
