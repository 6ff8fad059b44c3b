package fakeplatform

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/googlechat"
	"github.com/parleyhq/parley/shared/platform/line"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/teams"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
)

// Webhook is a request a chat platform sends Parley: its body and headers,
// signed as the platform signs them.
type Webhook struct {
	Platform message.Platform
	Body     []byte
	Header   http.Header
}

// Signer holds what signing a platform's webhooks takes on a local run:
// the runner's settings (its secrets and the demo identities) and where
// the fakes answer (Teams' service URL).
type Signer struct {
	// Env reads a setting (make run's: the user's, else the demo's).
	Env func(string) string
	// FakeRoot is where the fake platforms are served: the runner's base
	// URL and /fake.
	FakeRoot string
}

// Sign signs body, a chat platform's webhook as sent at now, the way the
// platform does: Telegram's secret token header, Slack's v0 signature,
// Discord's Ed25519 (with a fresh interaction id and token the fake
// honours), LINE's and WhatsApp's HMACs, Teams' and Google Chat's issuer
// tokens (from the fakes' test keys: only the demo apps verify). Dated
// samples (Dated) are the caller's.
func (s Signer) Sign(p message.Platform, body []byte, now time.Time) (Webhook, error) {
	return s.sign(p, body, now, true)
}

// sign signs body; stamp gives a Discord interaction a fresh id and token
// (a sample's), which a press built for now has already.
func (s Signer) sign(p message.Platform, body []byte, now time.Time, stamp bool) (Webhook, error) {
	w := Webhook{Platform: p, Body: body}
	switch p {
	case message.Telegram:
		w.Header = TelegramHeaders(s.Env(telegram.SettingWebhookSecret))
	case message.Slack:
		w.Header = SignSlack(s.Env(slack.SettingSigningSecret), now, body)
	case message.Discord:
		// Only the demo application verifies: nobody holds a real
		// application's private key.
		if stamp {
			b, err := fakediscord.Interaction(body, now)
			if err != nil {
				return Webhook{}, err
			}
			w.Body = b
		}
		w.Header = fakediscord.Sign(fakediscord.TestKey(), now, w.Body)
	case message.LINE:
		w.Header = fakeline.Headers(s.Env(line.SettingChannelSecret), body)
	case message.WhatsApp:
		w.Header = fakewhatsapp.Sign(s.Env(whatsapp.SettingAppSecret), body)
	case message.Teams:
		// Answered through the fake connector.
		w.Body = faketeams.WithServiceURL(body, s.FakeRoot+"/teams")
		w.Header = faketeams.SignFor(faketeams.NewIssuer(), s.Env(teams.SettingAppID), w.Body, now)
	case message.GoogleChat:
		w.Header = fakegooglechat.SignFor(fakegooglechat.NewChatIssuer(), s.Env(googlechat.SettingProjectNumber), now)
	default:
		return Webhook{}, fmt.Errorf("cannot sign for %q: want one of the chat platforms", p)
	}
	return w, nil
}

// Pressed names a person's press of a control of a delivered message, as
// Press takes it: the chat (a Teams conversation with its thread, a
// Google Chat space with its thread), the message, and the data its
// platform sends back.
type Pressed struct {
	Platform      message.Platform
	Chat, Message string
	Data          string
	// User presses; empty: the sample person (Ada).
	User string
}

// PressOf is the press of control c of delivery d.
func PressOf(d fakeapi.Delivery, c fakeapi.Control) Pressed {
	p := Pressed{Platform: d.Platform, Chat: d.Chat, Message: d.MessageID, Data: c.Data}
	switch d.Platform {
	case message.Discord:
		p.Data = fakediscord.PressData(d, c)
	case message.LINE:
		p.Message = "-" // a quick reply names no message
	case message.Teams:
		if d.Thread != "" {
			p.Chat += ";messageid=" + d.Thread
		}
		p.Data = submitted(d, c, faketeams.ChoicePrefix)
	case message.GoogleChat:
		if d.Thread != "" {
			p.Chat += "/threads/" + d.Thread
		}
		p.Data = submitted(d, c, fakegooglechat.ChoicePrefix)
	}
	return p
}

// submitted is a card's press of c: a choice of a choice set is submitted
// with the card's submit button (its first control that is no choice), as
// "<submit data>=<value>".
func submitted(d fakeapi.Delivery, c fakeapi.Control, choice string) string {
	v, ok := strings.CutPrefix(c.Data, choice)
	if !ok {
		return c.Data
	}
	for _, other := range d.Controls {
		if !strings.HasPrefix(other.Data, choice) {
			return other.Data + "=" + v
		}
	}
	return c.Data
}

// Press is the webhook a person's press sends, signed: a Telegram
// callback_query, a Slack block_actions, a Discord component interaction,
// a LINE postback, a WhatsApp button reply, a Teams Action.Submit, a Google
// Chat CARD_CLICKED. seq makes its ids unique.
func (s Signer) Press(p Pressed, now time.Time, seq int64) (Webhook, error) {
	var body []byte
	bad := func(what string) (Webhook, error) {
		return Webhook{}, fmt.Errorf("press on %s: %s", p.Platform, what)
	}
	switch p.Platform {
	case message.Telegram:
		c, err1 := strconv.ParseInt(p.Chat, 10, 64)
		m, err2 := strconv.ParseInt(p.Message, 10, 64)
		if err1 != nil || err2 != nil {
			return bad("CHAT and MESSAGE: want Telegram's integer ids")
		}
		user := int64(42)
		if p.User != "" {
			var err error
			if user, err = strconv.ParseInt(p.User, 10, 64); err != nil {
				return bad("USER: want a Telegram user id")
			}
		}
		body = faketelegram.CallbackQuery(seq%1_000_000_000, seq, c, user, m, p.Data)
	case message.Slack:
		user := or(p.User, "U0ADA00001")
		actionTS := fmt.Sprintf("%d.%06d", now.Unix(), seq%1_000_000)
		body = fakeslack.BlockActions(strings.ToUpper(s.Env(slack.SettingTeamID)), p.Chat, user, p.Message, actionTS, p.Data)
	case message.Discord:
		guild := "1309000000000000100"
		if p.Chat == DiscordDM {
			guild = ""
		}
		body = fakediscord.Press(guild, p.Chat, or(p.User, "1309000000000000042"), p.Message, p.Data, now)
	case message.LINE:
		user := or(p.User, p.Chat) // a 1:1 chat is the person's own id
		body = fakeline.Postback(s.Env(line.SettingBotUserID), p.Chat, user, fmt.Sprintf("01KP%022d", seq), "", now, p.Data)
	case message.WhatsApp:
		body = fakewhatsapp.Reply{
			WABA: "102290129340398", PhoneNumberID: s.Env(whatsapp.SettingPhoneNumberID), DisplayPhoneNumber: "15550001234",
			From: p.Chat, Name: "Ada Lovelace", ID: fmt.Sprintf("wamid.PRESS%d", seq), Question: p.Message, Data: p.Data, Title: p.Data, At: now,
		}.Body()
	case message.Teams:
		// Data is a button's, or "<submit data>=<value>,…" for a choice
		// set's choices.
		submit, chosen := splitChoice(p.Data)
		body = faketeams.Submit(s.FakeRoot+"/teams", p.Chat, or(p.User, faketeams.Ada), p.Message, fmt.Sprintf("%d", seq), submit, chosen, now)
	case message.GoogleChat:
		// Chat is the space, or its thread (spaces/…/threads/…).
		_, thread, _ := strings.Cut(p.Chat, "/threads/")
		submit, chosen := splitChoice(p.Data)
		body = fakegooglechat.Click(p.Message, thread, or(p.User, fakegooglechat.Ada), submit, chosen, now)
	default:
		return bad("not a chat platform")
	}
	return s.sign(p.Platform, body, now, false)
}

func splitChoice(data string) (string, []string) {
	submit, values, _ := strings.Cut(data, "=")
	if values == "" {
		return submit, nil
	}
	return submit, strings.Split(values, ",")
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// DiscordDM is the sample direct-message channel of events/discord.
const DiscordDM = "1309000000000000300"
