package envelope

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
)

func askBody(request string) string {
	return `{"schema":"openab.turn.v1","next":{"type":"ask","request":` + request + `}}`
}

func form(props string, extra ...string) string {
	s := `{"message":"Pick","requestedSchema":{"type":"object","properties":{` + props + `}`
	for _, e := range extra {
		s += "," + e
	}
	return s + `}}`
}

func TestAskParsesEveryFieldKindInOrder(t *testing.T) {
	t.Parallel()
	// Property order deliberately not alphabetical: q-ids follow the agent.
	body := askBody(form(`
		"zeta":   {"type":"string","title":"Seat","description":"where","oneOf":[{"const":"12A","title":"Window"},{"const":"12C","title":"Aisle"}],"default":"12C"},
		"alpha":  {"type":"string","enum":["eco","biz"],"enumNames":["Economy","Business"]},
		"plain":  {"type":"string","enum":["x","y"]},
		"multi":  {"type":"array","items":{"anyOf":[{"const":"v","title":"Veg"},{"const":"g","title":"GF"}]},"minItems":1,"maxItems":2,"default":["v"]},
		"multi2": {"type":"array","items":{"type":"string","enum":["a","b"]}},
		"email":  {"type":"string","format":"email","minLength":3,"maxLength":99},
		"n":      {"type":"number","minimum":-1.5,"maximum":2,"default":0.5},
		"i":      {"type":"integer","default":3},
		"ok":     {"type":"boolean","default":true}`,
		`"required":["alpha","zeta"]`, `"$schema":"https://json-schema.org/draft/2020-12/schema"`))
	env, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	ask := env.Next.Ask
	if env.Next.Type != NextAsk || ask.Message != "Pick" || len(ask.Fields) != 9 {
		t.Fatalf("next = %+v", env.Next)
	}
	type summary struct {
		ID, Key  string
		Kind     message.FieldKind
		Required bool
		Options  []message.Option
		Default  any
	}
	var got []summary
	for _, f := range ask.Fields {
		got = append(got, summary{f.ID, f.Key, f.Kind, f.Required, f.Options, f.Default})
	}
	want := []summary{
		{"q0", "zeta", message.FieldSingleSelect, true, []message.Option{{Value: "12A", Title: "Window"}, {Value: "12C", Title: "Aisle"}}, "12C"},
		{"q1", "alpha", message.FieldSingleSelect, true, []message.Option{{Value: "eco", Title: "Economy"}, {Value: "biz", Title: "Business"}}, nil},
		{"q2", "plain", message.FieldSingleSelect, false, []message.Option{{Value: "x"}, {Value: "y"}}, nil},
		{"q3", "multi", message.FieldMultiSelect, false, []message.Option{{Value: "v", Title: "Veg"}, {Value: "g", Title: "GF"}}, []string{"v"}},
		{"q4", "multi2", message.FieldMultiSelect, false, []message.Option{{Value: "a"}, {Value: "b"}}, nil},
		{"q5", "email", message.FieldText, false, nil, nil},
		{"q6", "n", message.FieldNumber, false, nil, 0.5},
		{"q7", "i", message.FieldInteger, false, nil, 3.0},
		{"q8", "ok", message.FieldBoolean, false, nil, true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fields =\n%+v\nwant\n%+v", got, want)
	}
	f := ask.Fields
	if f[0].Title != "Seat" || f[0].Description != "where" || *f[3].MinItems != 1 || *f[3].MaxItems != 2 ||
		f[5].Format != "email" || *f[5].MinLength != 3 || *f[5].MaxLength != 99 || *f[6].Minimum != -1.5 || *f[6].Maximum != 2 {
		t.Fatalf("constraints lost: %+v", f)
	}
	if !strings.HasPrefix(string(ask.Schema), `{"type":"object","properties":{"zeta":`) {
		t.Fatalf("Schema = %s", ask.Schema)
	}
	// What the parser makes is what gets stored and queued: it must read
	// back equal.
	stored, err := json.Marshal(ask.Question)
	if err != nil {
		t.Fatal(err)
	}
	var back message.Question
	if err := json.Unmarshal(stored, &back); err != nil || !reflect.DeepEqual(back, ask.Question) {
		t.Fatalf("stored question %s reads back as %+v (%v)", stored, back, err)
	}
}

func TestAskRejects(t *testing.T) {
	t.Parallel()
	str := `"a":{"type":"string"}`
	var props []string
	for i := range 21 {
		props = append(props, `"p`+itoa(i)+`":{"type":"boolean"}`)
	}
	tooMany := strings.Join(props, ",")
	cases := []struct {
		name, request string
		reason        Reason
		path          string
	}{
		{"NotObject", `"ask"`, ReasonWrongType, "next.request"},
		{"UnknownMember", `{"message":"x","requestedSchema":{"type":"object","properties":{` + str + `}},"timeout":5}`, ReasonUnknownField, "next.request.timeout"},
		{"NoMessage", `{"requestedSchema":{"type":"object","properties":{` + str + `}}}`, ReasonMissingField, "next.request.message"},
		{"BlankMessage", `{"message":"  ","requestedSchema":{"type":"object","properties":{` + str + `}}}`, ReasonBadAsk, "next.request.message"},
		{"EnvelopeMessage", `{"message":"{\"schema\":\"openab.turn.v1\"}","requestedSchema":{"type":"object","properties":{` + str + `}}}`, ReasonNestedEnvelope, "next.request.message"},
		{"NoSchema", `{"message":"x"}`, ReasonMissingField, "next.request.requestedSchema"},
		{"SchemaNotObjectType", `{"message":"x","requestedSchema":{"type":"array","properties":{` + str + `}}}`, ReasonBadAsk, "next.request.requestedSchema.type"},
		{"SchemaUnknown", form(str, `"additionalProperties":false`), ReasonUnknownField, "next.request.requestedSchema.additionalProperties"},
		{"NoProperties", `{"message":"x","requestedSchema":{"type":"object"}}`, ReasonMissingField, "next.request.requestedSchema.properties"},
		{"EmptyProperties", form(``), ReasonBadAsk, "next.request.requestedSchema.properties"},
		{"TooManyProperties", form(tooMany), ReasonBadAsk, "next.request.requestedSchema.properties"},
		{"BlankKey", form(`" ":{"type":"string"}`), ReasonBadAsk, `next.request.requestedSchema.properties[" "]`},
		{"DuplicateProperty", form(str + `,` + str), ReasonDuplicateKey, "next.request.requestedSchema.properties.a"},
		{"FieldNoType", form(`"a":{"title":"x"}`), ReasonMissingField, "next.request.requestedSchema.properties.a.type"},
		{"FieldBadType", form(`"a":{"type":"object"}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.type"},
		{"FieldUnknown", form(`"a":{"type":"string","pattern":"x"}`), ReasonUnknownField, "next.request.requestedSchema.properties.a.pattern"},
		{"EnumWithLength", form(`"a":{"type":"string","enum":["x"],"maxLength":3}`), ReasonUnknownField, "next.request.requestedSchema.properties.a.maxLength"},
		{"EmptyOneOf", form(`"a":{"type":"string","oneOf":[]}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.oneOf"},
		{"OneOfNoTitle", form(`"a":{"type":"string","oneOf":[{"const":"x"}]}`), ReasonMissingField, "next.request.requestedSchema.properties.a.oneOf[0].title"},
		{"OneOfDupValue", form(`"a":{"type":"string","oneOf":[{"const":"x","title":"X"},{"const":"x","title":"Y"}]}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.oneOf[1].const"},
		{"OneOfDupTitle", form(`"a":{"type":"string","oneOf":[{"const":"x","title":"X"},{"const":"y","title":"X"}]}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.oneOf"},
		{"OneOfBlankValue", form(`"a":{"type":"string","oneOf":[{"const":" ","title":"X"}]}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.oneOf[0].const"},
		{"EnumEmpty", form(`"a":{"type":"string","enum":[]}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.enum"},
		{"EnumDup", form(`"a":{"type":"string","enum":["x","x"]}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.enum[1]"},
		{"EnumNumber", form(`"a":{"type":"string","enum":[1]}`), ReasonWrongType, "next.request.requestedSchema.properties.a.enum[0]"},
		{"EnumNamesShort", form(`"a":{"type":"string","enum":["x","y"],"enumNames":["X"]}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.enumNames"},
		{"TooManyOptions", form(`"a":{"type":"string","enum":["` + strings.Join(strings.Split(strings.Repeat("o", 26), ""), `","`) + `"]}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.enum"},
		{"MinOverMax", form(`"a":{"type":"string","minLength":5,"maxLength":2}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.minLength"},
		{"NegativeLength", form(`"a":{"type":"string","minLength":-1}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.minLength"},
		{"BadFormat", form(`"a":{"type":"string","format":"phone"}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.format"},
		{"NumberMinOverMax", form(`"a":{"type":"number","minimum":3,"maximum":1}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.minimum"},
		{"NumberMinString", form(`"a":{"type":"number","minimum":"1"}`), ReasonWrongType, "next.request.requestedSchema.properties.a.minimum"},
		{"ArrayNoItems", form(`"a":{"type":"array"}`), ReasonMissingField, "next.request.requestedSchema.properties.a.items"},
		{"ArrayItemsNumber", form(`"a":{"type":"array","items":{"type":"number","enum":["1"]}}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.items.type"},
		{"ArrayItemsNoEnum", form(`"a":{"type":"array","items":{"type":"string"}}`), ReasonMissingField, "next.request.requestedSchema.properties.a.items.enum"},
		{"ArrayItemsEmptyEnum", form(`"a":{"type":"array","items":{"type":"string","enum":[]}}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.items.enum"},
		{"ArrayItemsDupEnum", form(`"a":{"type":"array","items":{"type":"string","enum":["x","x"]}}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.items.enum[1]"},
		{"ArrayMinItemsOverOptions", form(`"a":{"type":"array","items":{"type":"string","enum":["x"]},"minItems":2}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.minItems"},
		{"DefaultNotOption", form(`"a":{"type":"string","enum":["x"],"default":"y"}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.default"},
		{"DefaultMultiNotOption", form(`"a":{"type":"array","items":{"type":"string","enum":["x"]},"default":["y"]}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.default[0]"},
		{"DefaultIntFraction", form(`"a":{"type":"integer","default":1.5}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.default"},
		{"DefaultBoolString", form(`"a":{"type":"boolean","default":"true"}`), ReasonWrongType, "next.request.requestedSchema.properties.a.default"},
		{"BlankTitle", form(`"a":{"type":"boolean","title":""}`), ReasonBadAsk, "next.request.requestedSchema.properties.a.title"},
		{"RequiredMissing", form(str, `"required":["b"]`), ReasonBadAsk, "next.request.requestedSchema.required[0]"},
		{"RequiredTwice", form(str, `"required":["a","a"]`), ReasonBadAsk, "next.request.requestedSchema.required[1]"},
		{"RequiredNotArray", form(str, `"required":"a"`), ReasonWrongType, "next.request.requestedSchema.required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(askBody(c.request)))
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Reason != c.reason || pe.Path != c.path {
				t.Fatalf("got %v, want %s at %q", err, c.reason, c.path)
			}
		})
	}
}

// TestQuestionFormIsBoundedAsStored_Finding4: the limits counted the
// bubbles' text, not the form, so a form of 99 KB full of '<' (over 500 KB
// once stored, each '<' six bytes) passed them. The form is measured as
// stored: over MaxQuestionBytes the reply is rejected whole; a form of the
// same shape with short labels fits.
func TestQuestionFormIsBoundedAsStored_Finding4(t *testing.T) {
	t.Parallel()
	build := func(label string) (Plan, error) {
		var props []string
		for f := range 20 {
			var opts []string
			for o := range 25 {
				opts = append(opts, fmt.Sprintf(`{"const":"%s%02d","title":"%s%02d"}`, label, o, label, o))
			}
			props = append(props, fmt.Sprintf(`"f%02d":{"type":"string","oneOf":[%s]}`, f, strings.Join(opts, ",")))
		}
		body := askBody(form(strings.Join(props, ",")))
		if len(body) > 100_000 {
			t.Fatalf("the reply is %d bytes, want under 100 KB", len(body))
		}
		return Build(Reply{Body: []byte(body), ContentType: "application/json"}, Config{}, message.Capabilities{TextLimit: 4096, Counting: message.CountUTF16})
	}
	_, err := build(strings.Repeat("<", 84))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitMaxQuestionBytes || le.Max != MaxQuestionBytes || le.Got <= MaxQuestionBytes {
		t.Fatalf("a 99 KB form of markup: %v, want a LimitError %s", err, LimitMaxQuestionBytes)
	}
	if !strings.Contains(le.Error(), "max_question_bytes") {
		t.Errorf("error %q does not name the limit", le.Error())
	}
	if p, err := build("opt"); err != nil || p.Next.Ask == nil {
		t.Fatalf("a form of short labels: %v, want it asked", err)
	}
}

// TestQuestionOverItsPlatformIsRefused_Finding5 (issue 23, finding 5): a
// question's message, with a field's title, description and hint, is one
// message on its platform, never split; the planner passed a question of
// 1200 "*", which Discord (whose text Parley escapes, up to twice as long)
// refused, and the question stayed open, unseen. A question whose prompt,
// or its numbered text form where the platform may show that, is over the
// platform's TextLimit is refused like any reply over a limit.
func TestQuestionOverItsPlatformIsRefused_Finding5(t *testing.T) {
	t.Parallel()
	discord := message.Capabilities{TextLimit: 1000, Counting: message.CountRunes, Buttons: true}
	telegram := message.Capabilities{TextLimit: 4096, Counting: message.CountUTF16, Buttons: true}
	line := message.Capabilities{TextLimit: 5000, Counting: message.CountUTF16, Buttons: true, TextForm: true}
	seat := `"seat":{"type":"string","oneOf":[{"const":"12A","title":"Window"},{"const":"12C","title":"Aisle"}]}`
	ask := func(msg, props string) Reply {
		m, _ := json.Marshal(msg)
		return Reply{Body: []byte(askBody(`{"message":` + string(m) + `,"requestedSchema":{"type":"object","properties":{` + props + `}}}`))}
	}
	var labels []string
	for i := range 25 {
		labels = append(labels, `{"const":"v`+string(rune('a'+i))+`","title":"`+strings.Repeat("x", 199)+string(rune('a'+i))+`"}`)
	}
	long := `"extras":{"type":"array","items":{"anyOf":[` + strings.Join(labels, ",") + `]}}`
	cases := []struct {
		name  string
		reply Reply
		caps  message.Capabilities
		field string // "" when it is taken
	}{
		{"TheReportedQuestionOnDiscord", ask(strings.Repeat("*", 1200), seat), discord, "q0"},
		{"TheReportedQuestionOnTelegram", ask(strings.Repeat("*", 1200), seat), telegram, ""},
		{"AtDiscordsLimit", ask(strings.Repeat("*", 1000), seat), discord, ""},
		{"ATitleOverDiscordsLimit", ask(strings.Repeat("*", 995), `"seat":{"type":"string","title":"Seat","enum":["12A"]}`), discord, "q0"},
		{"TheSecondFieldsHint", ask(strings.Repeat("a", 960), seat+`,"note":{"type":"string","maxLength":200}`), discord, "q1"},
		// 25 labels of 200 fit Telegram's buttons, not LINE's text form.
		{"ATextFormOverLINEs", ask("Which?", long), line, "q0"},
		{"ButtonsOnTelegram", ask("Which?", long), telegram, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := Build(c.reply, Config{}, c.caps)
			var limit *LimitError
			switch {
			case c.field == "" && (err != nil || plan.Problem != nil || plan.Next.Ask == nil):
				t.Fatalf("refused: %v %v", err, plan.Problem)
			case c.field != "" && (!errors.As(err, &limit) || limit.Limit != LimitPromptChars || limit.Field != c.field || limit.Max != c.caps.TextLimit):
				t.Fatalf("got %v, want prompt_chars on %s", err, c.field)
			}
		})
	}
}
