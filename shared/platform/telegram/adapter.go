package telegram

import (
	"net/http"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Settings the adapter reads.
const (
	// SettingBotToken is the bot token from @BotFather (secret). Both halves
	// read it: its numeric prefix is the bot id that scopes update ids and
	// thread keys.
	SettingBotToken = "TELEGRAM_BOT_TOKEN"
	// SettingWebhookSecret is the secret_token given to setWebhook (secret).
	SettingWebhookSecret = "TELEGRAM_WEBHOOK_SECRET"
	// SettingAPIBaseURL is the Bot API root (the local runner points it at
	// a fake).
	SettingAPIBaseURL = BaseURLEnv
)

// Adapter is the Telegram platform for the registry.
var Adapter platform.Adapter = adapter{}

type adapter struct{}

var (
	_ platform.Sender     = (*Client)(nil)
	_ platform.Typer      = (*Client)(nil)
	_ platform.Downloader = (*Client)(nil)
)

func (adapter) Platform() message.Platform { return message.Telegram }

func (adapter) Settings() []platform.Setting {
	return []platform.Setting{
		{Key: SettingBotToken, Secret: true, Half: platform.Both,
			Doc: "the bot token from @BotFather; its numeric prefix is the bot id that scopes update ids"},
		{Key: SettingWebhookSecret, Secret: true, Half: platform.Receive,
			Doc: "the `secret_token` given to `setWebhook`; required by the telegram function"},
		{Key: SettingAPIBaseURL, Half: platform.Send, Kind: platform.KindURL, Default: DefaultBaseURL,
			Doc: "the Bot API root"},
	}
}

// Capabilities: 4096 UTF-16 code units, a typing indicator, inline
// keyboards for questions, editable messages, no idempotency key (a resent
// message after an unknown outcome may appear twice).
func (adapter) Capabilities() message.Capabilities {
	return message.Capabilities{TextLimit: TextLimit, Counting: message.CountUTF16, Typing: true, Buttons: true, Edit: true, Reactions: true}
}

func (adapter) NewReceiver(env platform.Env) (platform.Receiver, error) {
	return NewReceiver(env(SettingWebhookSecret), env(SettingBotToken))
}

func (adapter) NewSender(env platform.Env, c *http.Client) (platform.Sender, error) {
	token := env(SettingBotToken)
	if token == "" {
		return nil, platform.ErrNotConfigured
	}
	id, err := BotIDFromToken(token)
	if err != nil {
		return nil, err
	}
	return &Client{Token: token, BotID: id, BaseURL: env(SettingAPIBaseURL), HTTP: c}, nil
}

func (adapter) Targets(platform.Env) platform.Canonicalizer { return CanonicalTarget }
