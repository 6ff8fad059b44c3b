package discord

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// clock is a manual clock, shared by the client and the fake.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// call is one request as it reached the fake.
type call struct {
	method, path, query, auth, agent string
	body                             map[string]json.RawMessage
}

type env struct {
	c     *Client
	api   *fakediscord.API
	rec   *fakeapi.Recorder
	clock *clock
	mu    sync.Mutex
	calls []call
}

// setup serves a fake Discord API whose clock, and the client's, read
// 16:01:00, thirty seconds after the interaction of command (below).
func setup(t *testing.T, opt fakediscord.Options) *env {
	t.Helper()
	e := &env{clock: &clock{t: at(1, 0)}}
	e.rec = fakeapi.New(fakeapi.Options{Now: e.clock.Now})
	opt.Token, opt.ApplicationID, opt.Recorder = testToken, testApp, e.rec
	e.api = fakediscord.New(opt)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]json.RawMessage
		_ = json.Unmarshal(raw, &body)
		e.mu.Lock()
		e.calls = append(e.calls, call{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("User-Agent"), body})
		e.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(raw)))
		e.api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e.c = &Client{Token: testToken, ApplicationID: testApp, BaseURL: srv.URL, HTTP: srv.Client(), Now: e.clock.Now}
	return e
}

func (e *env) all() []call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]call(nil), e.calls...)
}

// interactionAt is an interaction made at t in the guild channel: its id
// and the token the fake honours for it.
func interactionAt(t time.Time) (id, token string) {
	id = fakediscord.Snowflake(t)
	return id, fakediscord.InteractionToken(testApp, id, guildChannel)
}

// command is the reply context of a /ask made at 16:00:30; press of a
// button pressed then.
func command() (*message.ReplyContext, string) {
	_, tok := interactionAt(at(0, 30))
	return &message.ReplyContext{Token: "5:" + tok, Until: at(15, 30)}, tok
}

func press() (*message.ReplyContext, string) {
	_, tok := interactionAt(at(0, 30))
	return &message.ReplyContext{Token: "6:" + tok, Until: at(15, 30)}, tok
}

func bubble(seq int, rc *message.ReplyContext, text string) message.Outgoing {
	return message.Outgoing{Thread: guild, Content: message.Text(text), IdempotencyKey: "intent0#b" + string(rune('0'+seq)), Sequence: seq, ReplyContext: rc}
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

func sendErr(t *testing.T, err error, class message.FailureClass) *message.SendError {
	t.Helper()
	var se *message.SendError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *message.SendError", err, err)
	}
	if se.Class != class {
		t.Fatalf("class %s, want %s: %v", se.Class, class, err)
	}
	if strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), "fake.") {
		t.Fatalf("the error shows a token: %v", err)
	}
	return se
}

// TestFirstBubbleReplacesTheDeferredResponse: the first bubble of a
// command's reply edits @original, through the interaction's token alone;
// sent again, it edits the same message: no copy.
func TestFirstBubbleReplacesTheDeferredResponse(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	rc, tok := command()
	first, err := e.c.Send(t.Context(), bubble(0, rc, "It will rain in Lisbon."))
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	again, err := e.c.Send(t.Context(), bubble(0, rc, "It will rain in Lisbon."))
	if err != nil {
		t.Fatalf("Send again: %v", err)
	}
	calls := e.all()
	if len(calls) != 2 || !reflect.DeepEqual(first, again) || len(first.MessageIDs) != 1 {
		t.Fatalf("receipts %v, %v after %d calls", first, again, len(calls))
	}
	c := calls[0]
	if c.method != "PATCH" || c.path != "/webhooks/"+testApp+"/"+tok+"/messages/@original" || c.auth != "" || !strings.HasPrefix(c.agent, "DiscordBot (") {
		t.Fatalf("call %+v", c)
	}
	if _, ok := c.body["nonce"]; ok {
		t.Fatal("an edit carries a nonce")
	}
	m, ok := e.api.Message(first.MessageIDs[0])
	if !ok || m.Content != "It will rain in Lisbon." || m.ChannelID != guildChannel || !m.Edited {
		t.Fatalf("the fake holds %+v", m)
	}
}

// TestLaterBubblesAreFollowups: the next MaxFollowups bubbles are
// follow-ups on the token; the ones after, channel messages with a nonce.
func TestLaterBubblesAreFollowups(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	rc, tok := command()
	var ids []string
	for seq := range 7 {
		rcp, err := e.c.Send(t.Context(), bubble(seq, rc, "part"))
		if err != nil {
			t.Fatalf("bubble %d: %v", seq, err)
		}
		ids = append(ids, rcp.MessageIDs...)
	}
	calls := e.all()
	for i, c := range calls {
		switch {
		case i == 0:
			if c.method != "PATCH" {
				t.Errorf("bubble 0: %s %s", c.method, c.path)
			}
		case i <= MaxFollowups:
			if c.method != "POST" || c.path != "/webhooks/"+testApp+"/"+tok || c.query != "wait=true" || c.auth != "" {
				t.Errorf("bubble %d: %+v", i, c)
			}
		default:
			if c.method != "POST" || c.path != "/channels/"+guildChannel+"/messages" || c.auth != "Bot "+testToken ||
				str(c.body["nonce"]) != Nonce("intent0#b"+string(rune('0'+i))) || string(c.body["enforce_nonce"]) != "true" {
				t.Errorf("bubble %d: %+v", i, c)
			}
		}
	}
	if len(calls) != 7 || len(e.rec.Delivered()) != 7 || len(ids) != 7 {
		t.Fatalf("%d calls, %d delivered, ids %v", len(calls), len(e.rec.Delivered()), ids)
	}
}

// TestPressRepliesNeverReplaceTheQuestion: a press's @original is the
// pressed message; its reply is follow-ups from the first bubble.
func TestPressRepliesNeverReplaceTheQuestion(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	rc, tok := press()
	for _, seq := range []int{0, 4, 5} {
		if _, err := e.c.Send(t.Context(), bubble(seq, rc, "thanks")); err != nil {
			t.Fatal(err)
		}
	}
	calls := e.all()
	if calls[0].method != "POST" || calls[0].path != "/webhooks/"+testApp+"/"+tok ||
		calls[1].path != calls[0].path || calls[2].path != "/channels/"+guildChannel+"/messages" {
		t.Fatalf("calls %+v", calls)
	}
}

// TestFollowupCapFallsBackToTheChannel: where Discord caps follow-ups, the
// one refused (40094, nothing posted) goes as a channel message in the same
// Send.
func TestFollowupCapFallsBackToTheChannel(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{MaxFollowups: 2})
	rc, _ := command()
	for seq := range 3 {
		if _, err := e.c.Send(t.Context(), bubble(seq, rc, "part")); err != nil {
			t.Fatal(err)
		}
	}
	rcp, err := e.c.Send(t.Context(), bubble(3, rc, "the third follow-up"))
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	calls := e.all()
	last := calls[len(calls)-1]
	if len(calls) != 5 || calls[3].path == last.path || last.path != "/channels/"+guildChannel+"/messages" {
		t.Fatalf("calls %+v", calls)
	}
	d := e.rec.Delivered()
	if len(d) != 4 || d[3].Text != "the third follow-up" || rcp.MessageIDs[0] != d[3].MessageID {
		t.Fatalf("delivered %+v, receipt %v", d, rcp)
	}
}

// TestOutsideTheTokenIsAChannelMessage: without a reply context, with one
// about to end, or one of a form the adapter does not know, a bubble is a
// channel message, sent once.
func TestOutsideTheTokenIsAChannelMessage(t *testing.T) {
	t.Parallel()
	rc, tok := command()
	for name, c := range map[string]struct {
		rc  *message.ReplyContext
		now time.Time
	}{
		"None":         {nil, at(1, 0)},
		"Expired":      {rc, at(20, 0)},
		"WithinMargin": {rc, at(14, 40)},
		"UnknownForm":  {&message.ReplyContext{Token: "9:" + tok, Until: at(15, 30)}, at(1, 0)},
		"NoPrefix":     {&message.ReplyContext{Token: tok, Until: at(15, 30)}, at(1, 0)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, fakediscord.Options{})
			e.clock.Set(c.now)
			if _, err := e.c.Send(t.Context(), bubble(0, c.rc, "hello")); err != nil {
				t.Fatal(err)
			}
			if calls := e.all(); len(calls) != 1 || calls[0].path != "/channels/"+guildChannel+"/messages" {
				t.Fatalf("calls %+v", calls)
			}
		})
	}
}

// TestDeadTokenFallsBackToTheChannel: a token Discord refuses (expired by
// its clock, unknown, an unknown interaction) proves nothing was posted: the
// same Send posts a channel message.
func TestDeadTokenFallsBackToTheChannel(t *testing.T) {
	t.Parallel()
	_, tok := interactionAt(at(0, 30))
	cases := map[string]struct {
		rc     *message.ReplyContext
		fake   time.Time // the fake's clock, which decides
		fault  fakeapi.Fault
		status int
	}{
		// Discord answers an expired token 401 50027.
		"ExpiredByDiscordsClock": {&message.ReplyContext{Token: "5:" + tok, Until: at(15, 30)}, at(16, 0), fakeapi.Fault{}, 401},
		"UnknownWebhook":         {&message.ReplyContext{Token: "5:fake.1.2.3", Until: at(15, 30)}, at(1, 0), fakeapi.Fault{}, 404},
		"UnknownInteraction":     {&message.ReplyContext{Token: "5:" + tok, Until: at(15, 30)}, at(1, 0), fakeapi.Fault{Error: "10062"}, 404},
		"InvalidWebhookToken":    {&message.ReplyContext{Token: "6:" + tok, Until: at(15, 30)}, at(1, 0), fakeapi.Fault{Error: "50027"}, 401},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, fakediscord.Options{})
			e.clock.Set(c.fake)
			e.c.Now = func() time.Time { return at(1, 0) } // the adapter believes the token fresh
			if c.fault.Error != "" {
				c.fault.Chat = guildChannel
				e.rec.Inject(c.fault)
			}
			rcp, err := e.c.Send(t.Context(), bubble(0, c.rc, "hello"))
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			calls, d := e.all(), e.rec.Delivered()
			if len(calls) != 2 || !strings.HasPrefix(calls[0].path, "/webhooks/") || calls[1].path != "/channels/"+guildChannel+"/messages" {
				t.Fatalf("calls %+v", calls)
			}
			if len(d) != 1 || rcp.MessageIDs[0] != d[0].MessageID {
				t.Fatalf("delivered %+v, receipt %v", d, rcp)
			}
		})
	}
}

// TestWebhookFailuresThatMayHavePosted: a 5xx or a dropped answer on the
// token may have posted the message: no fallback, unknown.
func TestWebhookFailuresThatMayHavePosted(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		fault fakeapi.Fault
		class message.FailureClass
	}{
		"HTTP502":       {fakeapi.Fault{Status: 502}, message.FailUnknown},
		"Dropped":       {fakeapi.Fault{DropResponseAfterCommit: true}, message.FailUnknown},
		"RateLimited":   {fakeapi.Fault{Status: 429, RetryAfter: 3 * time.Second}, message.FailRateLimit},
		"InvalidForm":   {fakeapi.Fault{Error: "50035"}, message.FailInvalidPayload},
		"MissingAccess": {fakeapi.Fault{Error: "50001"}, message.FailPermission},
		"HTTP404NoCode": {fakeapi.Fault{Status: 404}, message.FailAuth},
		"HTTP401NoCode": {fakeapi.Fault{Status: 401}, message.FailUnknown}, // see below
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, fakediscord.Options{})
			f := c.fault
			f.Chat = guildChannel
			e.rec.Inject(f)
			rc, _ := command()
			_, err := e.c.Send(t.Context(), bubble(1, rc, "the secret plan"))
			if name == "HTTP401NoCode" {
				// A 401 on the token is the token refused: the channel
				// message went instead.
				if err != nil || len(e.all()) != 2 {
					t.Fatalf("Send = %v after %d calls", err, len(e.all()))
				}
				return
			}
			se := sendErr(t, err, c.class)
			if strings.Contains(err.Error(), "the secret plan") {
				t.Fatalf("the error holds the text: %v", err)
			}
			if n := len(e.all()); n != 1 {
				t.Fatalf("%d calls: nothing proves the follow-up was not posted", n)
			}
			if c.class == message.FailRateLimit && se.RetryAfter != 3*time.Second {
				t.Fatalf("RetryAfter %s", se.RetryAfter)
			}
		})
	}
}

// TestNonceMakesAResendOneMessage: a channel message resent after its
// answer was lost is the same message, for Discord's few minutes; after
// them, another (why Capabilities.Idempotent is false).
func TestNonceMakesAResendOneMessage(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	out := bubble(0, nil, "hello")
	e.rec.Inject(fakeapi.Fault{DropResponseAfterCommit: true})
	_, err := e.c.Send(t.Context(), out)
	sendErr(t, err, message.FailUnknown)
	rc, err := e.c.Send(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	d := e.rec.Delivered()
	if len(d) != 1 || rc.MessageIDs[0] != d[0].MessageID {
		t.Fatalf("delivered %+v, receipt %v: the resend posted a copy", d, rc)
	}
	e.clock.Set(at(1, 0).Add(fakediscord.NonceWindow + time.Second))
	if _, err := e.c.Send(t.Context(), out); err != nil {
		t.Fatal(err)
	}
	if len(e.rec.Delivered()) != 2 {
		t.Fatal("the nonce deduplicated past Discord's window")
	}
	if Adapter.Capabilities().Idempotent {
		t.Fatal("Capabilities say Idempotent: follow-ups have no nonce, and a nonce lasts minutes")
	}
}

func TestNonce(t *testing.T) {
	t.Parallel()
	a, b := Nonce("8c1e0f2a9b7d4e6f8a0b1c2d3e4f5a6b#b2#1"), Nonce("8c1e0f2a9b7d4e6f8a0b1c2d3e4f5a6b#b2#2")
	if len(a) != MaxNonce || a == b || a != Nonce("8c1e0f2a9b7d4e6f8a0b1c2d3e4f5a6b#b2#1") {
		t.Fatalf("nonces %q, %q", a, b)
	}
}

func TestReplyTo(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	out := bubble(0, nil, "about that")
	out.ReplyTo = "1444356900000000001"
	if _, err := e.c.Send(t.Context(), out); err != nil {
		t.Fatal(err)
	}
	if got := string(e.all()[0].body["message_reference"]); got != `{"message_id":"1444356900000000001","fail_if_not_exists":false}` {
		t.Fatalf("message_reference %s", got)
	}
	if d := e.rec.Delivered(); d[0].ReplyTo != "1444356900000000001" {
		t.Fatalf("recorded %+v", d[0])
	}
	out.ReplyTo = "../../x"
	_, err := e.c.Send(t.Context(), out)
	sendErr(t, err, message.FailInvalidPayload)
	if len(e.all()) != 1 {
		t.Fatal("a reply to a non-id reached Discord")
	}
}

// TestTextIsInertEverywhere: every path escapes markdown and sends
// allowed_mentions that notify nobody; trusted markup goes as written,
// still notifying nobody.
func TestTextIsInertEverywhere(t *testing.T) {
	t.Parallel()
	const text = "**Launch** is @everyone's <@&1> [news](https://evil.example) — see https://example.com/a_b-c_(d)."
	for _, trust := range []bool{false, true} {
		e := setup(t, fakediscord.Options{})
		e.c.TrustMarkup = trust
		rc, _ := command()
		for seq := range 3 {
			var r *message.ReplyContext
			if seq < 2 {
				r = rc
			}
			if _, err := e.c.Send(t.Context(), bubble(seq, r, text)); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range e.all() {
			content := str(c.body["content"])
			if string(c.body["allowed_mentions"]) != `{"parse":[],"replied_user":false}` {
				t.Fatalf("%s %s: allowed_mentions %s", c.method, c.path, c.body["allowed_mentions"])
			}
			switch {
			case trust && content != text:
				t.Fatalf("trusted markup changed: %q", content)
			case !trust && (view(content) != text || live(content) != nil):
				t.Fatalf("%s: content %q shows %q (%v)", c.path, content, view(content), live(content))
			}
		}
	}
}

// TestAsk: a question goes with its controls, where text would; Ask takes
// questions only.
func TestAsk(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	rc, _ := command()
	q := bubble(0, rc, "")
	q.Content = message.Content{Prompt: &message.Prompt{Text: "Which *city*?", Options: []message.Choice{{Label: "Lisbon", Data: "q1:0:0"}, {Label: "Porto", Data: "q1:0:1"}}}}
	rcp, err := e.c.Ask(t.Context(), q)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	c := e.all()[0]
	if c.method != "PATCH" || str(c.body["content"]) != `Which \*city\*?` {
		t.Fatalf("call %+v", c)
	}
	want := `[{"type":1,"components":[{"type":2,"style":1,"label":"Lisbon","custom_id":"q1:0:0"},{"type":2,"style":1,"label":"Porto","custom_id":"q1:0:1"}]}]`
	if string(c.body["components"]) != want {
		t.Fatalf("components %s\nwant %s", c.body["components"], want)
	}
	if m, _ := e.api.Message(rcp.MessageIDs[0]); string(m.Components) != want {
		t.Fatalf("the fake holds %s", m.Components)
	}
	// Send renders a question the same way (delivery calls Ask, but a
	// question never goes as something else).
	if _, err := e.c.Send(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.Ask(t.Context(), bubble(1, rc, "text"))
	sendErr(t, err, message.FailInvalidPayload)
	if len(e.all()) != 2 {
		t.Fatal("Ask of text reached Discord")
	}
}

// TestEdit: a question's message edited to its closed form loses its
// controls; what is not there is not_found; what is no id, no call.
func TestEdit(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	id := askCity(t, e)
	closed := message.Content{Prompt: &message.Prompt{Text: "Which city? Lisbon"}}
	if err := e.c.Edit(t.Context(), guild, id, closed); err != nil {
		t.Fatalf("Edit: %v", err)
	}
	c := e.all()[1]
	if c.method != "PATCH" || c.path != "/channels/"+guildChannel+"/messages/"+id || c.auth != "Bot "+testToken || string(c.body["components"]) != "[]" {
		t.Fatalf("call %+v", c)
	}
	if m, _ := e.api.Message(id); m.Content != "Which city? Lisbon" || string(m.Components) != "[]" || !m.Edited {
		t.Fatalf("the fake holds %+v", m)
	}
	if err := e.c.Edit(t.Context(), guild, id, message.Text("Lisbon it is")); err != nil {
		t.Fatal(err)
	}
	sendErr(t, e.c.Edit(t.Context(), guild, "1444350000000000001", closed), message.FailNotFound)
	n := len(e.all())
	sendErr(t, e.c.Edit(t.Context(), guild, "../1", closed), message.FailInvalidPayload)
	sendErr(t, e.c.Edit(t.Context(), guild, id, message.Content{}), message.FailInvalidPayload)
	if len(e.all()) != n {
		t.Fatal("an edit Discord cannot take reached it")
	}
}

// askCity asks "Which city?" in the guild channel, and gives the question
// message's id.
func askCity(t *testing.T, e *env) string {
	t.Helper()
	q := bubble(0, nil, "")
	q.Content = message.Content{Prompt: &message.Prompt{Text: "Which city?", Options: []message.Choice{{Label: "Lisbon", Data: "q1:0:0"}}}}
	rc, err := e.c.Ask(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	return rc.MessageIDs[0]
}

// TestEditPressed: a question is closed through the press's own token
// (its @original is the pressed message), which reaches a channel the bot
// is no member of; a stale token makes no call.
func TestEditPressed(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	id := askCity(t, e)
	e.api.WithoutBot(guildChannel) // the app is installed for a person, not the server
	tok := fakediscord.PressToken(testApp, fakediscord.Snowflake(at(0, 30)), guildChannel, id)
	ev := message.Event{Platform: message.Discord, Account: testApp, Kind: message.KindAnswer, Thread: guild,
		ReplyContext: &message.ReplyContext{Token: "6:" + tok, Until: at(15, 30)}, Press: &message.Press{Data: "q1:0:0", MessageID: id}}
	closed := message.Content{Prompt: &message.Prompt{Text: "Which city? Lisbon"}}
	sendErr(t, e.c.Edit(t.Context(), guild, id, closed), message.FailPermission)
	if err := e.c.EditPressed(t.Context(), ev, closed); err != nil {
		t.Fatalf("EditPressed: %v", err)
	}
	c := e.all()[len(e.all())-1]
	if c.method != "PATCH" || c.path != "/webhooks/"+testApp+"/"+tok+"/messages/@original" || c.auth != "" || string(c.body["components"]) != "[]" {
		t.Fatalf("call %+v", c)
	}
	if m, _ := e.api.Message(id); m.Content != "Which city? Lisbon" || string(m.Components) != "[]" || !m.Edited {
		t.Fatalf("the fake holds %+v", m)
	}
	n := len(e.all())
	stale := ev
	stale.ReplyContext = &message.ReplyContext{Token: "6:" + tok, Until: at(1, 30)}
	sendErr(t, e.c.EditPressed(t.Context(), stale, closed), message.FailInvalidPayload)
	if len(e.all()) != n {
		t.Fatal("an edit through a stale token reached Discord")
	}
}

// TestAcknowledge: the webhook's answer acknowledged the press; a notice
// goes to the presser alone through the press's token.
func TestAcknowledge(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	rc, tok := press()
	ev := message.Event{Platform: message.Discord, Account: testApp, Kind: message.KindAnswer, Thread: guild, ReplyContext: rc,
		Press: &message.Press{Data: "q1:0:0", MessageID: "1444357400000000001"}}
	if err := e.c.Acknowledge(t.Context(), ev, ""); err != nil || len(e.all()) != 0 {
		t.Fatalf("Acknowledge without notice = %v after %d calls", err, len(e.all()))
	}
	if err := e.c.Acknowledge(t.Context(), ev, "That question is *closed*."); err != nil {
		t.Fatalf("Acknowledge: %v", err)
	}
	c := e.all()[0]
	if c.method != "POST" || c.path != "/webhooks/"+testApp+"/"+tok || string(c.body["flags"]) != "64" ||
		str(c.body["content"]) != `That question is \*closed\*.` || string(c.body["allowed_mentions"]) != `{"parse":[],"replied_user":false}` {
		t.Fatalf("call %+v", c)
	}
	stale := ev
	stale.ReplyContext = &message.ReplyContext{Token: rc.Token, Until: at(1, 30)}
	sendErr(t, e.c.Acknowledge(t.Context(), stale, "closed"), message.FailInvalidPayload)
	foreign := ev
	foreign.Thread.Account = "1309000000000000002"
	sendErr(t, e.c.Acknowledge(t.Context(), foreign, "closed"), message.FailInvalidPayload)
	if len(e.all()) != 1 {
		t.Fatal("a notice that cannot go reached Discord")
	}
}

// TestThreadsAreChannels: a thread inside a chat, or a chat that is no
// channel id, is refused without a call.
func TestThreadsAreChannels(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	for _, th := range []message.Thread{
		{Platform: message.Discord, Account: testApp, Chat: guildChannel, Thread: "1309000000000000201"},
		{Platform: message.Discord, Account: testApp, Chat: "general"},
		{Platform: message.Discord, Account: testApp, Chat: guildChannel + "/messages/1"},
	} {
		_, err := e.c.Send(t.Context(), message.Outgoing{Thread: th, Content: message.Text("x")})
		sendErr(t, err, message.FailInvalidPayload)
	}
	if len(e.all()) != 0 {
		t.Fatal("a call was made")
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	h := func(v string) http.Header { return http.Header{"Retry-After": {v}} }
	for name, c := range map[string]struct {
		e    DiscordError
		h    http.Header
		want time.Duration
	}{
		"Body":       {DiscordError{RetryAfter: 0.25}, http.Header{}, 250 * time.Millisecond},
		"Header":     {DiscordError{}, h("4"), 4 * time.Second},
		"TheLonger":  {DiscordError{RetryAfter: 6.5}, h("4"), 6500 * time.Millisecond},
		"Negative":   {DiscordError{RetryAfter: -3}, http.Header{}, 0},
		"Absurd":     {DiscordError{RetryAfter: 1e300}, http.Header{}, 24 * time.Hour},
		"Nothing":    {DiscordError{}, http.Header{}, 0},
		"HeaderOnly": {DiscordError{}, h("garbage"), 0},
	} {
		if got := retryAfter(c.e, c.h); got != c.want {
			t.Errorf("%s: %s, want %s", name, got, c.want)
		}
	}
	se, _ := classify(&platform.Response{Status: 429, Header: http.Header{"X-Ratelimit-Global": {"true"}, "X-Ratelimit-Scope": {"global"}},
		Body: []byte(`{"message":"You are being rate limited.","retry_after":64.57,"global":true}`)}, false)
	if se.Class != message.FailRateLimit || se.RetryAfter != 64570*time.Millisecond || !strings.Contains(se.Reason, "global") {
		t.Fatalf("classify = %+v", se)
	}
}

func TestNewSender(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) platform.Env { return func(k string) string { return m[k] } }
	if _, err := Adapter.NewSender(env(map[string]string{SettingApplicationID: testApp}), nil); !errors.Is(err, platform.ErrNotConfigured) {
		t.Fatalf("no token: %v", err)
	}
	if _, err := Adapter.NewSender(env(map[string]string{SettingBotToken: testToken}), nil); err == nil || errors.Is(err, platform.ErrNotConfigured) {
		t.Fatalf("no application id: %v", err)
	}
	if _, err := Adapter.NewSender(env(map[string]string{SettingBotToken: testToken, SettingApplicationID: testApp, SettingTrustAgentMarkup: "sure"}), nil); err == nil {
		t.Fatal("a trust setting that is no bool was taken")
	}
	s, err := Adapter.NewSender(env(map[string]string{SettingBotToken: testToken, SettingApplicationID: testApp, SettingTrustAgentMarkup: "true"}), nil)
	if err != nil || !s.(*Client).TrustMarkup {
		t.Fatalf("NewSender = %+v, %v", s, err)
	}
}

// TestUnreachableIsTransient: a call that could not connect left nothing
// behind, on either path.
func TestUnreachableIsTransient(t *testing.T) {
	t.Parallel()
	c := &Client{Token: testToken, ApplicationID: testApp, BaseURL: "http://127.0.0.1:1"}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := c.Send(ctx, bubble(0, nil, "hello"))
	sendErr(t, err, message.FailTransient)
	rc, _ := command()
	_, err = c.Send(ctx, bubble(1, rc, "hello"))
	sendErr(t, err, message.FailTransient)
}
