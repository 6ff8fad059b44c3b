package teams

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
)

// Adaptive Card limits Parley keeps to.
const (
	// CardVersion is the schema version of Parley's cards: 1.4, which
	// every Teams client renders (RichTextBlock 1.2, associatedInputs 1.3).
	CardVersion = "1.4"
	// MaxButtons is how many buttons a card shows before its options go
	// into a choice set: Teams renders at most 6 actions.
	MaxButtons = 6
	// MaxTitle bounds a button's or a choice's title, in code points.
	MaxTitle = 100
	// MaxChoices bounds a choice set's options.
	MaxChoices = 100
	// ContentTypeAdaptiveCard is an Adaptive Card attachment's type.
	ContentTypeAdaptiveCard = "application/vnd.microsoft.card.adaptive"
)

// cardActivity is a prompt as a message holding one Adaptive Card. The
// prompt's text is a TextRun of a RichTextBlock, which renders no markdown
// (a TextBlock would). Its options are Action.Submit buttons, each
// submitting {"parley": <its data>}, while the options and actions fit
// MaxButtons and a multi-select toggles them; else one Input.ChoiceSet
// (ChoiceKey; multi-select when the prompt is) and a submit button with
// the prompt's Select data. The actions (Done, Skip) are buttons that
// submit no input. A closed prompt is its text alone.
func cardActivity(p message.Prompt) (TeamsActivity, error) {
	card := map[string]any{
		"type":    "AdaptiveCard",
		"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
		"version": CardVersion,
		"body": []any{map[string]any{
			"type": "RichTextBlock", "inlines": []any{map[string]any{"type": "TextRun", "text": p.Text}},
		}},
	}
	seen := map[string]bool{}
	for _, c := range append(append([]message.Choice{}, p.Options...), p.Actions...) {
		if err := checkData(c.Data, seen); err != nil {
			return TeamsActivity{}, err
		}
	}
	var actions []any
	if !p.Closed() {
		asSet := len(p.Options)+len(p.Actions) > MaxButtons || (p.Multi && p.Select != "")
		switch {
		case asSet && len(p.Options) > 0:
			if err := checkData(p.Select, seen); err != nil {
				return TeamsActivity{}, invalid("a prompt with more options than buttons needs a select")
			}
			if len(p.Options) > MaxChoices {
				return TeamsActivity{}, invalid("a choice set holds at most " + strconv.Itoa(MaxChoices) + " options")
			}
			var chosen []string
			var items []any
			for _, o := range p.Options {
				items = append(items, map[string]any{"title": title(o.Label, false), "value": o.Data})
				if o.Selected {
					chosen = append(chosen, o.Data)
				}
			}
			set := map[string]any{"type": "Input.ChoiceSet", "id": ChoiceKey, "choices": items, "isMultiSelect": p.Multi, "style": "expanded"}
			if len(chosen) > 0 {
				set["value"] = strings.Join(chosen, ",")
			}
			card["body"] = append(card["body"].([]any), set)
			actions = append(actions, map[string]any{"type": "Action.Submit", "title": "Send", "data": map[string]string{SubmitKey: p.Select}})
		case len(p.Options)+len(p.Actions) > MaxButtons:
			return TeamsActivity{}, invalid("the prompt has more controls than " + strconv.Itoa(MaxButtons) + " buttons, and no select")
		default:
			for _, o := range p.Options {
				actions = append(actions, button(o, p.Multi))
			}
		}
		for _, a := range p.Actions {
			actions = append(actions, button(a, false))
		}
		card["actions"] = actions
	}
	return TeamsActivity{Type: TeamsActivityMessage, Attachments: []TeamsAttachment{{ContentType: ContentTypeAdaptiveCard, Content: card}}}, nil
}

// button is an Action.Submit for c that submits no input of the card.
func button(c message.Choice, marked bool) map[string]any {
	return map[string]any{
		"type": "Action.Submit", "title": title(c.Label, marked && c.Selected),
		"data": map[string]string{SubmitKey: c.Data}, "associatedInputs": "none",
	}
}

// title is a control's label, trimmed to MaxTitle code points; marked
// with a check when toggled on.
func title(label string, checked bool) string {
	label = strings.TrimSpace(label)
	if checked {
		label = "✓ " + label
	}
	if label == "" {
		return "…"
	}
	if utf8.RuneCountInString(label) > MaxTitle {
		r := []rune(label)
		label = string(r[:MaxTitle-1]) + "…"
	}
	return label
}

func checkData(d string, seen map[string]bool) error {
	switch {
	case strings.TrimSpace(d) == "":
		return invalid("a control without data")
	case len(d) > message.MaxControlData || strings.Contains(d, ","):
		return invalid("a control's data is over " + strconv.Itoa(message.MaxControlData) + " bytes, or holds a comma")
	case seen[d]:
		return invalid("two controls carry the same data")
	}
	seen[d] = true
	return nil
}
