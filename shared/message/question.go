package message

import (
	"encoding/json"
	"fmt"
)

// Question is a question an agent asks: a message and the form of fields that
// answer it. It is what an adapter renders (native controls, or a numbered
// text form); it is already validated, so nothing here parses or checks the
// agent's schema. The JSON tags are its stored and queued form.
type Question struct {
	// Message is the question shown to people.
	Message string `json:"message"`
	// Fields are the form's fields, in the agent's order.
	Fields []Field `json:"fields"`
}

// FieldKind is the kind of input a Field asks for. Its value is what is
// stored.
type FieldKind string

const (
	// FieldText is free text, with optional MinLength, MaxLength and Format.
	FieldText FieldKind = "text"
	// FieldNumber is a number, with optional Minimum and Maximum.
	FieldNumber FieldKind = "number"
	// FieldInteger is an integer, with optional Minimum and Maximum.
	FieldInteger FieldKind = "integer"
	// FieldBoolean is yes or no.
	FieldBoolean FieldKind = "boolean"
	// FieldSingleSelect is one of Options.
	FieldSingleSelect FieldKind = "single_select"
	// FieldMultiSelect is any number of Options, with optional MinItems and
	// MaxItems.
	FieldMultiSelect FieldKind = "multi_select"
)

// Field is one field of a question's form.
type Field struct {
	// ID is Parley's short id, shown to people: "q0", "q1", … in the agent's
	// order.
	ID string `json:"id"`
	// Key is the agent's name for the field. It stays internal: answers go
	// back to the agent under it.
	Key  string    `json:"key"`
	Kind FieldKind `json:"kind"`
	// Title and Description are shown with the field; empty when the agent
	// gave none.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	// Options are a select's choices, in the agent's order; nil for other
	// kinds (an empty list is stored as none).
	Options []Option `json:"options,omitempty"`
	// MinLength, MaxLength and Format constrain FieldText (Format is "",
	// "email", "uri", "date" or "date-time"). Nil means no bound.
	MinLength *int   `json:"min_length,omitempty"`
	MaxLength *int   `json:"max_length,omitempty"`
	Format    string `json:"format,omitempty"`
	// Minimum and Maximum constrain FieldNumber and FieldInteger.
	Minimum *float64 `json:"minimum,omitempty"`
	Maximum *float64 `json:"maximum,omitempty"`
	// MinItems and MaxItems constrain FieldMultiSelect.
	MinItems *int `json:"min_items,omitempty"`
	MaxItems *int `json:"max_items,omitempty"`
	// Default is the agent's default, nil when none. Its type follows Kind:
	// a string (FieldText, FieldSingleSelect), a float64 (FieldNumber,
	// FieldInteger), a bool (FieldBoolean), a []string (FieldMultiSelect).
	// Decoding JSON restores exactly these types (not encoding/json's
	// float64 and []any guesses), so a stored question reads back equal.
	Default any `json:"default,omitempty"`
}

// UnmarshalJSON decodes a field and types its default by its kind. A default
// that does not fit the kind is an error: the stored question is not one
// Parley wrote.
func (f *Field) UnmarshalJSON(b []byte) error {
	// fieldJSON has Field's members but not its methods (no recursion); the
	// outer Default, being less nested, takes the "default" member.
	type fieldJSON Field
	var w struct {
		fieldJSON
		Default json.RawMessage `json:"default,omitempty"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*f = Field(w.fieldJSON)
	f.Default = nil
	if len(w.Default) == 0 || string(w.Default) == "null" {
		return nil
	}
	var err error
	switch f.Kind {
	case FieldText, FieldSingleSelect:
		f.Default, err = decodeAs[string](w.Default)
	case FieldNumber, FieldInteger:
		f.Default, err = decodeAs[float64](w.Default)
	case FieldBoolean:
		f.Default, err = decodeAs[bool](w.Default)
	case FieldMultiSelect:
		f.Default, err = decodeAs[[]string](w.Default)
	default:
		// A kind this version does not know: keep what encoding/json makes
		// of it rather than lose it.
		f.Default, err = decodeAs[any](w.Default)
	}
	if err != nil {
		return fmt.Errorf("message: field %q: default does not fit kind %q: %w", f.ID, f.Kind, err)
	}
	return nil
}

func decodeAs[T any](raw []byte) (any, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Option is one choice of a select field.
type Option struct {
	// Value is what the agent receives when the option is chosen.
	Value string `json:"value"`
	// Title is the label people see; empty when the agent gave none.
	Title string `json:"title,omitempty"`
}

// Label is what people see for the option: its Title, else its Value.
func (o Option) Label() string {
	if o.Title != "" {
		return o.Title
	}
	return o.Value
}
