package message

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// How a question is shown, field by field: written once, here, where both
// the planner (which refuses a question that would not fit its platform)
// and the questions package (which asks it) read it.

// Controls names the data each control of a question carries back
// (Choice.Data): Parley's own, short, never the agent's keys or values.
type Controls interface {
	// Option is the data of option (an index) of field.
	Option(field, option int) string
	// Done ends a multi-select field; Select is a select menu of field's
	// options; Skip declines an optional form.
	Done(field int) string
	Select(field int) string
	Skip() string
}

// Choices are f's options: a select's, or Yes and No for a boolean.
func (f Field) Choices() []Option {
	if f.Kind == FieldBoolean {
		return []Option{{Value: "true", Title: "Yes"}, {Value: "false", Title: "No"}}
	}
	return f.Options
}

// Optional reports whether the form can be skipped: none of its fields is
// required.
func (q Question) Optional() bool {
	return !slices.ContainsFunc(q.Fields, func(f Field) bool { return f.Required })
}

// Prompt is the question message asking field (an index of Fields):
// PromptText, the field's choices marked when among selected (a
// multi-select's toggles so far), Done for a multi-select, Skip for an
// optional form, each control carrying its data from c.
func (q Question) Prompt(field int, selected []string, c Controls) Prompt {
	f := q.Fields[field]
	p := Prompt{Text: q.PromptText(field)}
	for i, o := range f.Choices() {
		p.Options = append(p.Options, Choice{Label: o.Label(), Data: c.Option(field, i), Selected: slices.Contains(selected, o.Value)})
	}
	if len(p.Options) > 0 {
		p.Select = c.Select(field)
	}
	if f.Kind == FieldMultiSelect {
		p.Multi = true
		p.Actions = append(p.Actions, Choice{Label: "Done", Data: c.Done(field)})
	}
	if q.Optional() {
		p.Actions = append(p.Actions, Choice{Label: "Skip", Data: c.Skip()})
	}
	return p
}

// PromptText is the text above field's controls: the message, then (for a
// form of several fields, or a field with a title or description) the
// field's place, title and description, then how to answer a field that
// has no controls.
func (q Question) PromptText(field int) string {
	f := q.Fields[field]
	var b strings.Builder
	b.WriteString(q.Message)
	if n := len(q.Fields); n > 1 || f.Title != "" || f.Description != "" {
		b.WriteString("\n\n")
		if n > 1 {
			fmt.Fprintf(&b, "(%d/%d) ", field+1, n)
		}
		b.WriteString(cmp.Or(f.Title, f.ID))
		if f.Description != "" {
			b.WriteString("\n" + f.Description)
		}
	}
	if hint := f.Hint(); hint != "" {
		b.WriteString("\n\n" + hint)
	}
	return b.String()
}

// Hint says how to answer a field that has no controls ("Reply with a
// number."); empty for one that has them.
func (f Field) Hint() string {
	switch f.Kind {
	case FieldText:
		switch f.Format {
		case "email":
			return "Reply with an email address."
		case "uri":
			return "Reply with a link."
		case "date":
			return "Reply with a date, like 2026-12-31."
		case "date-time":
			return "Reply with a date and time, like 2026-12-31T18:00:00Z."
		}
		switch {
		case f.MinLength != nil && f.MaxLength != nil:
			return fmt.Sprintf("Reply with %d to %d characters.", *f.MinLength, *f.MaxLength)
		case f.MaxLength != nil:
			return fmt.Sprintf("Reply with at most %d characters.", *f.MaxLength)
		case f.MinLength != nil:
			return fmt.Sprintf("Reply with at least %d characters.", *f.MinLength)
		}
		return "Reply with your answer."
	case FieldNumber, FieldInteger:
		what := "a number"
		if f.Kind == FieldInteger {
			what = "a whole number"
		}
		switch {
		case f.Minimum != nil && f.Maximum != nil:
			return fmt.Sprintf("Reply with %s from %s to %s.", what, num(*f.Minimum), num(*f.Maximum))
		case f.Minimum != nil:
			return fmt.Sprintf("Reply with %s of at least %s.", what, num(*f.Minimum))
		case f.Maximum != nil:
			return fmt.Sprintf("Reply with %s of at most %s.", what, num(*f.Maximum))
		}
		return "Reply with " + what + "."
	}
	return ""
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
