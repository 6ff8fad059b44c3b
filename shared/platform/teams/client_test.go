package teams

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/shared/message"
)

type clientRig struct {
	api *faketeams.API
	rec *fakeapi.Recorder
	srv *httptest.Server
	c   *Client
	now time.Time
}

func newClientRig(t *testing.T) *clientRig {
	t.Helper()
	rig := &clientRig{rec: fakeapi.New(fakeapi.Options{}), now: time.Now()}
	rig.api = faketeams.New(faketeams.Options{Recorder: rig.rec})
	rig.srv = httptest.NewServer(rig.api)
	t.Cleanup(rig.srv.Close)
	rig.c = NewClient(testApp, testPassword, TokenURL(rig.srv.URL+faketeams.LoginPath, testTenant), rig.srv.URL, rig.srv.Client())
	rig.c.Now = func() time.Time { return rig.now }
	return rig
}

func (rig *clientRig) send(t *testing.T, m message.Outgoing) message.Receipt {
	t.Helper()
	rc, err := rig.c.Send(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// TestAppTokenIsCachedUntilShortlyBeforeExpiry: one Entra call for many
// sends, a new one once the token is within TokenMargin of its end.
func TestAppTokenIsCachedUntilShortlyBeforeExpiry(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	for range 3 {
		rig.send(t, message.Outgoing{Thread: personal, Content: message.Text("hi")})
	}
	if n := rig.api.TokenCalls(); n != 1 {
		t.Fatalf("%d token calls for 3 sends", n)
	}
	rig.now = rig.now.Add(faketeams.TokenLife - TokenMargin + time.Second)
	rig.send(t, message.Outgoing{Thread: personal, Content: message.Text("later")})
	if n := rig.api.TokenCalls(); n != 2 {
		t.Fatalf("%d token calls after the token neared its end", n)
	}
}

// TestReplyGoesThroughTheActivitysServiceURL: the activity's serviceUrl
// while fresh and allowed; the configured root otherwise (an http URL that
// is not the configured one is never posted to with the bot's token).
func TestReplyGoesThroughTheActivitysServiceURL(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	other := httptest.NewServer(rig.api)
	defer other.Close()
	fresh := func(u string) *message.ReplyContext {
		return &message.ReplyContext{Token: u, Until: rig.now.Add(time.Hour)}
	}
	if got := rig.c.root(fresh(rig.srv.URL + "/")); got != rig.srv.URL {
		t.Fatalf("root = %s", got)
	}
	if got := rig.c.root(fresh("https://smba.trafficmanager.net/emea/")); got != "https://smba.trafficmanager.net/emea" {
		t.Fatalf("an https serviceUrl: root = %s", got)
	}
	for _, bad := range []string{other.URL, "http://169.254.169.254/", "https://u:p@x.example/", "not a url"} {
		if got := rig.c.root(fresh(bad)); got != rig.srv.URL {
			t.Fatalf("serviceUrl %q: root = %s, want the configured one", bad, got)
		}
	}
	stale := &message.ReplyContext{Token: "https://smba.trafficmanager.net/emea/", Until: rig.now.Add(-time.Hour)}
	if got := rig.c.root(stale); got != rig.srv.URL {
		t.Fatalf("a stale context: root = %s", got)
	}
}

// TestRefusedTokenIsDropped: the connector's 401 drops the cached token,
// so the next send asks Entra again.
func TestRefusedTokenIsDropped(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	rig.send(t, message.Outgoing{Thread: personal, Content: message.Text("hi")})
	rig.rec.Inject(fakeapi.Fault{Error: "Unauthorized"})
	if _, err := rig.c.Send(t.Context(), message.Outgoing{Thread: personal, Content: message.Text("x")}); message.ClassOf(err) != message.FailAuth {
		t.Fatalf("err = %v", err)
	}
	rig.send(t, message.Outgoing{Thread: personal, Content: message.Text("again")})
	if n := rig.api.TokenCalls(); n != 2 {
		t.Fatalf("%d token calls", n)
	}
}

func TestChannelThreadAndTypingAndEdit(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	rc := rig.send(t, message.Outgoing{Thread: thread, Content: message.Text("in the thread"), ReplyTo: "1764432060456"})
	d := rig.rec.Delivered()[0]
	if d.Chat != channel || d.Thread != "1764431000000" || d.ReplyTo != "1764432060456" {
		t.Fatalf("delivered %+v", d)
	}
	if err := rig.c.Typing(t.Context(), thread); err != nil {
		t.Fatal(err)
	}
	if a := rig.rec.Actions(); len(a) != 1 || a[0].Thread != "1764431000000" {
		t.Fatalf("actions %+v", a)
	}
	if err := rig.c.Edit(t.Context(), thread, rc.MessageIDs[0], message.Text("changed")); err != nil {
		t.Fatal(err)
	}
	if e := rig.rec.Edits(); len(e) != 1 || e[0].Text != "changed" {
		t.Fatalf("edits %+v", e)
	}
	if err := rig.c.Edit(t.Context(), thread, "999", message.Text("x")); message.ClassOf(err) != message.FailNotFound {
		t.Fatalf("edit of an unknown activity: %v", err)
	}
}

// TestQuestionCards: buttons that submit Parley's data, a choice set past
// MaxButtons or for a multi-select, the text a TextRun (no markdown), and
// a closed question without controls.
func TestQuestionCards(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	ask := func(p message.Prompt) fakeapi.Delivery {
		t.Helper()
		if _, err := rig.c.Ask(t.Context(), message.Outgoing{Thread: group, Content: message.Content{Prompt: &p}}); err != nil {
			t.Fatal(err)
		}
		got := rig.rec.Delivered()
		return got[len(got)-1]
	}
	d := ask(message.Prompt{Text: "**Which** city? <at>all</at>", Options: []message.Choice{{Label: "Lisbon", Data: "q1:0:0"}, {Label: "Porto", Data: "q1:0:1"}}, Actions: []message.Choice{{Label: "Skip", Data: "q1:s"}}})
	if d.Text != "**Which** city? <at>all</at>" || len(d.Controls) != 3 || d.Controls[0] != (fakeapi.Control{Label: "Lisbon", Data: "q1:0:0"}) {
		t.Fatalf("card %+v", d)
	}
	raw, _ := json.Marshal(d.Args)
	if !strings.Contains(string(raw), `"type":"TextRun"`) || strings.Contains(string(raw), `"TextBlock"`) || strings.Contains(string(raw), "entities") {
		t.Fatalf("the question's text is not a TextRun: %s", raw)
	}
	var opts []message.Choice
	for i := range 8 {
		opts = append(opts, message.Choice{Label: "option " + string(rune('a'+i)), Data: "q2:0:" + string(rune('0'+i))})
	}
	d = ask(message.Prompt{Text: "many", Options: opts, Select: "q2:0:s", Multi: true, Actions: []message.Choice{{Label: "Done", Data: "q2:d"}}})
	if len(d.Controls) != 10 || d.Controls[0].Data != faketeams.ChoicePrefix+"q2:0:0" || d.Controls[8].Data != "q2:0:s" || d.Controls[9].Data != "q2:d" {
		t.Fatalf("choice set card controls %+v", d.Controls)
	}
	if !strings.Contains(string(mustJSON(d.Args)), `"isMultiSelect":true`) {
		t.Fatal("a multi-select is not a multi-select choice set")
	}
	d = ask(message.Prompt{Text: "closed: Lisbon"})
	if len(d.Controls) != 0 {
		t.Fatalf("a closed question has controls %+v", d.Controls)
	}
	// Too many buttons and no select: refused without a call.
	if _, err := rig.c.Ask(t.Context(), message.Outgoing{Thread: group, Content: message.Content{Prompt: &message.Prompt{Text: "x", Options: opts}}}); message.ClassOf(err) != message.FailInvalidPayload {
		t.Fatalf("err = %v", err)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestEntraRefusalIsAuthAndNothingIsPosted: a wrong secret is auth, and
// the connector is never called.
func TestEntraRefusalIsAuthAndNothingIsPosted(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	c := NewClient(testApp, "wrong", TokenURL(rig.srv.URL+faketeams.LoginPath, testTenant), rig.srv.URL, rig.srv.Client())
	_, err := c.Send(t.Context(), message.Outgoing{Thread: personal, Content: message.Text("x")})
	if message.ClassOf(err) != message.FailAuth || strings.Contains(err.Error(), "wrong") || rig.rec.Calls() != 0 {
		t.Fatalf("err = %v, %d calls", err, rig.rec.Calls())
	}
	// Entra unreachable: transient (nothing was posted).
	c = NewClient(testApp, testPassword, "http://127.0.0.1:1/token", rig.srv.URL, nil)
	if _, err := c.Send(t.Context(), message.Outgoing{Thread: personal, Content: message.Text("x")}); message.ClassOf(err) != message.FailTransient {
		t.Fatalf("Entra down: %v", err)
	}
}

// TestTargetsNameConversationsWhole: an events target names a conversation
// as Teams writes it, colon and all, and a channel thread with
// ";messageid=": both are the threads Teams' own activities make.
func TestTargetsNameConversationsWhole(t *testing.T) {
	t.Parallel()
	canon := Adapter.Targets(func(k string) string {
		if k == SettingAppID {
			return testApp
		}
		return ""
	})
	parse := func(s string) message.Thread {
		parts := strings.Split(s, ":")
		th := message.Thread{Platform: message.Teams, Account: parts[1], Chat: parts[2]}
		if len(parts) == 4 {
			th.Thread = parts[3]
		}
		return th
	}
	for target, want := range map[string]message.Thread{
		"teams:" + testApp + ":" + personalConv:                         personal,
		"teams:" + testApp + ":" + groupConv:                            group,
		"teams:" + testApp + ":" + channel + ";messageid=1764431000000": thread,
		"teams:" + strings.ToUpper(testApp) + ":" + groupConv:           group,
	} {
		got, err := canon(parse(target), false)
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", target, got, err, want)
		}
	}
	if _, err := canon(parse("teams:00000000-0000-4000-8000-00000000b002:"+groupConv), false); err == nil {
		t.Error("a target of another app was taken")
	}
}
