package whatsapp

import (
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/message"
)

func choices(prefix string, labels ...string) []message.Choice {
	out := make([]message.Choice, len(labels))
	for i, l := range labels {
		out[i] = message.Choice{Label: l, Data: prefix + strconv.Itoa(i)}
	}
	return out
}

func render(t *testing.T, p message.Prompt) WhatsAppSendMessage {
	t.Helper()
	var m WhatsAppSendMessage
	if err := renderPrompt(p, inert, &m); err != nil {
		t.Fatalf("renderPrompt: %v", err)
	}
	return m
}

func buttons(in *WhatsAppInteractive) []WhatsAppButtonReply {
	var out []WhatsAppButtonReply
	for _, b := range in.Action.Buttons {
		out = append(out, b.Reply)
	}
	return out
}

func TestRenderButtons(t *testing.T) {
	t.Parallel()
	m := render(t, message.Prompt{Text: "Which *city*?", Options: choices("q0:", "Lisbon", "Porto")})
	if m.Type != "interactive" || m.Interactive.Type != "button" || m.Text != nil {
		t.Fatalf("rendered %s", show(m))
	}
	// The question's text is inert, like any text.
	if m.Interactive.Body.Text != "Which ∗city∗?" {
		t.Fatalf("body %q", m.Interactive.Body.Text)
	}
	want := []WhatsAppButtonReply{{ID: "q0:0", Title: "Lisbon"}, {ID: "q0:1", Title: "Porto"}}
	if got := buttons(m.Interactive); !reflect.DeepEqual(got, want) {
		t.Fatalf("buttons %+v", got)
	}
	for _, b := range m.Interactive.Action.Buttons {
		if b.Type != "reply" {
			t.Fatalf("button type %q", b.Type)
		}
	}
}

// TestActionsCountAgainstTheButtons: Skip is a fourth control, so three
// options and Skip make a list.
func TestActionsCountAgainstTheButtons(t *testing.T) {
	t.Parallel()
	two := render(t, message.Prompt{Text: "Which city?", Options: choices("q0:", "Lisbon", "Porto"), Actions: []message.Choice{{Label: "Skip", Data: "q0:skip"}}})
	if two.Interactive.Type != "button" || len(two.Interactive.Action.Buttons) != 3 || two.Interactive.Action.Buttons[2].Reply != (WhatsAppButtonReply{ID: "q0:skip", Title: "Skip"}) {
		t.Fatalf("two options and Skip: %s", show(two))
	}
	three := render(t, message.Prompt{Text: "Which city?", Options: choices("q0:", "Lisbon", "Porto", "Faro"), Actions: []message.Choice{{Label: "Skip", Data: "q0:skip"}}})
	in := three.Interactive
	if in.Type != "list" || in.Action.Button != ListButton || len(in.Action.Sections) != 1 {
		t.Fatalf("three options and Skip: %s", show(three))
	}
	want := []WhatsAppRow{{ID: "q0:0", Title: "Lisbon"}, {ID: "q0:1", Title: "Porto"}, {ID: "q0:2", Title: "Faro"}, {ID: "q0:skip", Title: "Skip"}}
	if !reflect.DeepEqual(in.Action.Sections[0].Rows, want) {
		t.Fatalf("rows %+v", in.Action.Sections[0].Rows)
	}
}

func TestRenderList(t *testing.T) {
	t.Parallel()
	labels := []string{"Lisbon", "Porto", "Coimbra, the old university town on the Mondego", "Faro", "Braga", "Évora", "Aveiro", "Sintra", "Guimarães", "Tomar"}
	m := render(t, message.Prompt{Text: "Which city?", Options: choices("q1:", labels...)})
	in := m.Interactive
	if in.Type != "list" || len(in.Action.Sections[0].Rows) != 10 {
		t.Fatalf("rendered %s", show(m))
	}
	rows := in.Action.Sections[0].Rows
	// One title is too long: all are numbered, the long one cut, and its
	// full label is its description.
	if rows[0] != (WhatsAppRow{ID: "q1:0", Title: "1. Lisbon"}) || rows[9] != (WhatsAppRow{ID: "q1:9", Title: "10. Tomar"}) {
		t.Fatalf("rows %+v", rows)
	}
	if rows[2].Title != "3. Coimbra, the old uni…" || rows[2].Description != labels[2] {
		t.Fatalf("the long row is %+v", rows[2])
	}
	if in.Body.Text != "Which city?" {
		t.Fatalf("body %q: every label fits a row, title or description", in.Body.Text)
	}
}

func TestRenderFallsBackToText(t *testing.T) {
	t.Parallel()
	eleven := choices("q2:", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k")
	cases := map[string]message.Prompt{
		"MoreThanTenControls": {Text: "Pick one", Options: eleven},
		"TenOptionsAndSkip":   {Text: "Pick one", Options: eleven[:10], Actions: []message.Choice{{Label: "Skip", Data: "q2:skip"}}},
		"MultiSelect":         {Text: "Pick some", Options: choices("q3:", "Tea", "Coffee"), Multi: true, Actions: []message.Choice{{Label: "Done", Data: "q3:done"}}},
		"ButtonBodyOverLimit": {Text: strings.Repeat("long question ", 80), Options: choices("q4:", "Yes", "No")},
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := render(t, p)
			if m.Type != "text" || m.Interactive != nil || m.Text.Body != inert(p.FallbackText()) {
				t.Fatalf("rendered %s, want the text form", show(m))
			}
		})
	}
}

func TestRenderClosedPrompt(t *testing.T) {
	t.Parallel()
	m := render(t, message.Prompt{Text: "Which city? Lisbon ✓"})
	if m.Type != "text" || m.Text.Body != "Which city? Lisbon ✓" {
		t.Fatalf("rendered %s", show(m))
	}
}

// TestTitlesStayDistinct: shortened titles still tell the options apart,
// and the full labels of the cut ones are under the question.
func TestTitlesStayDistinct(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"SharedLongPrefix": {"Book the 9:40 flight to Lisbon", "Book the 9:40 flight to Porto"},
		"Duplicates":       {"Yes", "yes", "No"},
		"Empty":            {"", "Maybe"},
		"Emoji":            {"😀😀😀😀😀😀😀😀😀😀😀", "😀😀😀😀😀😀😀😀😀😀😀😀"},
		"Newlines":         {"Lisbon\ncity", "Porto"},
	}
	for name, labels := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := render(t, message.Prompt{Text: "Which?", Options: choices("q:", labels...)})
			seen := map[string]bool{}
			for i, b := range buttons(m.Interactive) {
				if units(b.Title) > 20 || strings.TrimSpace(b.Title) == "" || seen[strings.ToLower(b.Title)] || strings.Contains(b.Title, "\n") {
					t.Fatalf("title %d %q: empty, too long, on two lines or a repeat (%s)", i, b.Title, show(m))
				}
				seen[strings.ToLower(b.Title)] = true
				if !strings.HasPrefix(b.Title, strconv.Itoa(i+1)) && name != "Newlines" {
					t.Fatalf("title %q does not say which option it is", b.Title)
				}
			}
		})
	}
	m := render(t, message.Prompt{Text: "Which flight?", Options: choices("q:", cases["SharedLongPrefix"]...)})
	want := "Which flight?\n\n1. Book the 9:40 flight to Lisbon\n2. Book the 9:40 flight to Porto"
	if m.Interactive.Body.Text != want {
		t.Fatalf("body %q, want the full labels listed", m.Interactive.Body.Text)
	}
	if got := buttons(m.Interactive); got[0].Title != "1. Book the 9:40 fl…" || got[1].Title != "2. Book the 9:40 fl…" {
		t.Fatalf("titles %+v", got)
	}
	// Labels that fit and differ are left alone.
	plain := render(t, message.Prompt{Text: "Which?", Options: choices("q:", "Lisbon\ncity", "Porto")})
	if got := buttons(plain.Interactive); got[0].Title != "Lisbon city" || got[1].Title != "Porto" {
		t.Fatalf("titles %+v", got)
	}
}

func TestRenderRefuses(t *testing.T) {
	t.Parallel()
	cases := map[string]message.Prompt{
		"NoText":       {Text: " ", Options: choices("q:", "a", "b")},
		"EmptyData":    {Text: "Which?", Options: []message.Choice{{Label: "a"}}},
		"RepeatedData": {Text: "Which?", Options: []message.Choice{{Label: "a", Data: "x"}, {Label: "b", Data: "x"}}},
		"LongData":     {Text: "Which?", Options: []message.Choice{{Label: "a", Data: strings.Repeat("x", 201)}}},
		"ClosedEmpty":  {},
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var m WhatsAppSendMessage
			if err := renderPrompt(p, inert, &m); message.ClassOf(err) != message.FailInvalidPayload {
				t.Fatalf("renderPrompt = %v, want invalid_payload", err)
			}
		})
	}
}

// TestAskThroughTheFake: what Ask sends is what the Cloud API takes, and a
// press of what it shows carries the control's data.
func TestAskThroughTheFake(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	prompts := []message.Prompt{
		{Text: "Which city?", Options: choices("q0:", "Lisbon", "Porto")},
		{Text: "Which city?", Options: choices("q1:", "Lisbon", "Porto", "Faro", "Braga", "Évora")},
		{Text: "Pick some", Options: choices("q2:", "Tea", "Coffee"), Multi: true},
	}
	want := []string{"Which city?", "Which city?", "Pick some\n\n1. Tea\n2. Coffee\n\nReply with the numbers you choose, like 1 3."}
	controls := [][]fakeapi.Control{
		{{Label: "Lisbon", Data: "q0:0"}, {Label: "Porto", Data: "q0:1"}},
		{{Label: "Lisbon", Data: "q1:0"}, {Label: "Porto", Data: "q1:1"}, {Label: "Faro", Data: "q1:2"}, {Label: "Braga", Data: "q1:3"}, {Label: "Évora", Data: "q1:4"}},
		nil,
	}
	for i, p := range prompts {
		rc, err := f.client.Ask(t.Context(), message.Outgoing{Thread: chat(ada), Content: message.Content{Prompt: &p}, ReplyTo: idReply})
		if err != nil {
			t.Fatalf("Ask %d: %v", i, err)
		}
		d := f.rec.Delivered()[i]
		if d.Text != want[i] || !reflect.DeepEqual(d.Controls, controls[i]) || d.ReplyTo != idReply || rc.MessageIDs[0] != d.MessageID {
			t.Fatalf("Ask %d delivered %q %+v (reply to %q), receipt %v", i, d.Text, d.Controls, d.ReplyTo, rc.MessageIDs)
		}
	}
	// Send takes a question too.
	p := prompts[0]
	if _, err := f.client.Send(t.Context(), message.Outgoing{Thread: chat(ada), Content: message.Content{Prompt: &p}}); err != nil {
		t.Fatalf("Send of a question: %v", err)
	}
}

// FuzzAsk: whatever the question, Ask either refuses it without a call or
// sends what the Cloud API (the fake's validation) accepts.
func FuzzAsk(f *testing.F) {
	f.Add("Which city?", "Lisbon\x00Porto", false, 0)
	f.Add("Which city?", "Lisbon\x00Porto\x00Faro", false, 1)
	f.Add("Q", "Book the 9:40 flight to Lisbon\x00Book the 9:40 flight to Porto\x00x\x00y", false, 2)
	f.Add(strings.Repeat("😀", 600), "a\x00a\x00A", false, 0)
	f.Add("*_~`", "\x00\x00\x00\x00\x00\x00\x00\x00\x00", true, 1)
	f.Add("", "", false, 0)
	// One fake for every input: each worker calls the function in turn, so
	// the recorder's counts before and after tell what one input did.
	rec := fakeapi.New(fakeapi.Options{})
	srv := httptest.NewServer(fakewhatsapp.New(fakewhatsapp.Options{Token: testToken, PhoneNumberID: testPhone, Recorder: rec}))
	f.Cleanup(srv.Close)
	client := &Client{Token: testToken, PhoneNumberID: testPhone, BaseURL: srv.URL, HTTP: srv.Client()}
	f.Fuzz(func(t *testing.T, text, labels string, multi bool, actions int) {
		p := message.Prompt{Text: text, Multi: multi}
		if labels != "" {
			for i, l := range strings.Split(labels, "\x00") {
				p.Options = append(p.Options, message.Choice{Label: l, Data: "q:" + strconv.Itoa(i)})
			}
		}
		for i := range min(max(actions, 0), 3) {
			p.Actions = append(p.Actions, message.Choice{Label: "Act" + strconv.Itoa(i), Data: "a:" + strconv.Itoa(i)})
		}
		calls0, delivered0 := rec.Calls(), len(rec.Delivered())
		_, err := client.Ask(t.Context(), message.Outgoing{Thread: chat(ada), Content: message.Content{Prompt: &p}})
		calls, delivered := rec.Calls()-calls0, len(rec.Delivered())-delivered0
		switch {
		case err == nil && delivered != 1:
			t.Fatalf("Ask succeeded and the fake recorded %d", delivered)
		case err != nil && calls == 0 && message.ClassOf(err) != message.FailInvalidPayload:
			t.Fatalf("refused without a call as %v", err)
		case err != nil && calls > 0:
			// Only a text form over 4096 characters is Graph's to refuse.
			if message.ClassOf(err) != message.FailInvalidPayload {
				t.Fatalf("the fake refused it: %v", err)
			}
			if units(inert(p.FallbackText())) <= fakewhatsapp.TextLimit && units(inert(p.Text)) <= fakewhatsapp.TextLimit {
				t.Fatalf("the fake refused a question within the limits: %v", err)
			}
		}
	})
}
