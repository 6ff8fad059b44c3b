package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/googlechat"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/teams"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
)

// pressUsage is how to press a control of a question make run printed.
var pressUsage = "usage: parley-local press " + chatPlatforms() + " CHAT MESSAGE DATA [USER]"

// pressHint is what make run prints under a question's control: the
// command that presses it, ready to paste.
func pressHint(d fakeapi.Delivery, c fakeapi.Control) string {
	switch d.Platform {
	case message.Telegram, message.Slack, message.WhatsApp:
		return fmt.Sprintf("press: go run ./localstack/cmd/parley-local press %s %s %s '%s'", d.Platform, d.Chat, d.MessageID, c.Data)
	case message.Discord:
		return fmt.Sprintf("press: go run ./localstack/cmd/parley-local press discord %s %s '%s'", d.Chat, d.MessageID, fakediscord.PressData(d, c))
	case message.LINE:
		// A quick reply names no message.
		return fmt.Sprintf("press: go run ./localstack/cmd/parley-local press line %s - '%s'", d.Chat, c.Data)
	case message.Teams:
		conv := d.Chat
		if d.Thread != "" {
			conv += ";messageid=" + d.Thread
		}
		data := c.Data
		if v, ok := strings.CutPrefix(c.Data, faketeams.ChoicePrefix); ok {
			// A choice of a choice set: submitted with the card's
			// submit button (the first control that is no choice).
			for _, other := range d.Controls {
				if !strings.HasPrefix(other.Data, faketeams.ChoicePrefix) {
					data = other.Data + "=" + v
					break
				}
			}
		}
		return fmt.Sprintf("press: go run ./localstack/cmd/parley-local press teams '%s' %s '%s'", conv, d.MessageID, data)
	case message.GoogleChat:
		data := c.Data
		if v, ok := strings.CutPrefix(c.Data, fakegooglechat.ChoicePrefix); ok {
			for _, other := range d.Controls {
				if !strings.HasPrefix(other.Data, fakegooglechat.ChoicePrefix) {
					data = other.Data + "=" + v
					break
				}
			}
		}
		chat := d.Chat
		if d.Thread != "" {
			chat += "/threads/" + d.Thread
		}
		return fmt.Sprintf("press: go run ./localstack/cmd/parley-local press googlechat %s %s '%s'", chat, d.MessageID, data)
	}
	return ""
}

var pressSeq atomic.Int64

// press posts, signed as its platform signs it, the webhook a person's press
// of the control carrying data on message (chat's) sends: a Telegram
// callback_query, a Slack block_actions, a Discord component interaction, a
// LINE postback, a WhatsApp button reply. USER is who presses: Ada by
// default, the sample identity of events/README.md.
func press(ctx context.Context, out io.Writer, getenv config.Getenv, args []string) error {
	fs := flags("press", out)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if args = fs.Args(); len(args) < 4 || len(args) > 5 {
		return fmt.Errorf("%s", pressUsage)
	}
	platform, chat, msg, data := args[0], args[1], args[2], args[3]
	now := time.Now()
	seq := now.UnixNano()/1000 + pressSeq.Add(1)
	env := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return demo[k]
	}
	var body []byte
	var hdr http.Header
	switch platform {
	case "telegram":
		c, err1 := strconv.ParseInt(chat, 10, 64)
		m, err2 := strconv.ParseInt(msg, 10, 64)
		user := int64(42)
		if len(args) == 5 {
			var err error
			if user, err = strconv.ParseInt(args[4], 10, 64); err != nil {
				return fmt.Errorf("USER: want a Telegram user id")
			}
		}
		if err1 != nil || err2 != nil {
			return fmt.Errorf("CHAT and MESSAGE: want Telegram's integer ids")
		}
		body = faketelegram.CallbackQuery(seq%1_000_000_000, seq, c, user, m, data)
		hdr = fakeplatform.TelegramHeaders(env(telegram.SettingWebhookSecret))
	case "slack":
		user := "U0ADA00001"
		if len(args) == 5 {
			user = args[4]
		}
		actionTS := fmt.Sprintf("%d.%06d", now.Unix(), seq%1_000_000)
		body = fakeslack.BlockActions(strings.ToUpper(env(slack.SettingTeamID)), chat, user, msg, actionTS, data)
		hdr = fakeplatform.SignSlack(env(slack.SettingSigningSecret), now, body)
	case "discord":
		user := "1309000000000000042"
		if len(args) == 5 {
			user = args[4]
		}
		guild := "1309000000000000100"
		if chat == "1309000000000000300" { // the demo DM
			guild = ""
		}
		body = fakediscord.Press(guild, chat, user, msg, data, now)
		hdr = fakediscord.Sign(fakediscord.TestKey(), now, body)
	case "line":
		user := chat // a 1:1 chat is the person's own id
		if len(args) == 5 {
			user = args[4]
		}
		body = fakeline.Postback(env(line.SettingBotUserID), chat, user, fmt.Sprintf("01KP%022d", seq), "", now, data)
		hdr = fakeline.Headers(env(line.SettingChannelSecret), body)
	case "whatsapp":
		body = fakewhatsapp.Reply{
			WABA: "102290129340398", PhoneNumberID: env(whatsapp.SettingPhoneNumberID), DisplayPhoneNumber: "15550001234",
			From: chat, Name: "Ada Lovelace", ID: fmt.Sprintf("wamid.PRESS%d", seq), Question: msg, Data: data, Title: data, At: now,
		}.Body()
		hdr = fakewhatsapp.Sign(env(whatsapp.SettingAppSecret), body)
	case "teams":
		// DATA is a button's data, or "<submit data>=<value>,…" for a
		// choice set's choices.
		user := faketeams.Ada
		if len(args) == 5 {
			user = args[4]
		}
		submit, values, _ := strings.Cut(data, "=")
		var chosen []string
		if values != "" {
			chosen = strings.Split(values, ",")
		}
		body = faketeams.Submit(fakeTeamsURL(getenv), chat, user, msg, fmt.Sprintf("%d", seq), submit, chosen, now)
		hdr = faketeams.SignFor(faketeams.NewIssuer(), env(teams.SettingAppID), body, now)
	case "googlechat":
		// CHAT is the space, or its thread (spaces/…/threads/…); DATA as
		// for Teams.
		user := fakegooglechat.Ada
		if len(args) == 5 {
			user = args[4]
		}
		_, thread, _ := strings.Cut(chat, "/threads/")
		submit, values, _ := strings.Cut(data, "=")
		var chosen []string
		if values != "" {
			chosen = strings.Split(values, ",")
		}
		body = fakegooglechat.Click(msg, thread, user, submit, chosen, now)
		hdr = fakegooglechat.SignFor(fakegooglechat.NewChatIssuer(), env(googlechat.SettingProjectNumber), now)
	default:
		return fmt.Errorf("%s", pressUsage)
	}
	return send(ctx, out, getenv, platform, hdr, body)
}
