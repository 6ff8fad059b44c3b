package googlechat

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/jwks"
)

// Settings the adapter reads.
const (
	// SettingProjectNumber is the app's Google Cloud project number.
	SettingProjectNumber = "GOOGLECHAT_PROJECT_NUMBER"
	// SettingAudience is the endpoint URL, when the app's authentication
	// audience is "HTTP endpoint URL".
	SettingAudience = "GOOGLECHAT_AUDIENCE"
	// SettingServiceAccount is the service account key (JSON, secret).
	SettingServiceAccount = "GOOGLECHAT_SERVICE_ACCOUNT"
	// SettingChatKeysURL is the Chat service account's key set.
	SettingChatKeysURL = "GOOGLECHAT_CHAT_KEYS_URL"
	// SettingGoogleKeysURL is Google's ID-token key set.
	SettingGoogleKeysURL = "GOOGLECHAT_GOOGLE_KEYS_URL"
	// SettingTokenURL overrides the key's token_uri.
	SettingTokenURL = "GOOGLECHAT_OAUTH_URL"
	// SettingAPIBaseURL is the Chat API's root.
	SettingAPIBaseURL = "GOOGLECHAT_API_BASE_URL"
	// SettingTrustAgentMarkup sends the agent's text as written.
	SettingTrustAgentMarkup = "GOOGLECHAT_TRUST_AGENT_MARKUP"
)

// Adapter is the Google Chat platform for the registry.
var Adapter platform.Adapter = adapter{}

type adapter struct{}

var (
	_ platform.Sender          = (*Client)(nil)
	_ platform.Asker           = (*Client)(nil)
	_ platform.Acknowledger    = (*Client)(nil)
	_ platform.Editor          = (*Client)(nil)
	_ platform.Receiver        = (*Receiver)(nil)
	_ platform.ContextVerifier = (*Receiver)(nil)
)

func (adapter) Platform() message.Platform { return message.GoogleChat }

func (adapter) Settings() []platform.Setting {
	return []platform.Setting{
		{Key: SettingProjectNumber, Half: platform.Both,
			Doc: "the Chat app's Google Cloud project number: the account of every Google Chat thread, and the audience of Chat's tokens when the app's authentication audience is the project number; required by the googlechat function and to send"},
		{Key: SettingAudience, Half: platform.Receive, Kind: platform.KindURL,
			Doc: "the app's HTTP endpoint URL (the `GooglechatUrl` output), when its authentication audience is \"HTTP endpoint URL\": requests then carry Google ID tokens for it; unset, they carry the Chat service account's tokens for the project number"},
		{Key: SettingServiceAccount, Secret: true, Half: platform.Send,
			Doc: "a JSON key of the service account the Chat app sends as (scope `chat.bot`)"},
		{Key: SettingChatKeysURL, Half: platform.Receive, Kind: platform.KindURL, Default: DefaultChatKeysURL,
			Doc: "the Chat service account's public keys, which sign project-number tokens"},
		{Key: SettingGoogleKeysURL, Half: platform.Receive, Kind: platform.KindURL, Default: DefaultGoogleKeysURL,
			Doc: "Google's public keys, which sign ID tokens"},
		{Key: SettingTokenURL, Half: platform.Send, Kind: platform.KindURL,
			Doc: "where the service account's tokens come from, in place of its key's `token_uri`"},
		{Key: SettingAPIBaseURL, Half: platform.Send, Kind: platform.KindURL, Default: DefaultBaseURL,
			Doc: "the Chat API root"},
		{Key: SettingTrustAgentMarkup, Half: platform.Send, Kind: platform.KindBool, Default: "false",
			Doc: "send the agent's text to Google Chat as written, so its `*bold*`, `_italic_`, code and `<users/…>` mentions render; by default their characters are replaced with look-alikes Chat shows as written"},
	}
}

// Capabilities: TextLimit bytes (Chat counts its 32,000 bytes), card
// questions, edits, and idempotent sends: a requestId Chat has seen returns
// the message it created (docs/adr/0017-googlechat.md).
func (adapter) Capabilities() message.Capabilities {
	return message.Capabilities{TextLimit: TextLimit, Counting: message.CountBytes, Idempotent: true, Buttons: true, Edit: true}
}

func (adapter) NewReceiver(env platform.Env) (platform.Receiver, error) {
	project := env(SettingProjectNumber)
	if !projectNumber(project) {
		return nil, errors.New(SettingProjectNumber + " is required: the Chat app's Cloud project number")
	}
	r := &Receiver{ProjectNumber: project, Audience: env(SettingAudience)}
	keys := env(SettingChatKeysURL)
	if keys == "" {
		keys = DefaultChatKeysURL
	}
	if r.Audience != "" {
		if u, err := url.Parse(r.Audience); err != nil || u.Scheme != "https" && u.Scheme != "http" {
			return nil, errors.New(SettingAudience + ": want the app's endpoint URL")
		}
		if keys = env(SettingGoogleKeysURL); keys == "" {
			keys = DefaultGoogleKeysURL
		}
	}
	r.Keys = jwks.New(jwks.Source{KeysURL: keys, HTTP: &http.Client{Timeout: jwks.DefaultFetchTimeout}})
	return r, nil
}

func (adapter) NewSender(env platform.Env, c *http.Client) (platform.Sender, error) {
	key := env(SettingServiceAccount)
	if key == "" {
		return nil, platform.ErrNotConfigured
	}
	project := env(SettingProjectNumber)
	if !projectNumber(project) {
		return nil, errors.New(SettingProjectNumber + " is required with " + SettingServiceAccount + ": the Chat app's Cloud project number")
	}
	trust, err := env.Bool(SettingTrustAgentMarkup, false)
	if err != nil {
		return nil, err
	}
	cl, err := NewClient(project, []byte(key), env(SettingTokenURL), env(SettingAPIBaseURL), c)
	if err != nil {
		return nil, err
	}
	cl.TrustMarkup = trust
	return cl, nil
}

func (adapter) Targets(env platform.Env) platform.Canonicalizer {
	return CanonicalTarget(env(SettingProjectNumber))
}

// CanonicalTarget returns the rules that put a conversation named from
// outside in the form Chat's events name it: the account is the project
// number, the chat a space name ("spaces/…"), the thread a thread's id
// (or its full name "spaces/…/threads/…").
func CanonicalTarget(project string) platform.Canonicalizer {
	return func(t message.Thread, chatless bool) (message.Thread, error) {
		if !projectNumber(project) {
			return message.Thread{}, errors.New("googlechat: set GOOGLECHAT_PROJECT_NUMBER to target Google Chat")
		}
		if t.Account != project {
			return message.Thread{}, errors.New("googlechat: the account must be the project number, GOOGLECHAT_PROJECT_NUMBER")
		}
		if chatless {
			return t, nil
		}
		if !isSpaceName(t.Chat) {
			return message.Thread{}, errors.New("googlechat: the chat is a space name, spaces/…")
		}
		if space, id, ok := splitThreadName(t.Thread); ok {
			if space != t.Chat {
				return message.Thread{}, errors.New("googlechat: the thread is another space's")
			}
			t.Thread = id
		}
		if t.Thread != "" && !isThreadID(t.Thread) {
			return message.Thread{}, errors.New("googlechat: the thread is a thread id")
		}
		return t, nil
	}
}
