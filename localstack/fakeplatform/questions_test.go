package fakeplatform_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/shared/envelope"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/discord"
	"github.com/parleyhq/parley/shared/platform/googlechat"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/teams"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
	"github.com/parleyhq/parley/shared/questions"
	"github.com/parleyhq/parley/shared/store"
)

// The fakes validate every call as their platform does (text lengths after
// whatever the adapter makes of the text, label lengths, counts): a
// question the planner accepts for a platform must render there, each of
// its fields, and its closed form where the platform edits it.

const (
	lineToken = "parley-line-test-channel-access-token"
	lineBot   = "Ub0770000000000000000000000000001"
	waToken   = "EAAParleyFakeWhatsAppAccessTokenForTests0123456789"
	waPhone   = "106540352242922"
)

// platforms are every chat platform's sender, at its fake, and a chat of
// its own to ask in.
type platforms struct {
	srv     *httptest.Server
	senders map[message.Platform]platform.Sender
	threads map[message.Platform]message.Thread
}

func newPlatforms(t testing.TB) *platforms {
	t.Helper()
	fake := fakeplatform.New(fakeplatform.Options{
		TelegramToken: tgToken, SlackToken: slackToken, DiscordToken: fakediscord.BotToken,
		LineToken: lineToken, WhatsAppToken: waToken, WhatsAppPhoneNumberID: waPhone,
	})
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	env := fakeplatform.BaseURLs(srv.URL)
	for k, v := range map[string]string{
		telegram.SettingBotToken: tgToken, slack.SettingBotToken: slackToken, slack.SettingTeamID: "T0TEAM0001",
		discord.SettingBotToken: fakediscord.BotToken, discord.SettingApplicationID: fakediscord.ApplicationID,
		line.SettingChannelAccessToken: lineToken, line.SettingBotUserID: lineBot,
		whatsapp.SettingAccessToken: waToken, whatsapp.SettingPhoneNumberID: waPhone,
		teams.SettingAppID: faketeams.AppID, teams.SettingTenantID: faketeams.TenantID, teams.SettingAppPassword: faketeams.Password,
		googlechat.SettingProjectNumber: fakegooglechat.ProjectNumber,
		// Its token_uri is replaced by the fake's (BaseURLs).
		googlechat.SettingServiceAccount: fakegooglechat.ServiceAccountJSON("https://oauth2.googleapis.com/token"),
	} {
		env[k] = v
	}
	p := &platforms{srv: srv, senders: map[message.Platform]platform.Sender{}, threads: map[message.Platform]message.Thread{
		message.Telegram:   {Platform: message.Telegram, Account: "7000000001", Chat: "42"},
		message.Slack:      {Platform: message.Slack, Account: "T0TEAM0001", Chat: "C0CHAN0001"},
		message.Discord:    {Platform: message.Discord, Account: fakediscord.ApplicationID, Chat: "1309000000000000200"},
		message.LINE:       {Platform: message.LINE, Account: lineBot, Chat: "Uada00000000000000000000000000042"},
		message.WhatsApp:   {Platform: message.WhatsApp, Account: waPhone, Chat: "15551230001"},
		message.Teams:      {Platform: message.Teams, Account: faketeams.AppID, Chat: "19:group0000000000000000000000000001@thread.v2"},
		message.GoogleChat: {Platform: message.GoogleChat, Account: fakegooglechat.ProjectNumber, Chat: "spaces/AAQAparley01", Thread: "Thr00000002"},
	}}
	for _, a := range registry.Chat() {
		s, err := a.NewSender(func(k string) string { return env[k] }, srv.Client())
		if err != nil {
			t.Fatalf("%s sender: %v", a.Platform(), err)
		}
		if _, ok := p.threads[a.Platform()]; !ok {
			t.Fatalf("no chat to ask in on %s", a.Platform())
		}
		p.senders[a.Platform()] = s
	}
	return p
}

// check plans reply for every platform and, where the planner accepts it,
// renders each field's prompt (every option of a multi-select chosen, the
// longest its marks make it) and the answered question on the platform's
// fake. It returns the platforms that refused it, each with a LimitError.
func (p *platforms) check(t testing.TB, reply []byte) map[message.Platform]bool {
	t.Helper()
	refused := map[message.Platform]bool{}
	for _, a := range registry.Chat() {
		name := a.Platform()
		plan, err := envelope.Build(envelope.Reply{Body: reply, ContentType: "application/json"}, envelope.Config{}, a.Capabilities())
		var limit *envelope.LimitError
		switch {
		case errors.As(err, &limit):
			refused[name] = true
			continue
		case err != nil:
			t.Fatalf("%s: planning the question: %v", name, err)
		case plan.Problem != nil || plan.Next.Ask == nil:
			return refused // not a question: nothing to render
		}
		q := store.Question{Thread: p.threads[name], ID: "0123456789abcdef", Short: "0123456789", Form: plan.Next.Ask.Question, State: store.QuestionOpen}
		sender := p.senders[name]
		var first string
		for i, f := range q.Form.Fields {
			q.Field, q.Selected = i, nil
			if f.Kind == message.FieldMultiSelect {
				for _, o := range f.Options {
					q.Selected = append(q.Selected, o.Value)
				}
			}
			prompt := questions.Prompt(q)
			rc, err := ask(context.Background(), sender, message.Outgoing{Thread: q.Thread, Content: message.Content{Prompt: &prompt}})
			if err != nil {
				t.Fatalf("%s refuses field %d of a question the planner accepted: %v\nprompt: %s", name, i, err, show(prompt))
			}
			if i == 0 && len(rc.MessageIDs) > 0 {
				first = rc.MessageIDs[0]
			}
		}
		ed, ok := sender.(platform.Editor)
		if !ok || first == "" {
			continue
		}
		// Answered, with the longest answers the form takes.
		q.State, q.Answers = store.QuestionAnswered, map[string]any{}
		for _, f := range q.Form.Fields {
			q.Answers[f.Key] = longestAnswer(f)
		}
		closed := questions.Closed(q)
		if err := ed.Edit(context.Background(), q.Thread, first, message.Content{Prompt: &closed}); err != nil {
			t.Fatalf("%s refuses the answered question: %v\nprompt: %s", name, err, show(closed))
		}
	}
	return refused
}

// ask sends a question as the turn does: with the platform's controls
// where it has them, as the numbered text form where it has none.
func ask(ctx context.Context, s platform.Sender, m message.Outgoing) (message.Receipt, error) {
	if a, ok := s.(platform.Asker); ok {
		return a.Ask(ctx, m)
	}
	m.Content = message.Text(m.Content.Prompt.FallbackText())
	return s.Send(ctx, m)
}

// longestAnswer is the answer to f that shows longest: every option of a
// multi-select, a free text as long as a message may be.
func longestAnswer(f message.Field) any {
	switch f.Kind {
	case message.FieldMultiSelect:
		var all []string
		for _, o := range f.Options {
			all = append(all, o.Value)
		}
		return all
	case message.FieldSingleSelect:
		best := ""
		for _, o := range f.Options {
			if len(o.Label()) > len(best) {
				best = o.Value
			}
		}
		return best
	case message.FieldText:
		return strings.Repeat("*<@1>_", 4096/6)
	}
	return 1.5e300
}

func show(p message.Prompt) string {
	b, _ := json.Marshal(p)
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// askReply is an envelope asking msg with fields, each a JSON property.
func askReply(msg string, fields ...string) []byte {
	var props []string
	for i, f := range fields {
		props = append(props, strconv.Quote("f"+strconv.Itoa(i))+":"+f)
	}
	m, _ := json.Marshal(msg)
	return []byte(`{"schema":"openab.turn.v1","messages":[],"next":{"type":"ask","request":{"message":` + string(m) +
		`,"requestedSchema":{"type":"object","properties":{` + strings.Join(props, ",") + `}}}}}`)
}

func quoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// options are n titled options whose titles are label and their number.
func options(n int, label string) string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf(`{"const":"v%d","title":%s}`, i, quoted(label+" "+strconv.Itoa(i))))
	}
	return "[" + strings.Join(out, ",") + "]"
}

// TestQuestionsFitEveryPlatform_Finding5 (issue 23, finding 5): a question's
// title, description and hint are added to its message, and Discord's
// escaping can double a text, so a valid question of 1200 "*" was refused
// by Discord (50035) and stayed open but invisible. Every question the
// planner accepts for a platform renders there, each field and its answered
// form, within the platform's limits (the fakes check them as the
// platforms do); one that cannot is refused by the planner, with a
// LimitError, like any reply over a limit.
func TestQuestionsFitEveryPlatform_Finding5(t *testing.T) {
	t.Parallel()
	p := newPlatforms(t)
	seat := `{"type":"string","title":"Seat","oneOf":[{"const":"12A","title":"Window"},{"const":"12C","title":"Aisle"}]}`
	markup := strings.Repeat("*_~`|>#<@&", 20)[:200]
	var many []string
	for range 20 {
		many = append(many, `{"type":"string","title":`+quoted(markup)+`,"description":`+quoted(strings.Repeat("*", 1000))+
			`,"oneOf":`+options(25, strings.Repeat("🦜", 190))+`}`)
	}
	many[1] = `{"type":"array","title":"Extras","items":{"anyOf":` + options(25, strings.Repeat("x", 190)) + `}}`
	many[2] = `{"type":"string","description":` + quoted(strings.Repeat("<", 1000)) + `,"minLength":1,"maxLength":4096}`
	cases := []struct {
		name  string
		reply []byte
		// fits are the platforms that must take it.
		fits []message.Platform
	}{
		{"TheReportedQuestion", askReply(strings.Repeat("*", 1200), seat), []message.Platform{message.Telegram, message.Slack, message.LINE}},
		{"WithinEveryLimit", askReply(strings.Repeat("*", 900), seat), []message.Platform{message.Telegram, message.Slack, message.Discord, message.LINE, message.WhatsApp}},
		{"TheLargestForm", askReply(strings.Repeat("🦜", 1200), many...), nil},
		{"LongLabels", askReply("Which one?", `{"type":"string","oneOf":`+options(3, strings.Repeat("Lisbon ", 40))+`}`),
			[]message.Platform{message.Telegram, message.Slack, message.Discord, message.LINE, message.WhatsApp}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			refused := p.check(t, c.reply)
			for _, name := range c.fits {
				if refused[name] {
					t.Errorf("%s refuses a question it can show", name)
				}
			}
		})
	}
}

// FuzzQuestionFitsItsPlatform: whatever question an agent asks, within the
// form's own limits, each platform either shows every field of it and its
// answered form, as its fake (the platform's limits) takes them, or the
// planner refused it with a LimitError. The fuzzer writes the message, a
// field's title, description and option labels, and picks the form's
// shape.
func FuzzQuestionFitsItsPlatform(f *testing.F) {
	f.Add(strings.Repeat("*", 1200), "Seat", "", "Window", uint8(2), uint8(0), uint8(1), false)
	f.Add(strings.Repeat("🦜", 1200), strings.Repeat("<@&1>", 40), strings.Repeat("_", 1000), strings.Repeat("~", 200), uint8(25), uint8(1), uint8(20), true)
	f.Add("Which?\r# not a heading", "a\nb", "\r-# x", "line one\nline two", uint8(13), uint8(0), uint8(3), true)
	f.Add("", "", "", "", uint8(0), uint8(2), uint8(1), false)
	p := newPlatforms(f)
	f.Fuzz(func(t *testing.T, msg, title, desc, label string, nOptions, kind, nFields uint8, optional bool) {
		field := map[string]any{}
		if title != "" {
			field["title"] = title
		}
		if desc != "" {
			field["description"] = desc
		}
		var opts []map[string]string
		for i := range int(nOptions%25) + 1 {
			opts = append(opts, map[string]string{"const": "v" + strconv.Itoa(i), "title": label + " " + strconv.Itoa(i)})
		}
		switch kind % 5 {
		case 0:
			field["type"], field["oneOf"] = "string", opts
		case 1:
			field["type"], field["items"] = "array", map[string]any{"anyOf": opts}
		case 2:
			field["type"], field["maxLength"] = "string", 4096
		case 3:
			field["type"], field["minimum"], field["maximum"] = "number", -1e300, 1e300
		case 4:
			field["type"] = "boolean"
		}
		props := map[string]any{}
		var required []string
		for i := range int(nFields%20) + 1 {
			key := "f" + strconv.Itoa(i)
			props[key] = field
			if !optional {
				required = append(required, key)
			}
		}
		schema := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			schema["required"] = required
		}
		reply, err := json.Marshal(map[string]any{"schema": "openab.turn.v1", "messages": []any{},
			"next": map[string]any{"type": "ask", "request": map[string]any{"message": msg, "requestedSchema": schema}}})
		if err != nil {
			t.Skip()
		}
		p.check(t, reply)
	})
}
