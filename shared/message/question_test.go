package message

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// everyKind is a question with one field of each kind, every optional member
// set somewhere, and the zero values that omitempty must not confuse with
// absence (a false default, a zero bound, an empty multi-select default).
func everyKind() Question {
	return Question{
		Message: "Which seat, and anything else?",
		Fields: []Field{
			{ID: "q0", Key: "seat", Kind: FieldSingleSelect, Title: "Seat", Description: "where you sit", Required: true,
				Options: []Option{{Value: "12A", Title: "Window"}, {Value: "12C"}}, Default: "12C"},
			{ID: "q1", Key: "meals", Kind: FieldMultiSelect, Options: []Option{{Value: "veg", Title: "Vegetarian"}, {Value: "gf"}},
				MinItems: ptr(0), MaxItems: ptr(2), Default: []string{"veg", "gf"}},
			{ID: "q2", Key: "extras", Kind: FieldMultiSelect, Options: []Option{{Value: "bag"}}, Default: []string{}},
			{ID: "q3", Key: "email", Kind: FieldText, Format: "email", MinLength: ptr(3), MaxLength: ptr(99), Default: "a@b.c"},
			{ID: "q4", Key: "weight", Kind: FieldNumber, Minimum: ptr(-1.5), Maximum: ptr(0.1), Default: 0.30000000000000004},
			{ID: "q5", Key: "bags", Kind: FieldInteger, Minimum: ptr(0.0), Maximum: ptr(3.0), Default: 2.0},
			{ID: "q6", Key: "insure", Kind: FieldBoolean, Default: false},
			{ID: "q7", Key: "note", Kind: FieldText},
		},
	}
}

func TestQuestionJSONRoundTripIsLossless(t *testing.T) {
	t.Parallel()
	want := everyKind()
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got Question
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("Unmarshal(%s): %v", b, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip of\n%+v\ngave\n%+v\nvia %s", want, got, b)
	}
	// A second trip gives the same bytes: nothing drifts in storage.
	b2, err := json.Marshal(got)
	if err != nil || string(b2) != string(b) {
		t.Fatalf("second encoding %s (%v), first %s", b2, err, b)
	}
}

// The tags are the stored and queued form: a rename is a migration, so the
// exact encoding is pinned here.
func TestQuestionWireForm(t *testing.T) {
	t.Parallel()
	q := Question{Message: "Pick", Fields: []Field{
		{ID: "q0", Key: "n", Kind: FieldInteger, Required: true, Minimum: ptr(0.0), Default: 1.0},
		{ID: "q1", Key: "c", Kind: FieldMultiSelect, Options: []Option{{Value: "a", Title: "A"}, {Value: "b"}}, MinItems: ptr(1), MaxItems: ptr(2)},
		{ID: "q2", Key: "t", Kind: FieldText, Title: "T", Description: "D", MinLength: ptr(1), MaxLength: ptr(5), Format: "uri"},
	}}
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"message":"Pick","fields":[` +
		`{"id":"q0","key":"n","kind":"integer","required":true,"minimum":0,"default":1},` +
		`{"id":"q1","key":"c","kind":"multi_select","options":[{"value":"a","title":"A"},{"value":"b"}],"min_items":1,"max_items":2},` +
		`{"id":"q2","key":"t","kind":"text","title":"T","description":"D","min_length":1,"max_length":5,"format":"uri"}]}`
	if string(b) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", b, want)
	}
}

func TestFieldDefaultTypedByKind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		want     any
	}{
		{"IntegerIsFloat64", `{"id":"q0","key":"k","kind":"integer","default":3}`, 3.0},
		{"MultiSelectIsStrings", `{"id":"q0","key":"k","kind":"multi_select","default":["a","b"]}`, []string{"a", "b"}},
		{"NullIsNone", `{"id":"q0","key":"k","kind":"text","default":null}`, nil},
		{"AbsentIsNone", `{"id":"q0","key":"k","kind":"boolean"}`, nil},
		// A kind from a newer version keeps encoding/json's reading.
		{"UnknownKindKept", `{"id":"q0","key":"k","kind":"date_range","default":[1,"x"]}`, []any{1.0, "x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var f Field
			if err := json.Unmarshal([]byte(c.in), &f); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f.Default, c.want) {
				t.Fatalf("Default = %#v, want %#v", f.Default, c.want)
			}
		})
	}
}

func TestFieldDefaultThatDoesNotFitIsRefused(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"id":"q0","key":"k","kind":"boolean","default":"yes"}`,
		`{"id":"q1","key":"k","kind":"number","default":"1"}`,
		`{"id":"q2","key":"k","kind":"multi_select","default":"a"}`,
		`{"id":"q3","key":"k","kind":"single_select","default":["a"]}`,
	} {
		var f Field
		err := json.Unmarshal([]byte(in), &f)
		if err == nil || !strings.Contains(err.Error(), "default does not fit") {
			t.Errorf("Unmarshal(%s) = %+v, %v; want a default error", in, f, err)
		}
	}
}

func TestOptionLabel(t *testing.T) {
	t.Parallel()
	if got := (Option{Value: "12A", Title: "Window"}).Label(); got != "Window" {
		t.Errorf("titled Label() = %q, want Window", got)
	}
	if got := (Option{Value: "eco"}).Label(); got != "eco" {
		t.Errorf("untitled Label() = %q, want eco", got)
	}
}
