package slack

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/shared/message"
)

// assistantClient is an assistant app's client on a fake Web API.
func assistantClient(t *testing.T) (*Client, *fakeslack.API, *fakeapi.Recorder) {
	t.Helper()
	rec := fakeapi.New(fakeapi.Options{})
	api := fakeslack.New(fakeslack.Options{Token: testToken, Recorder: rec})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &Client{Token: testToken, TeamID: team, BaseURL: srv.URL, Assistant: true}, api, rec
}

// In an assistant's thread a preview is Slack's native stream: started
// with the text, appended with what each update adds, markup inert; the
// first bubble stops it and updates it to the bubble's text. Done again,
// the finalization changes nothing.
func TestStreamStartedAppendedAndFinalized(t *testing.T) {
	t.Parallel()
	c, api, rec := assistantClient(t)
	th := message.Thread{Platform: message.Slack, Account: team, Chat: "D0STREAM01", Thread: "1764432000.000100"}
	p, err := c.Preview(t.Context(), message.Preview{Thread: th, Key: "turn-1"}, "<!channel> *Your*")
	if err != nil || p.MessageID == "" {
		t.Fatalf("start: %+v, %v", p, err)
	}
	if p, err = c.Preview(t.Context(), p, "<!channel> *Your* flight"); err != nil {
		t.Fatalf("append: %v", err)
	}
	if p, err = c.Preview(t.Context(), p, "<!channel> *Your* flight"); err != nil {
		t.Fatalf("same text: %v", err)
	}
	s := api.Streams()
	if len(s) != 1 || s[0].Appends != 1 || s[0].Thread != th.Thread || s[0].Stopped {
		t.Fatalf("streams %+v", s)
	}
	if want := `&lt;\!channel&gt; \*Your\* flight`; s[0].Text != want {
		t.Fatalf("stream text %q, want %q: inert", s[0].Text, want)
	}
	for range 2 {
		if err := c.FinalizePreview(t.Context(), p, message.Text("Your flight moved.")); err != nil {
			t.Fatalf("finalize: %v", err)
		}
	}
	if s := api.Streams(); !s[0].Stopped {
		t.Fatal("the stream was not stopped")
	}
	if v := rec.Visible(message.Slack, th.Chat); len(v) != 1 || v[0].Text != "Your flight moved." {
		t.Fatalf("the thread shows %+v", v)
	}
	if c.PreviewInterval(th) != streamInterval {
		t.Fatalf("interval %s", c.PreviewInterval(th))
	}
}

// A text that does not extend what the stream shows (an attempt that took
// the preview over knows nothing of it) stops the stream and rewrites the
// message; in a channel the stream names whom it is for; clearing stops
// and deletes it.
func TestStreamTakenOverAndCleared(t *testing.T) {
	t.Parallel()
	c, api, rec := assistantClient(t)
	th := message.Thread{Platform: message.Slack, Account: team, Chat: "C0STREAM01", Thread: "1764432000.000200"}
	p, err := c.Preview(t.Context(), message.Preview{Thread: th, Key: "turn-2", Recipient: "U0ADA00001"}, "first try")
	if err != nil {
		t.Fatal(err)
	}
	s := api.Streams()
	if len(s) != 1 || s[0].Recipient != "U0ADA00001" || s[0].RecipientTeam != team {
		t.Fatalf("streams %+v", s)
	}
	p.Streamed = "" // as a retried attempt reads it from its record
	if p, err = c.Preview(t.Context(), p, "second try"); err != nil || p.Streamed != "" {
		t.Fatalf("taken over: %+v, %v", p, err)
	}
	if v := rec.Visible(message.Slack, th.Chat); len(v) != 1 || v[0].Text != "second try" || !api.Streams()[0].Stopped {
		t.Fatalf("the thread shows %+v, streams %+v", v, api.Streams())
	}
	if err := c.ClearPreview(t.Context(), p); err != nil {
		t.Fatalf("clear: %v", err)
	}
	if v := rec.Visible(message.Slack, th.Chat); len(v) != 0 {
		t.Fatalf("the thread shows %+v", v)
	}
}

// A stream's status lines are the thread's status; "" clears it; outside
// an assistant's thread there is none, and nothing is called.
func TestAssistantStatus(t *testing.T) {
	t.Parallel()
	c, api, _ := assistantClient(t)
	th := message.Thread{Platform: message.Slack, Account: team, Chat: "D0STREAM02", Thread: "1764432000.000300"}
	if !c.NativeStatus(th) {
		t.Fatal("no native status in an assistant's thread")
	}
	for _, s := range []string{"searching flights…", ""} {
		if err := c.PreviewStatus(t.Context(), th, s); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, s := range api.Statuses() {
		if s.Channel != th.Chat || s.Thread != th.Thread {
			t.Fatalf("status %+v", s)
		}
		got = append(got, s.Status)
	}
	if !slices.Equal(got, []string{"searching flights…", ""}) {
		t.Fatalf("statuses %q", got)
	}
	inline := message.Thread{Platform: message.Slack, Account: team, Chat: "D0STREAM02"}
	c.Assistant = false
	for _, th := range []message.Thread{inline, th} {
		if err := c.PreviewStatus(t.Context(), th, "x"); err != nil || c.NativeStatus(th) {
			t.Fatalf("%+v: %v", th, err)
		}
	}
	if n := len(api.Statuses()); n != 2 {
		t.Fatalf("%d statuses: set outside an assistant's thread", n)
	}
}

func TestMarkdownInert(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain words":           "plain words",
		"<@U123> & <!here>":     `&lt;\@U123&gt; &amp; &lt;\!here&gt;`,
		"**bold** _it_ `code`":  `\*\*bold\*\* \_it\_ \` + "`" + `code\` + "`",
		":smile: [x](http://y)": `\:smile\: \[x\]\(http\:\/\/y\)`,
		"é ü 日本":                "é ü 日本",
	} {
		if got := markdownInert(in); got != want {
			t.Errorf("markdownInert(%q) = %q, want %q", in, got, want)
		}
		if strings.ContainsAny(markdownInert(in), "<>") {
			t.Errorf("%q keeps an angle bracket", in)
		}
	}
}
