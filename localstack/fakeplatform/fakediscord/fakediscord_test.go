package fakediscord_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/discord"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	app     = fakediscord.ApplicationID
	channel = "1309000000000000200"
)

var t0 = time.Date(2025, 11, 29, 16, 1, 0, 0, time.UTC)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type setup struct {
	api   *fakediscord.API
	rec   *fakeapi.Recorder
	srv   *httptest.Server
	clock *clock
}

func newSetup(t *testing.T, opt fakediscord.Options) *setup {
	t.Helper()
	s := &setup{clock: &clock{t: t0}}
	s.rec = fakeapi.New(fakeapi.Options{Now: s.clock.Now})
	opt.Token, opt.Recorder = fakediscord.BotToken, s.rec
	if opt.ApplicationID == "" {
		opt.ApplicationID = app
	}
	s.api = fakediscord.New(opt)
	s.srv = httptest.NewServer(s.api)
	t.Cleanup(s.srv.Close)
	return s
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// do calls the fake; bot adds the bot token.
func (s *setup) do(t *testing.T, method, path string, bot bool, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if bot {
		req.Header.Set("Authorization", "Bot "+fakediscord.BotToken)
	}
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return answer{resp.StatusCode, resp.Header, m, string(raw)}
}

func (a answer) code() int {
	n, _ := a.body["code"].(float64)
	return int(n)
}

// token is the token of an interaction made at t in channel.
func token(t time.Time, ch string) string {
	return fakediscord.InteractionToken(app, fakediscord.Snowflake(t), ch)
}

const noMentions = `"allowed_mentions":{"parse":[]}`

func TestChannelMessages(t *testing.T) {
	t.Parallel()
	s := newSetup(t, fakediscord.Options{})
	path := "/channels/" + channel + "/messages"
	a := s.do(t, "POST", path, true, `{"content":"hello",`+noMentions+`}`)
	if a.status != 200 || a.body["content"] != "hello" || a.body["channel_id"] != channel {
		t.Fatalf("answer %d %s", a.status, a.raw)
	}
	id, _ := a.body["id"].(string)
	d := s.rec.Delivered()
	if len(d) != 1 || d[0].MessageID != id || d[0].Chat != channel || d[0].Platform != message.Discord || d[0].Text != "hello" {
		t.Fatalf("recorded %+v", d)
	}
	for name, c := range map[string]struct {
		path, body string
		bot        bool
		status     int
		code       int
	}{
		"NoToken":          {path, `{"content":"x"}`, false, 401, 0},
		"UnknownChannel":   {"/channels/general/messages", `{"content":"x"}`, true, 404, 10003},
		"Empty":            {path, `{"content":"  "}`, true, 400, 50006},
		"TooLong":          {path, `{"content":"` + strings.Repeat("😀", 2001) + `"}`, true, 400, 50035},
		"AtTheLimit":       {path, `{"content":"` + strings.Repeat("😀", 2000) + `"}`, true, 200, 0},
		"BadMentions":      {path, `{"content":"x","allowed_mentions":{"parse":["nobody"]}}`, true, 400, 50035},
		"ExclusiveUsers":   {path, `{"content":"x","allowed_mentions":{"parse":["users"],"users":["1"]}}`, true, 400, 50035},
		"LongNonce":        {path, `{"content":"x","nonce":"` + strings.Repeat("n", 26) + `"}`, true, 400, 50035},
		"Ephemeral":        {path, `{"content":"x","flags":64}`, true, 400, 50035},
		"NotJSON":          {path, `content=x`, true, 400, 50109},
		"UnknownReply":     {path, `{"content":"x","message_reference":{"message_id":"5"}}`, true, 400, 50035},
		"ReplyIfThere":     {path, `{"content":"x","message_reference":{"message_id":"5","fail_if_not_exists":false}}`, true, 200, 0},
		"Unroutable":       {"/channels", `{}`, true, 404, 0},
		"ComponentsAlone":  {path, `{"components":[{"type":1,"components":[{"type":2,"style":1,"label":"A","custom_id":"a"}]}]}`, true, 200, 0},
		"SixRows":          {path, `{"content":"x","components":[` + strings.Repeat(`{"type":1,"components":[{"type":2,"style":1,"label":"A","custom_id":"a"}]},`, 5) + `{"type":1}]}`, true, 400, 50035},
		"DuplicateCustom":  {path, `{"content":"x","components":[{"type":1,"components":[{"type":2,"style":1,"label":"A","custom_id":"a"},{"type":2,"style":1,"label":"B","custom_id":"a"}]}]}`, true, 400, 50035},
		"LongLabel":        {path, `{"content":"x","components":[{"type":1,"components":[{"type":2,"style":1,"label":"` + strings.Repeat("l", 81) + `","custom_id":"a"}]}]}`, true, 400, 50035},
		"SelectNotAlone":   {path, `{"content":"x","components":[{"type":1,"components":[{"type":3,"custom_id":"s","options":[{"label":"a","value":"a"}]},{"type":2,"style":1,"label":"B","custom_id":"b"}]}]}`, true, 400, 50035},
		"SelectTooWide":    {path, `{"content":"x","components":[{"type":1,"components":[{"type":3,"custom_id":"s","max_values":2,"options":[{"label":"a","value":"a"}]}]}]}`, true, 400, 50035},
		"SelectDuplicates": {path, `{"content":"x","components":[{"type":1,"components":[{"type":3,"custom_id":"s","options":[{"label":"a","value":"a"},{"label":"b","value":"a"}]}]}]}`, true, 400, 50035},
	} {
		t.Run(name, func(t *testing.T) {
			a := s.do(t, "POST", c.path, c.bot, c.body)
			if a.status != c.status || (c.status != 200 && a.code() != c.code) {
				t.Fatalf("answer %d %s", a.status, a.raw)
			}
		})
	}
}

// TestNonce: enforce_nonce returns the message made with the nonce for
// NonceWindow, and records nothing new.
func TestNonce(t *testing.T) {
	t.Parallel()
	s := newSetup(t, fakediscord.Options{})
	path := "/channels/" + channel + "/messages"
	body := `{"content":"once","nonce":"n1","enforce_nonce":true}`
	first := s.do(t, "POST", path, true, body)
	s.clock.Add(time.Minute)
	again := s.do(t, "POST", path, true, body)
	if first.body["id"] != again.body["id"] || len(s.rec.Delivered()) != 1 {
		t.Fatalf("ids %v, %v; %d delivered", first.body["id"], again.body["id"], len(s.rec.Delivered()))
	}
	// Without enforce_nonce, or after the window, a nonce does not dedupe.
	s.do(t, "POST", path, true, `{"content":"once","nonce":"n1"}`)
	s.clock.Add(fakediscord.NonceWindow)
	s.do(t, "POST", path, true, body)
	if n := len(s.rec.Delivered()); n != 3 {
		t.Fatalf("%d delivered", n)
	}
	// A dropped answer still made the message: its nonce holds.
	s.rec.Inject(fakeapi.Fault{DropResponseAfterCommit: true})
	req, _ := http.NewRequest("POST", s.srv.URL+path, strings.NewReader(`{"content":"lost","nonce":"n2","enforce_nonce":true}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bot "+fakediscord.BotToken)
	if resp, err := s.srv.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("the answer was not dropped")
	}
	re := s.do(t, "POST", path, true, `{"content":"lost","nonce":"n2","enforce_nonce":true}`)
	d := s.rec.Delivered()
	if len(d) != 4 || re.body["id"] != d[3].MessageID {
		t.Fatalf("the resend after the drop: %s; delivered %+v", re.raw, d)
	}
}

// TestInteractionWebhooks: @original is made by the first edit and edited
// by the next; follow-ups count against MaxFollowups; tokens live 15
// minutes, for their own application and channel.
func TestInteractionWebhooks(t *testing.T) {
	t.Parallel()
	s := newSetup(t, fakediscord.Options{MaxFollowups: 2})
	tok := token(t0.Add(-30*time.Second), channel)
	orig := "/webhooks/" + app + "/" + tok + "/messages/@original"
	a := s.do(t, "PATCH", orig, false, `{"content":"thinking done"}`)
	b := s.do(t, "PATCH", orig, false, `{"content":"thinking done, again"}`)
	if a.status != 200 || a.body["id"] == nil || a.body["id"] != b.body["id"] || b.body["edited_timestamp"] == nil {
		t.Fatalf("@original: %s, then %s", a.raw, b.raw)
	}
	for i := range 2 {
		if f := s.do(t, "POST", "/webhooks/"+app+"/"+tok+"?wait=true", false, `{"content":"f`+strconv.Itoa(i)+`","flags":64}`); f.status != 200 {
			t.Fatalf("follow-up %d: %s", i, f.raw)
		}
	}
	if f := s.do(t, "POST", "/webhooks/"+app+"/"+tok+"?wait=true", false, `{"content":"f3"}`); f.status != 400 || f.code() != 40094 {
		t.Fatalf("follow-up past the cap: %d %s", f.status, f.raw)
	}
	if f := s.do(t, "POST", "/webhooks/"+app+"/"+token(t0, channel), false, `{"content":"no wait"}`); f.status != 204 {
		t.Fatalf("follow-up without wait: %d %s", f.status, f.raw)
	}
	// @original is delivered once, as the reply's first bubble, then
	// edited; ephemeral follow-ups are notices to one person.
	d := s.rec.Delivered()
	if len(d) != 2 || d[0].Chat != channel || d[0].MessageID != a.body["id"] || d[0].Text != "thinking done" || d[1].Text != "no wait" {
		t.Fatalf("delivered %+v", d)
	}
	if e := s.rec.Edits(); len(e) != 1 || e[0].MessageID != d[0].MessageID || e[0].Text != "thinking done, again" {
		t.Fatalf("edits %+v", e)
	}
	if n := s.rec.Notices(); len(n) != 2 || n[0].Text != "f0" || n[0].Chat != channel || n[0].Platform != message.Discord {
		t.Fatalf("notices %+v", n)
	}
	for name, c := range map[string]struct {
		path   string
		status int
		code   int
	}{
		"NeverIssued":    {"/webhooks/" + app + "/fake.1.2.3/messages/@original", 404, 10015},
		"OtherApp":       {"/webhooks/1309000000000000002/" + tok + "/messages/@original", 404, 10015},
		"OtherChannel":   {"/webhooks/" + app + "/" + strings.Replace(tok, channel, "1309000000000000300", 1) + "/messages/@original", 404, 10015},
		"Expired":        {"/webhooks/" + app + "/" + token(t0.Add(-16*time.Minute), channel) + "/messages/@original", 401, 50027},
		"AnotherMessage": {"/webhooks/" + app + "/" + tok + "/messages/1444350000000000001", 404, 10008},
	} {
		if a := s.do(t, "PATCH", c.path, false, `{"content":"x"}`); a.status != c.status || a.code() != c.code {
			t.Errorf("%s: %d %s", name, a.status, a.raw)
		}
	}
}

// TestEditMessage: the bot edits its own messages in their channel; the
// components it names replace the old ones.
func TestEditMessage(t *testing.T) {
	t.Parallel()
	s := newSetup(t, fakediscord.Options{})
	a := s.do(t, "POST", "/channels/"+channel+"/messages", true, `{"content":"Which?","components":[{"type":1,"components":[{"type":2,"style":1,"label":"A","custom_id":"a"}]}]}`)
	id := a.body["id"].(string)
	if e := s.do(t, "PATCH", "/channels/"+channel+"/messages/"+id, true, `{"content":"Which? A","components":[]}`); e.status != 200 {
		t.Fatalf("edit: %s", e.raw)
	}
	if m, _ := s.api.Message(id); m.Content != "Which? A" || string(m.Components) != "[]" || !m.Edited {
		t.Fatalf("message %+v", m)
	}
	// The question was delivered with its control; the edit is an edit,
	// not a new bubble.
	if d := s.rec.Delivered(); len(d) != 1 || !reflect.DeepEqual(d[0].Controls, []fakeapi.Control{{Label: "A", Data: "a"}}) {
		t.Fatalf("delivered %+v", d)
	}
	if e := s.rec.Edits(); len(e) != 1 || e[0].MessageID != id || e[0].Text != "Which? A" || len(e[0].Controls) != 0 {
		t.Fatalf("edits %+v", e)
	}
	// Content left out stays.
	if e := s.do(t, "PATCH", "/channels/"+channel+"/messages/"+id, true, `{"components":[{"type":1,"components":[{"type":3,"custom_id":"s","options":[{"label":"One","value":"v1"},{"label":"Two","value":"v2"}]}]}]}`); e.status != 200 || e.body["content"] != "Which? A" {
		t.Fatalf("edit of the components alone: %s", e.raw)
	}
	if e := s.rec.Edits(); !reflect.DeepEqual(e[1].Controls, []fakeapi.Control{{Label: "One", Data: "v1"}, {Label: "Two", Data: "v2"}}) {
		t.Fatalf("select options %+v", e[1].Controls)
	}
	if e := s.do(t, "PATCH", "/channels/1309000000000000300/messages/"+id, true, `{"content":"x"}`); e.status != 404 || e.code() != 10008 {
		t.Fatalf("edit in another channel: %s", e.raw)
	}
	if e := s.do(t, "PATCH", "/channels/"+channel+"/messages/"+id, false, `{"content":"x"}`); e.status != 401 {
		t.Fatalf("edit without the token: %s", e.raw)
	}
}

// TestFaults: a fault answers in Discord's format, before validation.
func TestFaults(t *testing.T) {
	t.Parallel()
	s := newSetup(t, fakediscord.Options{})
	path := "/channels/" + channel + "/messages"
	s.rec.Inject(fakeapi.Fault{Status: 429, RetryAfter: 1500 * time.Millisecond})
	a := s.do(t, "POST", path, true, `{}`)
	if a.status != 429 || a.body["retry_after"] != 1.5 || a.header.Get("Retry-After") != "2" || a.header.Get("X-RateLimit-Scope") == "" {
		t.Fatalf("429: %v %s", a.header, a.raw)
	}
	s.rec.Inject(fakeapi.Fault{Error: "50013"})
	if a := s.do(t, "POST", path, true, `{}`); a.status != 403 || a.code() != 50013 || a.body["message"] != "Missing Permissions" {
		t.Fatalf("50013: %d %s", a.status, a.raw)
	}
	s.rec.Inject(fakeapi.Fault{Status: 502})
	if a := s.do(t, "POST", path, true, `{}`); a.status != 502 || !strings.Contains(a.header.Get("Content-Type"), "html") {
		t.Fatalf("502: %d %s", a.status, a.raw)
	}
	s.rec.Inject(fakeapi.Fault{Status: 404})
	if a := s.do(t, "POST", path, true, `{}`); a.status != 404 || a.code() != 0 {
		t.Fatalf("404: %d %s", a.status, a.raw)
	}
	if len(s.rec.Delivered()) != 0 || s.rec.Calls() != 4 {
		t.Fatalf("%d delivered, %d calls", len(s.rec.Delivered()), s.rec.Calls())
	}
}

// TestCommands: the bulk overwrite takes Parley's commands as Discord
// would, and refuses what Discord refuses.
func TestCommands(t *testing.T) {
	t.Parallel()
	s := newSetup(t, fakediscord.Options{})
	path := "/applications/" + app + "/commands"
	body, _ := json.Marshal(discord.Commands())
	a := s.do(t, "PUT", path, true, string(body))
	var got []map[string]any
	_ = json.Unmarshal([]byte(a.raw), &got)
	if a.status != 200 || len(got) != 2 || got[0]["name"] != "ask" || got[1]["name"] != "Ask the agent" || got[0]["id"] == nil || got[1]["application_id"] != app {
		t.Fatalf("PUT: %d %s", a.status, a.raw)
	}
	if g := s.do(t, "GET", path, true, ""); !strings.Contains(g.raw, `"Ask the agent"`) {
		t.Fatalf("GET: %s", g.raw)
	}
	for name, c := range map[string]struct {
		path, body string
		bot        bool
		status     int
	}{
		"NoToken":           {path, string(body), false, 401},
		"OtherApplication":  {"/applications/1309000000000000002/commands", string(body), true, 403},
		"UpperCaseName":     {path, `[{"type":1,"name":"Ask","description":"d"}]`, true, 400},
		"NoDescription":     {path, `[{"type":1,"name":"ask"}]`, true, 400},
		"MenuDescription":   {path, `[{"type":3,"name":"Ask the agent","description":"d"}]`, true, 400},
		"Duplicate":         {path, `[{"type":1,"name":"ask","description":"d"},{"name":"ask","description":"e"}]`, true, 400},
		"RequiredAfterOpt":  {path, `[{"type":1,"name":"ask","description":"d","options":[{"type":3,"name":"a","description":"a"},{"type":3,"name":"b","description":"b","required":true}]}]`, true, 400},
		"NotAnArray":        {path, `{"name":"ask"}`, true, 400},
		"ContextOutOfRange": {path, `[{"type":1,"name":"ask","description":"d","contexts":[7]}]`, true, 400},
	} {
		if a := s.do(t, "PUT", c.path, c.bot, c.body); a.status != c.status {
			t.Errorf("%s: %d %s", name, a.status, a.raw)
		}
	}
}

// TestSignedSamplesVerify: Sign signs as Discord does, with the key the
// samples document, and Interaction gives a sample a token the fake takes.
func TestSignedSamplesVerify(t *testing.T) {
	t.Parallel()
	pub, _ := hex.DecodeString(fakediscord.PublicKey)
	if !bytes.Equal(fakediscord.TestKey().Public().(ed25519.PublicKey), pub) {
		t.Fatal("KeySeed is not PublicKey's")
	}
	body, err := os.ReadFile(filepath.Join("..", "..", "..", "events", "discord", "command-guild.json"))
	if err != nil {
		t.Fatal(err)
	}
	h := fakediscord.Sign(fakediscord.TestKey(), t0, body)
	sig, _ := hex.DecodeString(h.Get("X-Signature-Ed25519"))
	if h.Get("X-Signature-Timestamp") != strconv.FormatInt(t0.Unix(), 10) || !ed25519.Verify(pub, append([]byte(h.Get("X-Signature-Timestamp")), body...), sig) {
		t.Fatalf("headers %v do not verify", h)
	}
	live, err := fakediscord.Interaction(body, t0)
	if err != nil {
		t.Fatal(err)
	}
	var in struct{ ID, Token string }
	_ = json.Unmarshal(live, &in)
	if in.ID != fakediscord.Snowflake(t0) || in.Token != fakediscord.InteractionToken(app, in.ID, channel) {
		t.Fatalf("Interaction gave %s / %s", in.ID, in.Token)
	}
	s := newSetup(t, fakediscord.Options{})
	if a := s.do(t, "PATCH", "/webhooks/"+app+"/"+in.Token+"/messages/@original", false, `{"content":"hi"}`); a.status != 200 {
		t.Fatalf("the fresh token: %s", a.raw)
	}
	if _, err := fakediscord.Interaction([]byte("[]"), t0); err == nil {
		t.Fatal("Interaction took a non-object")
	}
}

// TestUnderAPIV10: the fake also answers under /api/v10, as discord.com.
func TestUnderAPIV10(t *testing.T) {
	t.Parallel()
	s := newSetup(t, fakediscord.Options{})
	if a := s.do(t, "POST", "/api/v10/channels/"+channel+"/messages", true, `{"content":"hi"}`); a.status != 200 {
		t.Fatalf("%d %s", a.status, a.raw)
	}
}

// TestPress: a press the fake builds is an interaction the adapter takes,
// as a button or as a select's choice, and its token answers it.
func TestPress(t *testing.T) {
	t.Parallel()
	r, err := discord.NewReceiver(fakediscord.PublicKey, app)
	if err != nil {
		t.Fatal(err)
	}
	s := newSetup(t, fakediscord.Options{})
	q := s.do(t, "POST", "/channels/"+channel+"/messages", true, `{"content":"Which?","components":[`+
		`{"type":1,"components":[{"type":3,"custom_id":"q2:0:s","options":[{"label":"Mon","value":"q2:0:0"},{"label":"Tue","value":"q2:0:1"}]}]},`+
		`{"type":1,"components":[{"type":2,"style":2,"label":"Done","custom_id":"q2:0:d"}]}]}`)
	d := s.rec.Delivered()[0]
	msg, _ := q.body["id"].(string)
	for _, c := range []struct {
		control     fakeapi.Control
		guild, want string
		values      []string
		chatType    string
	}{
		{d.Controls[1], "", "q2:0:s=q2:0:1", []string{"q2:0:1"}, message.ChatPrivate},
		{d.Controls[2], "1309000000000000100", "q2:0:d", nil, message.ChatGroup},
	} {
		data := fakediscord.PressData(d, c.control)
		if data != c.want {
			t.Fatalf("PressData(%+v) = %q, want %q", c.control, data, c.want)
		}
		body := fakediscord.Press(c.guild, channel, "1309000000000000042", msg, data, t0)
		req := &platform.Request{Method: "POST", Header: fakediscord.Sign(fakediscord.TestKey(), t0, body), Body: body, Now: t0}
		if err := r.Verify(req); err != nil {
			t.Fatal(err)
		}
		p, err := r.Parse(req)
		if err != nil || len(p.Events) != 1 {
			t.Fatalf("Parse = %+v, %v", p, err)
		}
		ev := p.Events[0]
		custom, _, _ := strings.Cut(data, "=")
		if ev.Kind != message.KindAnswer || ev.Press.Data != custom || !reflect.DeepEqual(ev.Press.Values, c.values) ||
			ev.Press.MessageID != msg || ev.ChatType != c.chatType || ev.Sender.ID != "1309000000000000042" {
			t.Fatalf("event %+v, press %+v", ev, ev.Press)
		}
		_, tok, _ := strings.Cut(ev.ReplyContext.Token, ":")
		if a := s.do(t, "POST", "/webhooks/"+app+"/"+tok+"?wait=true", false, `{"content":"ok"}`); a.status != 200 {
			t.Fatalf("the press's token: %s", a.raw)
		}
	}
	if got := fakediscord.PressData(fakeapi.Delivery{}, fakeapi.Control{Data: "x"}); got != "x" {
		t.Fatalf("PressData without components = %q", got)
	}
}

// TestPressTokenEditsThePressedMessage: a press's @original is the message
// its control is on, as Discord has it: the token edits that message, and
// no other is made.
func TestPressTokenEditsThePressedMessage(t *testing.T) {
	t.Parallel()
	s := newSetup(t, fakediscord.Options{})
	q := s.do(t, "POST", "/channels/"+channel+"/messages", true, `{"content":"Which?","components":[{"type":1,"components":[{"type":2,"style":1,"label":"A","custom_id":"a"}]}]}`)
	id, _ := q.body["id"].(string)
	press := fakediscord.PressToken(app, fakediscord.Snowflake(t0), channel, id)
	e := s.do(t, "PATCH", "/webhooks/"+app+"/"+press+"/messages/@original", false, `{"content":"Which? A","components":[]}`)
	if e.status != 200 || e.body["id"] != id {
		t.Fatalf("edit through the press: %d %s", e.status, e.raw)
	}
	if m, _ := s.api.Message(id); m.Content != "Which? A" || string(m.Components) != "[]" {
		t.Fatalf("the pressed message is %+v", m)
	}
	if d := s.rec.Delivered(); len(d) != 1 {
		t.Fatalf("delivered %+v: the edit made a message", d)
	}
	forged := strings.Replace(press, id, "1444350000000000001", 1)
	if a := s.do(t, "PATCH", "/webhooks/"+app+"/"+forged+"/messages/@original", false, `{"content":"x"}`); a.status != 404 || a.code() != 10015 {
		t.Fatalf("a token naming another message: %d %s", a.status, a.raw)
	}
}

// TestWithoutBot: in a channel the bot is no member of, the bot token
// reaches nothing (50001), and interaction tokens still work.
func TestWithoutBot(t *testing.T) {
	t.Parallel()
	s := newSetup(t, fakediscord.Options{})
	s.api.WithoutBot(channel)
	if a := s.do(t, "POST", "/channels/"+channel+"/messages", true, `{"content":"hi"}`); a.status != 403 || a.code() != 50001 {
		t.Fatalf("bot message: %d %s", a.status, a.raw)
	}
	if a := s.do(t, "PATCH", "/channels/"+channel+"/messages/1444350000000000001", true, `{"content":"hi"}`); a.status != 403 || a.code() != 50001 {
		t.Fatalf("bot edit: %d %s", a.status, a.raw)
	}
	if a := s.do(t, "POST", "/webhooks/"+app+"/"+token(t0, channel)+"?wait=true", false, `{"content":"hi"}`); a.status != 200 {
		t.Fatalf("follow-up: %d %s", a.status, a.raw)
	}
	if a := s.do(t, "POST", "/channels/1309000000000000300/messages", true, `{"content":"hi"}`); a.status != 200 {
		t.Fatalf("another channel: %d %s", a.status, a.raw)
	}
}
