package envelope

import (
	"strconv"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/split"
)

// checkPrompts refuses a question that its platform could not show: each
// field is asked in one message holding the question's message, the
// field's title, description and how to answer it
// (message.Question.PromptText), and, where the platform may show it
// instead (caps.TextForm, or no Buttons), the numbered text form with its
// options (Prompt.FallbackText, every option of a multi-select marked
// chosen, its longest). Each must fit caps.TextLimit (caps.PromptLimit
// where less), counted by caps.Counting: every adapter renders that much
// text within its platform's limits, after making it inert (Discord's
// TextLimit is half of what it takes, since escaping can double a text),
// and split.Count counts as the platforms do. A question message is
// never split, so one over the limit would be refused by the platform and
// stay open, unseen.
func checkPrompts(a *Ask, caps message.Capabilities) error {
	limit := caps.TextLimit
	if caps.PromptLimit > 0 && caps.PromptLimit < limit {
		limit = caps.PromptLimit
	}
	if limit <= 0 {
		return nil
	}
	textForm := caps.TextForm || !caps.Buttons
	for i, f := range a.Fields {
		var selected []string
		if f.Kind == message.FieldMultiSelect {
			for _, o := range f.Options {
				selected = append(selected, o.Value)
			}
		}
		p := a.Question.Prompt(i, selected, placeholders{})
		n := split.Count(p.Text, caps.Counting)
		if textForm {
			n = max(n, split.Count(p.FallbackText(), caps.Counting))
		}
		if n > limit {
			return &LimitError{Limit: LimitPromptChars, Max: limit, Got: n, BubbleID: "ask", Field: f.ID}
		}
	}
	return nil
}

// placeholders are control data for a prompt whose text alone is wanted.
type placeholders struct{}

func (placeholders) Option(field, option int) string {
	return strconv.Itoa(field) + ":" + strconv.Itoa(option)
}
func (placeholders) Done(field int) string   { return strconv.Itoa(field) + ":d" }
func (placeholders) Select(field int) string { return strconv.Itoa(field) + ":s" }
func (placeholders) Skip() string            { return "x" }
