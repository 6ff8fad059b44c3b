package discord

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Settings the adapter reads.
const (
	// SettingPublicKey is the application's public key (hex), which
	// verifies every request. Public, so not a secret; required by the
	// discord function.
	SettingPublicKey = "DISCORD_PUBLIC_KEY"
	// SettingApplicationID is the application's id: the account of every
	// Discord thread, checked on every request and in every webhook path.
	SettingApplicationID = "DISCORD_APPLICATION_ID"
	// SettingBotToken is the bot's token (secret): channel messages and
	// edits.
	SettingBotToken = "DISCORD_BOT_TOKEN"
	// SettingAPIBaseURL is the HTTP API's root (the local runner points it
	// at a fake).
	SettingAPIBaseURL = "DISCORD_API_BASE_URL"
	// SettingCDNBaseURL is where attachments' bytes are fetched (the local
	// runner points it at a fake): the path of a file's CDN URL is taken
	// below it.
	SettingCDNBaseURL = "DISCORD_CDN_BASE_URL"
	// SettingTrustAgentMarkup sends the agent's text as written, so that
	// Discord renders its markdown.
	SettingTrustAgentMarkup = "DISCORD_TRUST_AGENT_MARKUP"
)

// Adapter is the Discord platform for the registry.
var Adapter platform.Adapter = adapter{}

type adapter struct{}

var (
	_ platform.Sender       = (*Client)(nil)
	_ platform.Asker        = (*Client)(nil)
	_ platform.Acknowledger = (*Client)(nil)
	_ platform.Editor       = (*Client)(nil)
	_ platform.PressEditor  = (*Client)(nil)
	_ platform.Downloader   = (*Client)(nil)
	_ platform.Receiver     = (*Receiver)(nil)
)

func (adapter) Platform() message.Platform { return message.Discord }

func (adapter) Settings() []platform.Setting {
	return []platform.Setting{
		{Key: SettingPublicKey, Half: platform.Receive,
			Doc: "the application's Public Key (General Information page, hex), which verifies every request; public, so not a secret; required by the discord function"},
		{Key: SettingApplicationID, Half: platform.Both,
			Doc: "the Application ID: requests of any other application are refused, and it is the account of every Discord thread; required by the discord function and to send"},
		{Key: SettingBotToken, Secret: true, Half: platform.Send,
			Doc: "the bot's token (Bot page): channel messages (after an interaction's 15 minutes, and for `/events`) and edits of Parley's messages"},
		{Key: SettingAPIBaseURL, Half: platform.Send, Kind: platform.KindURL, Default: DefaultBaseURL,
			Doc: "the HTTP API root"},
		{Key: SettingCDNBaseURL, Half: platform.Send, Kind: platform.KindURL, Default: DefaultCDNBaseURL,
			Doc: "where the files people attach are fetched: the path of each file's CDN URL is taken below it"},
		{Key: SettingTrustAgentMarkup, Half: platform.Send, Kind: platform.KindBool, Default: "false",
			Doc: "send the agent's text to Discord as written, so its markdown renders; by default markdown is escaped, and mentions never notify anyone either way"},
	}
}

// Capabilities: 1000 code points of Parley's text (Discord takes 2000 code
// points, and escaping its markdown can double a text: see TextLimit);
// questions with buttons and selects, acknowledged presses, edits. Not
// idempotent: follow-ups have no nonce, and a channel message's nonce
// deduplicates only for a few minutes (docs/adr/0007-discord.md).
func (adapter) Capabilities() message.Capabilities {
	return message.Capabilities{TextLimit: TextLimit, Counting: message.CountRunes, Buttons: true, Edit: true}
}

func (adapter) NewReceiver(env platform.Env) (platform.Receiver, error) {
	return NewReceiver(env(SettingPublicKey), env(SettingApplicationID))
}

func (adapter) NewSender(env platform.Env, c *http.Client) (platform.Sender, error) {
	token := env(SettingBotToken)
	if token == "" {
		return nil, platform.ErrNotConfigured
	}
	app := env(SettingApplicationID)
	if !snowflake(app) {
		return nil, errors.New(SettingApplicationID + " is required with " + SettingBotToken + ": the application's id, a number")
	}
	trust, err := env.Bool(SettingTrustAgentMarkup, false)
	if err != nil {
		return nil, err
	}
	return &Client{Token: token, ApplicationID: app, BaseURL: env(SettingAPIBaseURL), HTTP: c, TrustMarkup: trust, CDNBaseURL: env(SettingCDNBaseURL)}, nil
}

func (adapter) Targets(env platform.Env) platform.Canonicalizer {
	return CanonicalTarget(env(SettingApplicationID))
}

// NewReceiver returns the receiver of the application appID whose public
// key is publicKey (hex, 32 bytes). Both are required: without them the
// function does not start.
func NewReceiver(publicKey, appID string) (*Receiver, error) {
	var errs []error
	key, err := hex.DecodeString(publicKey)
	if err != nil || len(key) != ed25519.PublicKeySize {
		// A public key: safe to show, but its length says enough.
		errs = append(errs, errors.New(SettingPublicKey+" is required: the application's public key, "+
			strconv.Itoa(2*ed25519.PublicKeySize)+" hex digits (got "+strconv.Itoa(len(publicKey))+" characters)"))
	}
	if !snowflake(appID) {
		errs = append(errs, errors.New(SettingApplicationID+" is required: the application's id, a number"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Receiver{PublicKey: ed25519.PublicKey(key), ApplicationID: appID}, nil
}
