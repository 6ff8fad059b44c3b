package slack

import (
	"net/http"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Settings the adapter reads.
const (
	// SettingSigningSecret verifies requests (secret).
	SettingSigningSecret = "SLACK_SIGNING_SECRET"
	// SettingBotToken is the bot token, xoxb-… with chat:write (secret).
	SettingBotToken = "SLACK_BOT_TOKEN"
	// SettingAPIBaseURL is the Web API root.
	SettingAPIBaseURL = BaseURLEnv
	// SettingReplyInThread answers a top-level channel message in a thread
	// on it.
	SettingReplyInThread = "SLACK_REPLY_IN_THREAD"
	// SettingTeamID is the bot token's workspace: the account of every
	// Slack thread the token may reach.
	SettingTeamID = "SLACK_TEAM_ID"
	// SettingTrustAgentMarkup sends the agent's text as written.
	SettingTrustAgentMarkup = "SLACK_TRUST_AGENT_MARKUP"
	// SettingAssistant is Client.Assistant.
	SettingAssistant = "SLACK_ASSISTANT"
)

// Adapter is the Slack platform for the registry.
var Adapter platform.Adapter = adapter{}

type adapter struct{}

var (
	_ platform.Sender     = (*Client)(nil)
	_ platform.Downloader = (*Client)(nil)
	_ platform.Reconciler = (*Client)(nil)
)

func (adapter) Platform() message.Platform { return message.Slack }

func (adapter) Settings() []platform.Setting {
	return []platform.Setting{
		{Key: SettingSigningSecret, Secret: true, Half: platform.Receive,
			Doc: "verifies requests; required by the slack function"},
		{Key: SettingBotToken, Secret: true, Half: platform.Send, Doc: "`chat:write` bot token (`files:write` too, for the agent's files)"},
		{Key: SettingAPIBaseURL, Half: platform.Send, Kind: platform.KindURL, Default: DefaultBaseURL, Doc: "the Web API root"},
		{Key: SettingReplyInThread, Half: platform.Receive, Kind: platform.KindBool, Default: "true",
			Doc: "answer a top-level channel message in a thread on it; DMs are answered inline"},
		{Key: SettingTeamID, Half: platform.Send,
			Doc: "the bot token's workspace (`team_id` from `auth.test`): the token reaches only its threads; required to target Slack from `/events`"},
		{Key: SettingTrustAgentMarkup, Half: platform.Send, Kind: platform.KindBool, Default: "false",
			Doc: "send the agent's text to Slack as written, so its mentions, links and formatting render; by default `& < >` are escaped, mentions and formatting are off, and nothing the agent writes can ping a channel"},
		{Key: SettingAssistant, Half: platform.Send, Kind: platform.KindBool, Default: "false",
			Doc: "the app is an AI app (Agents & AI Apps on, `assistant:write` scope): in a thread, a streamed reply uses Slack's native stream (`chat.startStream`) and the status line `assistant.threads.setStatus`; otherwise a preview is a message updated with `chat.update`"},
	}
}

// Capabilities: 4000 runes, Block Kit controls for questions (a question's
// text within a section block's 3000), editable messages; no typing
// indicator and no idempotency key (chat.postMessage has none).
func (adapter) Capabilities() message.Capabilities {
	return message.Capabilities{TextLimit: TextLimit, Counting: message.CountRunes, Buttons: true, Edit: true, Reconcile: true, PromptLimit: sectionLimit, Reactions: true}
}

func (adapter) NewReceiver(env platform.Env) (platform.Receiver, error) {
	inThread, err := env.Bool(SettingReplyInThread, true)
	if err != nil {
		return nil, err
	}
	r := &Receiver{SigningSecret: env(SettingSigningSecret), ReplyInChannel: !inThread}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

func (adapter) NewSender(env platform.Env, c *http.Client) (platform.Sender, error) {
	token := env(SettingBotToken)
	if token == "" {
		return nil, platform.ErrNotConfigured
	}
	trust, err := env.Bool(SettingTrustAgentMarkup, false)
	if err != nil {
		return nil, err
	}
	assistant, err := env.Bool(SettingAssistant, false)
	if err != nil {
		return nil, err
	}
	return &Client{Token: token, TeamID: env(SettingTeamID), BaseURL: env(SettingAPIBaseURL), HTTP: c, TrustMarkup: trust, Assistant: assistant}, nil
}

func (adapter) Targets(env platform.Env) platform.Canonicalizer {
	return CanonicalTarget(env(SettingTeamID))
}
