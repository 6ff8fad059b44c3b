package questions_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/questions"
	"github.com/parleyhq/parley/shared/store"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func intp(n int) *int { return &n }

func form() message.Question {
	return message.Question{Message: "Your flight", Fields: []message.Field{
		{ID: "q0", Key: "seat", Kind: message.FieldSingleSelect, Title: "Seat", Required: true,
			Options: []message.Option{{Value: "12A", Title: "Window"}, {Value: "12C", Title: "Aisle"}}},
		{ID: "q1", Key: "extras", Kind: message.FieldMultiSelect, Title: "Extras", MaxItems: intp(2),
			Options: []message.Option{{Value: "meal"}, {Value: "bag"}, {Value: "wifi"}}},
		{ID: "q2", Key: "note", Kind: message.FieldText, Title: "Note", MinLength: intp(2), MaxLength: intp(20)},
	}}
}

func asked(f message.Question) store.Question {
	ev := message.Event{Platform: message.Telegram, Account: "1", EventID: "9", Kind: message.KindMessage,
		Thread: message.Thread{Platform: message.Telegram, Account: "1", Chat: "42"}, Sender: message.Sender{ID: "42"}}
	return questions.New(f, "0123456789abcdef0123456789abcdef", ev, "0123456789abcdef0123456789abcdef", "ask#1", t0, questions.Config{})
}

func press(t *testing.T, q store.Question, label, who, key string) questions.Outcome {
	t.Helper()
	p := questions.Prompt(q)
	for _, c := range append(p.Options, p.Actions...) {
		if c.Label == label {
			return questions.Press(q, message.Press{Data: c.Data}, who, key)
		}
	}
	t.Fatalf("no control %q in %+v", label, p)
	return questions.Outcome{}
}

// TestAFormAnsweredStepByStep: the owner answers each field in turn, the
// message is edited as it goes, and the agent gets every answer under its
// own key, once, when the last field is answered.
func TestAFormAnsweredStepByStep(t *testing.T) {
	q := asked(form())
	if q.Owner != "42" || q.State != store.QuestionOpen || !q.DueAt.Equal(t0.Add(24*time.Hour)) {
		t.Fatalf("new question %+v", q)
	}
	o := press(t, q, "Aisle", "42", "e1")
	if !o.Write || o.Answer != nil || o.Next.Field != 1 || o.Edit == nil || !strings.Contains(o.Edit.Text, "(2/3) Extras") {
		t.Fatalf("after the seat: %+v", o)
	}
	q = o.Next
	q = press(t, q, "meal", "42", "e2").Next
	q = press(t, q, "wifi", "42", "e3").Next
	if o := press(t, q, "bag", "42", "e4"); o.Notice != "Choose at most 2." || o.Write {
		t.Fatalf("a third extra: %+v", o)
	}
	o = press(t, q, "Done", "42", "e5")
	if o.Next.Field != 2 || !reflect.DeepEqual(o.Next.Answers["extras"], []string{"meal", "wifi"}) {
		t.Fatalf("after Done: %+v", o.Next)
	}
	q = o.Next
	if p := questions.Prompt(q); len(p.Options) != 0 || !strings.Contains(p.Text, "Reply with 2 to 20 characters.") {
		t.Fatalf("the note's prompt: %+v", p)
	}
	if o, ok := questions.Text(q, "x", "42", "e6"); !ok || o.Write || o.Notice != "Please reply with 2 to 20 characters." {
		t.Fatalf("a short note: %+v %v", o, ok)
	}
	if _, ok := questions.Text(q, "window please", "43", "e7"); ok {
		t.Fatal("another person's message answered the question")
	}
	o, ok := questions.Text(q, "window please", "42", "e8")
	want := &agent.Answer{QuestionID: q.ID, Action: agent.AnswerAccept, Content: map[string]any{"seat": "12C", "extras": []string{"meal", "wifi"}, "note": "window please"}}
	if !ok || !reflect.DeepEqual(o.Answer, want) || o.Next.State != store.QuestionAnswered || o.Next.ClosedBy != "e8" || o.Next.Sweep {
		t.Fatalf("the last answer: %+v %v", o, ok)
	}
	if !strings.Contains(o.Edit.Text, "Seat: ✓ Aisle\nExtras: ✓ meal, wifi\nNote: ✓ window please") || !o.Edit.Closed() {
		t.Fatalf("closed message %q", o.Edit.Text)
	}
	// The same event again carries on; any other press changes nothing.
	closed := o.Next
	if again, ok := questions.Text(closed, "window please", "42", "e8"); !ok || !reflect.DeepEqual(again.Answer, want) || again.Write {
		t.Fatalf("a redelivery of the winning message: %+v", again)
	}
	if o := questions.Press(closed, message.Press{Data: closed.Short + ":0:0"}, "42", "e9"); o.Notice != questions.NoticeClosed || o.Write || o.Answer != nil {
		t.Fatalf("a late press: %+v", o)
	}
}

// TestOnlyTheOwnerAnswers: anyone else gets a notice and changes nothing;
// a proactive question with no owner is anyone's.
func TestOnlyTheOwnerAnswers(t *testing.T) {
	q := asked(form())
	if o := press(t, q, "Window", "43", "e1"); o.Notice != questions.NoticeNotOwner || o.Write || o.Answer != nil {
		t.Fatalf("another person's press: %+v", o)
	}
	ev := message.Event{Platform: message.Events, Kind: message.KindProactive, Thread: q.Thread, EventID: "x"}
	open := questions.New(form(), q.ID, ev, q.ID, "ask#1", t0, questions.Config{})
	if o := press(t, open, "Window", "43", "e1"); !o.Write || o.Next.Field != 1 {
		t.Fatalf("an ownerless question: %+v", o)
	}
}

// TestControlDataIsShortAndOpaque: every control's data is Parley's own key,
// within Telegram's 64 bytes, for any valid form (25 options with long
// values), and never holds the agent's keys or values.
func TestControlDataIsShortAndOpaque(t *testing.T) {
	f := message.Field{ID: "q19", Key: strings.Repeat("k", 64), Kind: message.FieldMultiSelect}
	for i := range 25 {
		f.Options = append(f.Options, message.Option{Value: strings.Repeat("v", 190) + string(rune('a'+i)), Title: strings.Repeat("T", 200)})
	}
	fs := make([]message.Field, 20)
	for i := range fs {
		fs[i] = f
	}
	q := asked(message.Question{Message: "m", Fields: fs})
	q.Field = 19
	p := questions.Prompt(q)
	if len(p.Options) != 25 {
		t.Fatalf("%d options", len(p.Options))
	}
	for _, c := range append(append(p.Options, p.Actions...), message.Choice{Data: p.Select}) {
		if len(c.Data) > message.MaxControlData || strings.Contains(c.Data, "vvv") || strings.Contains(c.Data, "kkk") {
			t.Fatalf("control data %q", c.Data)
		}
	}
}

// TestSelectMenusAndSkip: a select menu's press carries its options' data;
// an optional form can be skipped (decline); a stale field's press is
// refused.
func TestSelectMenusAndSkip(t *testing.T) {
	f := form()
	f.Fields[0].Required = false
	q := asked(f)
	p := questions.Prompt(q)
	if p.Actions[len(p.Actions)-1].Label != "Skip" {
		t.Fatalf("an optional form without Skip: %+v", p.Actions)
	}
	o := questions.Press(q, message.Press{Data: p.Select, Values: []string{p.Options[1].Data}}, "42", "e1")
	if o.Next.Answers["seat"] != "12C" || o.Next.Field != 1 {
		t.Fatalf("a select press: %+v", o)
	}
	if stale := questions.Press(o.Next, message.Press{Data: p.Options[0].Data}, "42", "e2"); stale.Notice != questions.NoticeAnswered {
		t.Fatalf("a press of an answered field: %+v", stale)
	}
	skip := press(t, o.Next, "Skip", "42", "e3")
	if skip.Answer == nil || skip.Answer.Action != agent.AnswerDecline || skip.Next.State != store.QuestionDeclined || skip.Answer.Content != nil {
		t.Fatalf("skip: %+v", skip)
	}
	if _, ok := questions.Text(asked(f), "SKIP", "42", "e4"); !ok {
		t.Fatal("the word skip did not decline")
	}
}

// TestCancel: an open question closes as cancelled with its reason; a
// closed one is left alone.
func TestCancel(t *testing.T) {
	q := asked(form())
	o := questions.Cancel(q, questions.ReasonExpired, "cancel:1")
	if o.Answer.Action != agent.AnswerCancel || o.Next.State != store.QuestionCancelled || !o.Next.Sweep || o.Edit.Text != "Your flight\n\nThis question expired." {
		t.Fatalf("cancel: %+v", o)
	}
	if again := questions.Cancel(o.Next, questions.ReasonExpired, "cancel:1"); again.Write {
		t.Fatalf("cancelled twice: %+v", again)
	}
	ev := questions.CancelEvent(o.Next, t0)
	if ev.Platform != message.Parley || ev.Kind != message.KindAnswer || ev.Thread != q.Thread || ev.Cancel.QuestionID != q.ID || ev.Cancel.Reason != questions.ReasonExpired {
		t.Fatalf("cancel event %+v", ev)
	}
}

// TestTextAnswers: numbers, booleans and options by number or label.
func TestTextAnswers(t *testing.T) {
	lo, hi := 1.0, 9.0
	q := asked(message.Question{Message: "m", Fields: []message.Field{
		{ID: "q0", Key: "n", Kind: message.FieldInteger, Minimum: &lo, Maximum: &hi, Required: true},
		{ID: "q1", Key: "ok", Kind: message.FieldBoolean, Required: true},
		{ID: "q2", Key: "seat", Kind: message.FieldSingleSelect, Required: true, Options: []message.Option{{Value: "12A", Title: "Window"}, {Value: "12C", Title: "Aisle"}}},
		{ID: "q3", Key: "mail", Kind: message.FieldText, Format: "email", Required: true},
	}})
	steps := []struct{ text, notice string }{
		{"12", "Please reply with a whole number from 1 to 9."}, {"3", ""}, {"maybe", "-"}, {"Yes", ""},
		{"window", ""}, {"not an address", "Please reply with an email address."}, {"ada@example.com", ""},
	}
	for _, s := range steps {
		o, ok := questions.Text(q, s.text, "42", "e-"+s.text)
		switch {
		case s.notice == "-":
			if ok {
				t.Fatalf("%q read as an answer: %+v", s.text, o)
			}
		case !ok || o.Notice != s.notice:
			t.Fatalf("%q: %+v %v", s.text, o, ok)
		case o.Write:
			q = o.Next
		}
	}
	want := map[string]any{"n": int64(3), "ok": true, "seat": "12A", "mail": "ada@example.com"}
	if q.State != store.QuestionAnswered || !reflect.DeepEqual(q.Answers, want) {
		t.Fatalf("answers %+v (%s)", q.Answers, q.State)
	}
}

// TestReaskedQuestionKeepsItsOwner_Finding6: when a question closed without
// an answer (it expired, a newer one replaced it), the agent hears it in a
// turn of Parley's own cancel event, which has no sender; a question it
// asked again there had no owner, and anyone in the chat could answer it.
// The cancel carries the closed question's owner (through the queue, as
// the turn receives it), and a question asked in its turn keeps it.
func TestReaskedQuestionKeepsItsOwner_Finding6(t *testing.T) {
	for _, reason := range []string{questions.ReasonExpired, questions.ReasonSuperseded} {
		first := asked(form())
		closed := questions.Cancel(first, reason, "cancel:"+first.ID).Next
		body, err := intent.EncodeInbound(intent.Inbound{Event: questions.CancelEvent(closed, t0), ReceivedAt: t0})
		if err != nil {
			t.Fatal(err)
		}
		in, err := intent.DecodeInbound(body)
		if err != nil {
			t.Fatal(err)
		}
		again := questions.New(form(), "fedcba9876543210fedcba9876543210", in.Event, "fedcba9876543210fedcba9876543210", "ask#1", t0, questions.Config{})
		if again.Owner != "42" {
			t.Fatalf("%s: the question asked again is owned by %q, want 42, the owner of the one it replaces", reason, again.Owner)
		}
		if o := press(t, again, "Aisle", "43", "e1"); o.Write || o.Notice != questions.NoticeNotOwner {
			t.Fatalf("%s: another person's press: %+v", reason, o)
		}
	}
}
