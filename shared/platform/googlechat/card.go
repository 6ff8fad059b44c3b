package googlechat

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
)

// Names Parley gives a card's function, its parameter and its input.
const (
	// ParamData is the action parameter holding a control's data.
	ParamData = "data"
	// InputChoice is the selection input of a card with many options.
	InputChoice = "parley_choice"
	// MaxButtons is how many buttons a card shows before its options go
	// into a selection input.
	MaxButtons = 6
	// MaxLabel bounds a button's text, in code points.
	MaxLabel = 80
)

// cards lays a prompt's controls out as one cardsV2 card: its options as
// buttons whose action calls function "parley" with {"data": <data>}, or,
// past MaxButtons or for a multi-select with a select of its own, one
// selection input (InputChoice: a check box list for a multi-select, a
// dropdown otherwise) and a Send button carrying the select's data; then
// its actions as buttons. A closed prompt has no card: an edit to it
// removes the controls. The prompt's text is the message's text, made
// inert like any text.
func cards(p message.Prompt) ([]GoogleChatCardV2, error) {
	if p.Closed() {
		return []GoogleChatCardV2{}, nil
	}
	seen := map[string]bool{}
	for _, c := range append(append([]message.Choice{}, p.Options...), p.Actions...) {
		if err := checkData(c.Data, seen); err != nil {
			return nil, err
		}
	}
	var widgets []any
	var buttons []any
	asSelect := len(p.Options)+len(p.Actions) > MaxButtons || (p.Multi && p.Select != "")
	switch {
	case asSelect && len(p.Options) > 0:
		if err := checkData(p.Select, seen); err != nil {
			return nil, invalid("a prompt with more options than buttons needs a select")
		}
		kind := "DROPDOWN"
		if p.Multi {
			kind = "CHECK_BOX"
		}
		var items []any
		for _, o := range p.Options {
			items = append(items, map[string]any{"text": label(o.Label, false), "value": o.Data, "selected": o.Selected})
		}
		widgets = append(widgets, map[string]any{"selectionInput": map[string]any{"name": InputChoice, "type": kind, "items": items}})
		buttons = append(buttons, button("Send", p.Select))
	case len(p.Options)+len(p.Actions) > MaxButtons:
		return nil, invalid("the prompt has more controls than " + strconv.Itoa(MaxButtons) + " buttons, and no select")
	default:
		for _, o := range p.Options {
			buttons = append(buttons, button(label(o.Label, p.Multi && o.Selected), o.Data))
		}
	}
	for _, a := range p.Actions {
		buttons = append(buttons, button(label(a.Label, false), a.Data))
	}
	widgets = append(widgets, map[string]any{"buttonList": map[string]any{"buttons": buttons}})
	return []GoogleChatCardV2{{CardID: "parley", Card: map[string]any{"sections": []any{map[string]any{"widgets": widgets}}}}}, nil
}

func button(text, data string) map[string]any {
	return map[string]any{"text": text, "onClick": map[string]any{"action": map[string]any{
		"function": GoogleChatActionFunction, "parameters": []GoogleChatParameter{{Key: ParamData, Value: data}},
	}}}
}

// label is a control's text, trimmed to MaxLabel code points; marked with
// a check when toggled on. Button text is plain in cards.
func label(s string, checked bool) string {
	s = strings.TrimSpace(s)
	if checked {
		s = "✓ " + s
	}
	if s == "" {
		return "…"
	}
	if utf8.RuneCountInString(s) > MaxLabel {
		s = string([]rune(s)[:MaxLabel-1]) + "…"
	}
	return s
}

func checkData(d string, seen map[string]bool) error {
	switch {
	case strings.TrimSpace(d) == "":
		return invalid("a control without data")
	case len(d) > message.MaxControlData:
		return invalid("a control's data is over " + strconv.Itoa(message.MaxControlData) + " bytes")
	case seen[d]:
		return invalid("two controls carry the same data")
	}
	seen[d] = true
	return nil
}

func invalid(reason string) error {
	return &message.SendError{Class: message.FailInvalidPayload, Reason: reason}
}
