package line

import (
	"net/http"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Settings the adapter reads.
const (
	// SettingChannelSecret verifies X-Line-Signature (secret): the channel
	// secret of the Messaging API channel (Basic settings tab).
	SettingChannelSecret = "LINE_CHANNEL_SECRET"
	// SettingChannelAccessToken sends (secret): a long-lived channel access
	// token (Messaging API tab).
	SettingChannelAccessToken = "LINE_CHANNEL_ACCESS_TOKEN"
	// SettingAPIBaseURL is the Messaging API root (the local runner points it
	// at a fake).
	SettingAPIBaseURL = BaseURLEnv
	// SettingBotUserID is the bot's user id: the destination of its
	// webhooks, and the account of every LINE thread the token may reach.
	SettingBotUserID = "LINE_BOT_USER_ID"
)

// Adapter is the LINE platform for the registry.
var Adapter platform.Adapter = adapter{}

type adapter struct{}

var (
	_ platform.Sender       = (*Client)(nil)
	_ platform.Typer        = (*Client)(nil)
	_ platform.Asker        = (*Client)(nil)
	_ platform.Acknowledger = (*Client)(nil)
	_ platform.Replier      = (*Client)(nil)
	_ platform.Downloader   = (*Client)(nil)
)

func (adapter) Platform() message.Platform { return message.LINE }

func (adapter) Settings() []platform.Setting {
	return []platform.Setting{
		{Key: SettingChannelSecret, Secret: true, Half: platform.Receive,
			Doc: "the channel secret (Basic settings): verifies `X-Line-Signature`; required by the line function"},
		{Key: SettingChannelAccessToken, Secret: true, Half: platform.Send,
			Doc: "a long-lived channel access token (Messaging API tab)"},
		{Key: SettingAPIBaseURL, Half: platform.Send, Kind: platform.KindURL, Default: DefaultBaseURL,
			Doc: "the Messaging API root"},
		{Key: SettingDataAPIBaseURL, Half: platform.Send, Kind: platform.KindURL, Default: DefaultDataBaseURL,
			Doc: "the content API root, where the files people send are fetched"},
		{Key: SettingBotUserID, Half: platform.Both,
			Doc: "the bot's user id (`U` and 32 hex digits: the `destination` of its webhooks, `userId` of `GET /v2/bot/info`): the token reaches only its chats, webhooks for another bot are refused; required to target LINE from `/events`"},
	}
}

// Capabilities: 5000 UTF-16 code units (as the Messaging API counts),
// idempotent pushes (X-Line-Retry-Key), the loading animation, questions as
// quick replies (or their numbered text form: a multi-select, many
// options). LINE bots cannot edit a message.
func (adapter) Capabilities() message.Capabilities {
	return message.Capabilities{TextLimit: TextLimit, Counting: message.CountUTF16, Idempotent: true, Typing: true, Buttons: true, TextForm: true}
}

func (adapter) NewReceiver(env platform.Env) (platform.Receiver, error) {
	r := &Receiver{ChannelSecret: env(SettingChannelSecret), BotUserID: env(SettingBotUserID)}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

func (adapter) NewSender(env platform.Env, c *http.Client) (platform.Sender, error) {
	token := env(SettingChannelAccessToken)
	if token == "" {
		return nil, platform.ErrNotConfigured
	}
	bot := env(SettingBotUserID)
	if err := checkBotUserID(bot); err != nil {
		return nil, err
	}
	return &Client{Token: token, BotUserID: bot, BaseURL: env(SettingAPIBaseURL), DataBaseURL: env(SettingDataAPIBaseURL), HTTP: c}, nil
}

func (adapter) Targets(env platform.Env) platform.Canonicalizer {
	return CanonicalTarget(env(SettingBotUserID))
}
