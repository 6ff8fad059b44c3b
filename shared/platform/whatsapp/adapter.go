package whatsapp

import (
	"errors"
	"net/http"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Settings the adapter reads.
const (
	// SettingAppSecret is the Meta app's App Secret, the key of
	// X-Hub-Signature-256 (secret).
	SettingAppSecret = "WHATSAPP_APP_SECRET"
	// SettingVerifyToken is the webhook's Verify token, which Meta's
	// verification GET repeats (secret).
	SettingVerifyToken = "WHATSAPP_VERIFY_TOKEN"
	// SettingAccessToken is a system user's access token (secret).
	SettingAccessToken = "WHATSAPP_ACCESS_TOKEN"
	// SettingAPIBaseURL is the Graph API root, with its version.
	SettingAPIBaseURL = BaseURLEnv
	// SettingPhoneNumberID is the business phone number's id: the account of
	// every WhatsApp thread Parley answers and sends to.
	SettingPhoneNumberID = "WHATSAPP_PHONE_NUMBER_ID"
	// SettingTrustAgentMarkup sends the agent's text as written.
	SettingTrustAgentMarkup = "WHATSAPP_TRUST_AGENT_MARKUP"
	// SettingWindowTemplate is the template sent outside the 24-hour
	// window (JSON: name, language, body parameters).
	SettingWindowTemplate = "WHATSAPP_WINDOW_TEMPLATE"
)

// Adapter is the WhatsApp platform for the registry.
var Adapter platform.Adapter = adapter{}

type adapter struct{}

func (adapter) Platform() message.Platform { return message.WhatsApp }

func (adapter) Settings() []platform.Setting {
	return []platform.Setting{
		{Key: SettingAppSecret, Secret: true, Half: platform.Receive,
			Doc: "the Meta app's App Secret (App settings → Basic): verifies `X-Hub-Signature-256`; required by the whatsapp function"},
		{Key: SettingVerifyToken, Secret: true, Half: platform.Receive,
			Doc: "the Verify token you type into the app's webhook configuration; the whatsapp function answers Meta's verification request with it; required by the whatsapp function"},
		{Key: SettingAccessToken, Secret: true, Half: platform.Send,
			Doc: "a system user's permanent access token with `whatsapp_business_messaging`"},
		{Key: SettingAPIBaseURL, Half: platform.Send, Kind: platform.KindURL, Default: DefaultBaseURL,
			Doc: "the Graph API root, with its version"},
		{Key: SettingPhoneNumberID, Half: platform.Both,
			Doc: "the business phone number's id (WhatsApp → API Setup), the only number Parley sends from and answers for: required with `WHATSAPP_ACCESS_TOKEN`; webhooks of other numbers are ignored"},
		{Key: SettingWindowTemplate, Half: platform.Send,
			Doc: "the approved template a bubble goes as outside the person's 24-hour customer-service window, as JSON: `{\"name\":\"…\",\"language\":\"en_US\",\"body\":[\"{text}\"]}` (each body parameter is written as given, with `{text}` replaced by the bubble's text on one line); unset, such a bubble fails `window_closed` without a call"},
		{Key: SettingTrustAgentMarkup, Half: platform.Send, Kind: platform.KindBool, Default: "false",
			Doc: "send the agent's text to WhatsApp as written, so its `*bold*`, `_italic_`, `~strike~`, code and `>` quotes render; by default their markers are replaced with look-alike characters that WhatsApp shows as written"},
	}
}

// Capabilities: 4096 characters counted in UTF-16 units, reply buttons and
// lists (Asker, Acknowledger), or the numbered text form where they cannot
// hold a question, delivery statuses; no typing indicator (it
// needs the id of the message being answered), no edits, no idempotency
// key, no look-up of a sent message.
func (adapter) Capabilities() message.Capabilities {
	return message.Capabilities{TextLimit: TextLimit, Counting: message.CountUTF16, Buttons: true, TextForm: true, Statuses: true, Window: Window, Reactions: true}
}

func (adapter) NewReceiver(env platform.Env) (platform.Receiver, error) {
	return NewReceiver(env(SettingAppSecret), env(SettingVerifyToken), env(SettingPhoneNumberID))
}

// NewSender requires WHATSAPP_PHONE_NUMBER_ID with the access token: a
// system user's token reaches every number of the businesses it is assigned
// to, and Graph takes the sending number from the URL, so without it a
// thread named from outside (an events target) could send from any of them.
func (adapter) NewSender(env platform.Env, c *http.Client) (platform.Sender, error) {
	token := env(SettingAccessToken)
	if token == "" {
		return nil, platform.ErrNotConfigured
	}
	phone := env(SettingPhoneNumberID)
	if !digits(phone) {
		return nil, errors.New("whatsapp: " + SettingPhoneNumberID + " (the business phone number's numeric id) is required with " + SettingAccessToken)
	}
	trust, err := env.Bool(SettingTrustAgentMarkup, false)
	if err != nil {
		return nil, err
	}
	tpl, err := ParseTemplate(env(SettingWindowTemplate))
	if err != nil {
		return nil, err
	}
	return &Client{Token: token, PhoneNumberID: phone, BaseURL: env(SettingAPIBaseURL), HTTP: c, TrustMarkup: trust, WindowTemplate: tpl}, nil
}

func (adapter) Targets(env platform.Env) platform.Canonicalizer {
	return CanonicalTarget(env(SettingPhoneNumberID))
}
