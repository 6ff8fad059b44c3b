package slack

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/shared/message"
)

func askClient(t *testing.T) (*Client, *fakeapi.Recorder) {
	t.Helper()
	rec := fakeapi.New(fakeapi.Options{})
	srv := httptest.NewServer(fakeslack.New(fakeslack.Options{Token: testToken, Recorder: rec}))
	t.Cleanup(srv.Close)
	return &Client{Token: testToken, TeamID: team, BaseURL: srv.URL}, rec
}

func choices(n int) []message.Choice {
	out := make([]message.Choice, n)
	for i := range out {
		out[i] = message.Choice{Label: "Option <!channel> " + string(rune('A'+i)), Data: "abc:0:" + string(rune('0'+i))}
	}
	return out
}

func elementTypes(t *testing.T, d fakeapi.Delivery) string {
	t.Helper()
	var bl []SlackBlock
	if err := json.Unmarshal(d.Args["blocks"], &bl); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, b := range bl {
		types = append(types, b.Type)
		if b.Text != nil && b.Text.Type != "plain_text" {
			t.Fatalf("a %s block of %s text: Slack would parse it", b.Type, b.Text.Type)
		}
		for _, e := range b.Elements {
			types = append(types, e.Type)
		}
	}
	return strings.Join(types, ",")
}

// TestAskLaysOutBlockKit: buttons for a few options, a static select for
// many, checkboxes (their chosen ones initial) for a multi-select, then the
// actions; all plain_text, so nothing the agent wrote is parsed.
func TestAskLaysOutBlockKit(t *testing.T) {
	t.Parallel()
	c, rec := askClient(t)
	cases := []struct {
		prompt message.Prompt
		want   string
	}{
		{message.Prompt{Text: "Pick <!here>", Options: choices(3)}, "section,actions,button,button,button"},
		{message.Prompt{Text: "Pick", Options: choices(7), Select: "abc:0:s", Actions: []message.Choice{{Label: "Skip", Data: "abc:x"}}}, "section,actions,static_select,button"},
		{message.Prompt{Text: "Pick", Options: choices(4), Select: "abc:0:s", Multi: true, Actions: []message.Choice{{Label: "Done", Data: "abc:0:d"}}}, "section,actions,checkboxes,button"},
		{message.Prompt{Text: "Pick", Options: choices(12), Select: "abc:0:s", Multi: true}, "section,actions,multi_static_select"},
	}
	for i, tc := range cases {
		if _, err := c.Ask(t.Context(), message.Outgoing{Thread: dm, Content: message.Content{Prompt: &tc.prompt}}); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		d := rec.Delivered()[i]
		if got := elementTypes(t, d); got != tc.want {
			t.Errorf("case %d: blocks %s, want %s", i, got, tc.want)
		}
		if strings.Contains(d.Text, "<!") || len(d.Controls) < len(tc.prompt.Options) {
			t.Errorf("case %d: text %q, controls %+v", i, d.Text, d.Controls)
		}
	}
}

// TestEditAndAcknowledge: chat.update replaces the controls (a closed
// prompt keeps only its text); a notice reaches the presser alone; an
// acknowledgement without a notice makes no call (the webhook's 200 was it).
func TestEditAndAcknowledge(t *testing.T) {
	t.Parallel()
	c, rec := askClient(t)
	p := message.Prompt{Text: "Pick", Options: choices(2)}
	rc, err := c.Ask(t.Context(), message.Outgoing{Thread: dm, Content: message.Content{Prompt: &p}})
	if err != nil {
		t.Fatal(err)
	}
	closed := message.Prompt{Text: "Pick\n\n✓ Option A"}
	if err := c.Edit(t.Context(), dm, rc.MessageIDs[0], message.Content{Prompt: &closed}); err != nil {
		t.Fatal(err)
	}
	if e := rec.Edits(); len(e) != 1 || e[0].Text != closed.Text || len(e[0].Controls) != 0 {
		t.Fatalf("edits %+v", e)
	}
	press := message.Event{Kind: message.KindAnswer, Thread: dm, Sender: message.Sender{ID: "U0GRACE001"}, Press: &message.Press{Data: "abc:0:0"}}
	calls := rec.Calls()
	if err := c.Acknowledge(t.Context(), press, ""); err != nil || rec.Calls() != calls {
		t.Fatalf("a silent acknowledgement: %v, %d calls", err, rec.Calls()-calls)
	}
	if err := c.Acknowledge(t.Context(), press, "Only the person who was asked can answer."); err != nil {
		t.Fatal(err)
	}
	if n := rec.Notices(); len(n) != 1 || n[0].User != "U0GRACE001" || n[0].Text != "Only the person who was asked can answer." {
		t.Fatalf("notices %+v", n)
	}
}

// TestCheckboxesPress: a checkboxes change is a press of the menu carrying
// every option now chosen.
func TestCheckboxesPress(t *testing.T) {
	t.Parallel()
	body := fakeslack.BlockActions(team, "C0CHAN0001", "U0ADA00001", "1764432100.000500", "1764432200.123456", "abc:0:s", "abc:0:1", "abc:0:3")
	r := &Receiver{SigningSecret: testSecret}
	req := signed(body, time.Unix(1764432240, 0), time.Unix(1764432240, 0))
	if err := r.Verify(req); err != nil {
		t.Fatal(err)
	}
	got, err := r.Parse(req)
	if err != nil || len(got.Events) != 1 {
		t.Fatalf("Parse = %+v, %v", got, err)
	}
	if pr := got.Events[0].Press; pr.Data != "abc:0:s" || strings.Join(pr.Values, ",") != "abc:0:1,abc:0:3" {
		t.Fatalf("press %+v", pr)
	}
}
