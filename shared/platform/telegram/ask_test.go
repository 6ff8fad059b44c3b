package telegram

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/message"
)

func askClient(t *testing.T) (*Client, *fakeapi.Recorder) {
	t.Helper()
	rec := fakeapi.New(fakeapi.Options{})
	srv := httptest.NewServer(faketelegram.New(faketelegram.Options{Token: testToken, Recorder: rec}))
	t.Cleanup(srv.Close)
	return &Client{Token: testToken, BotID: "7000000001", BaseURL: srv.URL}, rec
}

var seatPrompt = message.Prompt{
	Text: "Which seat? <b>*now*</b>", Multi: true,
	Options: []message.Choice{{Label: "Window", Data: "abc:0:0", Selected: true}, {Label: strings.Repeat("Aisle ", 20), Data: "abc:0:1"}},
	Actions: []message.Choice{{Label: "Done", Data: "abc:0:d"}, {Label: "Skip", Data: "abc:x"}},
}

// TestAskEditAcknowledge: a question goes with an inline keyboard whose
// buttons carry the controls' data (the chosen marked, long labels cut),
// still without parse_mode; an edit changes the text and the keyboard (a
// closed prompt removes it); a press is answered with its notice.
func TestAskEditAcknowledge(t *testing.T) {
	t.Parallel()
	c, rec := askClient(t)
	rc, err := c.Ask(t.Context(), message.Outgoing{Thread: topic, Content: message.Content{Prompt: &seatPrompt}})
	if err != nil || len(rc.MessageIDs) != 1 {
		t.Fatalf("Ask = %+v, %v", rc, err)
	}
	d := rec.Delivered()[0]
	var got []string
	for _, ctl := range d.Controls {
		got = append(got, ctl.Label+"="+ctl.Data)
	}
	want := "✓ Window=abc:0:0|" + strings.Repeat("Aisle ", 7) + "Aisle…=abc:0:1|Done=abc:0:d|Skip=abc:x"
	if strings.Join(got, "|") != want || d.Text != seatPrompt.Text {
		t.Fatalf("sent %q with controls\n%s\nwant\n%s", d.Text, strings.Join(got, "|"), want)
	}
	if _, ok := d.Args["parse_mode"]; ok {
		t.Fatal("a question went with parse_mode")
	}
	closed := message.Prompt{Text: "Which seat?\n\n✓ Window"}
	if err := c.Edit(t.Context(), topic, rc.MessageIDs[0], message.Content{Prompt: &closed}); err != nil {
		t.Fatal(err)
	}
	e := rec.Edits()[0]
	if e.MessageID != rc.MessageIDs[0] || e.Text != closed.Text || len(e.Controls) != 0 {
		t.Fatalf("edit %+v", e)
	}
	if err := c.Edit(t.Context(), topic, "999", message.Text("x")); err == nil {
		t.Fatal("an edit of a message never sent succeeded")
	}
	// The press's webhook answered it (the receiver's Ack): the turn's
	// acknowledgement makes no second answerCallbackQuery, and a notice is
	// a message replying to the pressed one.
	press := message.Event{Kind: message.KindAnswer, Thread: topic, Press: &message.Press{Data: "abc:0:0", MessageID: rc.MessageIDs[0], AckID: "4000000000000000101"}}
	calls := rec.Calls()
	if err := c.Acknowledge(t.Context(), press, ""); err != nil || rec.Calls() != calls {
		t.Fatalf("an empty acknowledgement made %d calls: %v", rec.Calls()-calls, err)
	}
	if err := c.Acknowledge(t.Context(), press, "Only the person who was asked can answer."); err != nil {
		t.Fatal(err)
	}
	ds := rec.Delivered()
	if n := rec.Notices(); len(n) != 0 || ds[len(ds)-1].Text != "Only the person who was asked can answer." ||
		ds[len(ds)-1].Thread != topic.Thread || ds[len(ds)-1].ReplyTo != rc.MessageIDs[0] {
		t.Fatalf("notices %+v, last message %+v", n, ds[len(ds)-1])
	}
	// A button's data over Telegram's 64 bytes is refused before any call.
	long := message.Prompt{Text: "q", Options: []message.Choice{{Label: "x", Data: strings.Repeat("d", 65)}}}
	calls = rec.Calls()
	if _, err := c.Ask(t.Context(), message.Outgoing{Thread: topic, Content: message.Content{Prompt: &long}}); err == nil || rec.Calls() != calls {
		t.Fatalf("65-byte callback data: %v", err)
	}
	var kb struct {
		InlineKeyboard [][]json.RawMessage `json:"inline_keyboard"`
	}
	if err := json.Unmarshal(d.Args["reply_markup"], &kb); err != nil || len(kb.InlineKeyboard) != 3 {
		t.Fatalf("keyboard rows %d (%v), want one per option and one of actions", len(kb.InlineKeyboard), err)
	}
}
