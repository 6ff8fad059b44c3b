package fakeplatform

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
)

// Chat types a person can write in (Said.ChatType).
const (
	ChatPrivate = "private"
	ChatGroup   = "group"
	ChatThread  = "thread"
)

// ChatTypes are the chat types the sample identities of events/ have on
// p: every platform has a private chat; Discord, LINE, Slack, Teams,
// Telegram and Google Chat a group; Slack, Teams, Telegram and Google Chat
// a thread. WhatsApp Cloud is one-to-one.
func ChatTypes(p message.Platform) []string {
	switch p {
	case message.Telegram, message.Slack, message.Teams, message.GoogleChat:
		return []string{ChatPrivate, ChatGroup, ChatThread}
	case message.Discord, message.LINE:
		return []string{ChatPrivate, ChatGroup}
	case message.WhatsApp:
		return []string{ChatPrivate}
	}
	return nil
}

// Said is a person's message, as Say writes it.
type Said struct {
	Platform message.Platform
	// ChatType is ChatPrivate, ChatGroup or ChatThread.
	ChatType string
	Text     string
	At       time.Time
	// Seq makes the message's platform ids unique among those a run says.
	Seq int64
}

// Say is the webhook a person's text message sends Parley, signed: in the
// sample chats of events/ (Ada's private chat with the bot, the testers'
// group, a forum topic or thread), dated At, with ids made from Seq. On
// Discord, whose people reach Parley through interactions, it is the /ask
// command with the text.
func (s Signer) Say(m Said) (Webhook, error) {
	seq := m.Seq
	var body any
	at := m.At
	switch m.Platform {
	case message.Telegram:
		body = s.telegram(m, seq)
	case message.Slack:
		body = s.slack(m, seq)
	case message.Discord:
		body = discordCommand(m)
	case message.LINE:
		body = s.line(m, seq)
	case message.WhatsApp:
		body = s.whatsapp(m, seq)
	case message.Teams:
		conv := map[string]string{
			ChatPrivate: "a:1personal0ada00000000000000000000000000000000000000000000000000001",
			ChatGroup:   "19:group0000000000000000000000000001@thread.v2",
			ChatThread:  "19:c0ffee00000000000000000000000001@thread.tacv2;messageid=1764431000000",
		}[m.ChatType]
		from := faketeams.Ada
		if m.ChatType != ChatPrivate {
			from = faketeams.Grace
		}
		return s.Sign(m.Platform, faketeams.Message(s.FakeRoot+"/teams", conv, from, strconv.FormatInt(at.UnixMilli()*1000+seq%1000, 10), m.Text, at), at)
	case message.GoogleChat:
		space, thread := "spaces/dmAda0000001", ""
		switch m.ChatType {
		case ChatGroup:
			space = "spaces/AAQAparley01"
		case ChatThread:
			space, thread = "spaces/AAQAparley01", "Thr00000002"
		}
		id := fmt.Sprintf("Con%010d.Con%010d", seq, seq)
		return s.Sign(m.Platform, fakegooglechat.Message(space, thread, fakegooglechat.Ada, id, m.Text, at), at)
	default:
		return Webhook{}, fmt.Errorf("no composer for %q", m.Platform)
	}
	if body == nil {
		return Webhook{}, fmt.Errorf("%s has no %s chat among the samples: want one of %v", m.Platform, m.ChatType, ChatTypes(m.Platform))
	}
	b, err := json.Marshal(body)
	if err != nil {
		return Webhook{}, err
	}
	return s.Sign(m.Platform, b, at)
}

func (s Signer) telegram(m Said, seq int64) any {
	ada := map[string]any{"id": 42, "is_bot": false, "first_name": "Ada", "last_name": "Lovelace", "username": "ada"}
	msg := map[string]any{"message_id": seq, "from": ada, "date": m.At.Unix(), "text": m.Text}
	switch m.ChatType {
	case ChatPrivate:
		msg["chat"] = map[string]any{"id": 42, "first_name": "Ada", "type": "private"}
	case ChatGroup:
		msg["chat"] = map[string]any{"id": -1001000000001, "title": "Parley testers", "type": "supergroup"}
	case ChatThread:
		msg["chat"] = map[string]any{"id": -1001000000002, "title": "Parley lab", "is_forum": true, "type": "supergroup"}
		msg["message_thread_id"], msg["is_topic_message"] = 77, true
	default:
		return nil
	}
	return map[string]any{"update_id": seq, "message": msg}
}

func (s Signer) slack(m Said, seq int64) any {
	ts := fmt.Sprintf("%d.%06d", m.At.Unix(), seq%1_000_000)
	team := s.Env(slack.SettingTeamID)
	ev := map[string]any{"user": "U0ADA00001", "type": "message", "ts": ts, "text": m.Text, "team": team, "event_ts": ts}
	switch m.ChatType {
	case ChatPrivate:
		ev["channel"], ev["channel_type"] = "D0DM000001", "im"
	case ChatGroup:
		// A channel message reaches a bot that is mentioned.
		ev["type"], ev["channel"], ev["text"] = "app_mention", "C0CHAN0001", "<@U0BOT00001> "+m.Text
	case ChatThread:
		ev["channel"], ev["channel_type"], ev["thread_ts"] = "C0CHAN0001", "channel", "1764432060.000200"
	default:
		return nil
	}
	return map[string]any{
		"token": "ZZZZZZWSxiZZZ2yIvs3peJ", "team_id": team, "api_app_id": "A0APP00001", "event": ev, "type": "event_callback",
		"event_id": fmt.Sprintf("Ev0CON%06d", seq%1_000_000), "event_time": m.At.Unix(),
		"authorizations": []any{map[string]any{"team_id": team, "user_id": "U0BOT00001", "is_bot": true}},
	}
}

func discordCommand(m Said) any {
	ada := map[string]any{"id": "1309000000000000042", "username": "ada", "global_name": "Ada", "discriminator": "0"}
	body := map[string]any{
		"application_id": "1309000000000000001", "type": 2, "version": 1, "locale": "en-GB", "token": "fake",
		"data": map[string]any{"id": "1309000000000000501", "name": "ask", "type": 1,
			"options": []any{map[string]any{"name": "text", "type": 3, "value": m.Text}}},
	}
	switch m.ChatType {
	case ChatPrivate:
		body["channel_id"], body["context"], body["user"] = DiscordDM, 1, ada
		body["channel"] = map[string]any{"id": DiscordDM, "type": 1}
	case ChatGroup:
		body["channel_id"], body["guild_id"], body["context"] = "1309000000000000200", "1309000000000000100", 0
		body["channel"] = map[string]any{"id": "1309000000000000200", "guild_id": "1309000000000000100", "type": 0, "name": "general"}
		body["member"] = map[string]any{"user": ada, "roles": []any{}, "permissions": "2248473465835073"}
	default:
		return nil
	}
	return body
}

func (s Signer) line(m Said, seq int64) any {
	ev := map[string]any{
		"type": "message", "mode": "active", "timestamp": m.At.UnixMilli(),
		"message":         map[string]any{"type": "text", "id": strconv.FormatInt(583011000000000000+seq%1_000_000_000, 10), "text": m.Text},
		"webhookEventId":  fmt.Sprintf("01KC%022d", seq),
		"deliveryContext": map[string]any{"isRedelivery": false},
	}
	switch m.ChatType {
	case ChatPrivate:
		ev["source"] = map[string]any{"type": "user", "userId": "Uada00000000000000000000000000042"}
	case ChatGroup:
		ev["source"] = map[string]any{"type": "group", "groupId": "C9e0000000000000000000000000c0de1", "userId": "U9ace0000000000000000000000000043"}
	default:
		return nil
	}
	return map[string]any{"destination": s.Env(line.SettingBotUserID), "events": []any{ev}}
}

func (s Signer) whatsapp(m Said, seq int64) any {
	if m.ChatType != ChatPrivate {
		return nil
	}
	msg := map[string]any{"from": "15551230001", "id": fmt.Sprintf("wamid.CONSOLE%d", seq), "timestamp": strconv.FormatInt(m.At.Unix(), 10),
		"text": map[string]any{"body": m.Text}, "type": "text"}
	value := map[string]any{
		"messaging_product": "whatsapp",
		"metadata":          map[string]any{"display_phone_number": "15550001234", "phone_number_id": s.Env(whatsapp.SettingPhoneNumberID)},
		"contacts":          []any{map[string]any{"profile": map[string]any{"name": "Ada Lovelace"}, "wa_id": "15551230001"}},
		"messages":          []any{msg},
	}
	return map[string]any{"object": "whatsapp_business_account", "entry": []any{map[string]any{"id": "102290129340398",
		"changes": []any{map[string]any{"value": value, "field": "messages"}}}}}
}
