package teams

import (
	"errors"
	"net/http"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/jwks"
)

// Settings the adapter reads.
const (
	// SettingAppID is the bot's Microsoft App ID (the Azure Bot
	// resource's): the audience of the connector's tokens, the client id
	// of the bot's own, the account of every Teams thread.
	SettingAppID = "TEAMS_APP_ID"
	// SettingAppPassword is the app's client secret (secret).
	SettingAppPassword = "TEAMS_APP_PASSWORD"
	// SettingTenantID is the Entra tenant the single-tenant app lives in.
	SettingTenantID = "TEAMS_TENANT_ID"
	// SettingOpenIDMetadataURL is the Bot Framework's OpenID metadata
	// (the local runner points it at a fake issuer).
	SettingOpenIDMetadataURL = "TEAMS_OPENID_METADATA_URL"
	// SettingLoginURL is Microsoft Entra's root, where tokens come from.
	SettingLoginURL = "TEAMS_LOGIN_URL"
	// SettingServiceURL is the connector root for sends no activity named
	// one for.
	SettingServiceURL = "TEAMS_SERVICE_URL"
	// SettingTrustAgentMarkup sends the agent's text as markdown.
	SettingTrustAgentMarkup = "TEAMS_TRUST_AGENT_MARKUP"
)

// Adapter is the Microsoft Teams platform for the registry.
var Adapter platform.Adapter = adapter{}

type adapter struct{}

var (
	_ platform.Sender          = (*Client)(nil)
	_ platform.Typer           = (*Client)(nil)
	_ platform.Asker           = (*Client)(nil)
	_ platform.Acknowledger    = (*Client)(nil)
	_ platform.Editor          = (*Client)(nil)
	_ platform.Receiver        = (*Receiver)(nil)
	_ platform.ContextVerifier = (*Receiver)(nil)
)

func (adapter) Platform() message.Platform { return message.Teams }

func (adapter) Settings() []platform.Setting {
	return []platform.Setting{
		{Key: SettingAppID, Half: platform.Both,
			Doc: "the bot's Microsoft App ID (the Azure Bot resource's Configuration page): the audience every connector token must name, and the account of every Teams thread; required by the teams function and to send"},
		{Key: SettingAppPassword, Secret: true, Half: platform.Send,
			Doc: "a client secret of the bot's app registration (Certificates & secrets), with which Parley gets its app token from Microsoft Entra"},
		{Key: SettingTenantID, Half: platform.Both,
			Doc: "the Entra tenant (directory) id of the single-tenant app: where its token comes from; the teams function refuses activities of any other tenant; required to send"},
		{Key: SettingOpenIDMetadataURL, Half: platform.Receive, Kind: platform.KindURL, Default: DefaultOpenIDMetadataURL,
			Doc: "the Bot Framework's OpenID metadata, whose keys sign the connector's tokens"},
		{Key: SettingLoginURL, Half: platform.Send, Kind: platform.KindURL, Default: DefaultLoginURL,
			Doc: "Microsoft Entra's root, where the app token comes from (`<root>/<tenant>/oauth2/v2.0/token`)"},
		{Key: SettingServiceURL, Half: platform.Send, Kind: platform.KindURL, Default: DefaultServiceURL,
			Doc: "the Bot Connector root for sends no inbound activity named one for (`/events`, `/send`, edits); replies go through the activity's own serviceUrl"},
		{Key: SettingTrustAgentMarkup, Half: platform.Send, Kind: platform.KindBool, Default: "false",
			Doc: "send the agent's text with textFormat markdown, so Teams renders it; by default it goes as plain text, and nobody is mentioned either way"},
	}
}

// Capabilities: TextLimit UTF-16 units (Teams counts its 40 KB as UTF-16),
// typing, Adaptive Card questions, edits. Not idempotent: the connector
// has no idempotency key (docs/adr/0016-teams.md).
func (adapter) Capabilities() message.Capabilities {
	return message.Capabilities{TextLimit: TextLimit, Counting: message.CountUTF16, Typing: true, Buttons: true, Edit: true}
}

func (adapter) NewReceiver(env platform.Env) (platform.Receiver, error) {
	app := env(SettingAppID)
	if !guid(app) {
		return nil, errors.New(SettingAppID + " is required: the bot's Microsoft App ID, a GUID")
	}
	meta := env(SettingOpenIDMetadataURL)
	if meta == "" {
		meta = DefaultOpenIDMetadataURL
	}
	return &Receiver{
		AppID:    app,
		TenantID: env(SettingTenantID),
		Keys:     jwks.New(jwks.Source{MetadataURL: meta, HTTP: &http.Client{Timeout: jwks.DefaultFetchTimeout}}),
	}, nil
}

func (adapter) NewSender(env platform.Env, c *http.Client) (platform.Sender, error) {
	secret := env(SettingAppPassword)
	if secret == "" {
		return nil, platform.ErrNotConfigured
	}
	app, tenant := env(SettingAppID), env(SettingTenantID)
	var errs []error
	if !guid(app) {
		errs = append(errs, errors.New(SettingAppID+" is required with "+SettingAppPassword+": the bot's Microsoft App ID, a GUID"))
	}
	if tenant == "" || strings.ContainsAny(tenant, "/?#") {
		errs = append(errs, errors.New(SettingTenantID+" is required with "+SettingAppPassword+": the single-tenant app's tenant id"))
	}
	trust, err := env.Bool(SettingTrustAgentMarkup, false)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	login := env(SettingLoginURL)
	if login == "" {
		login = DefaultLoginURL
	}
	cl := NewClient(app, secret, TokenURL(login, tenant), env(SettingServiceURL), c)
	cl.TrustMarkup = trust
	return cl, nil
}

func (adapter) Targets(env platform.Env) platform.Canonicalizer {
	return CanonicalTarget(env(SettingAppID))
}

// convPrefix reports whether s is the kind a Teams conversation id starts
// with, before its ":" ("a" personal, "19" group chats and channels).
func convPrefix(s string) bool {
	switch s {
	case "a", "8", "19", "29":
		return true
	}
	return false
}

// guid reports whether s is a GUID as Azure writes app ids.
func guid(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// CanonicalTarget returns the rules that put a conversation named from
// outside in the form Teams' activities name it: the account is the bot's
// app id (as configured; a GUID of any case), the chat a conversation id
// (written whole: "teams:<app>:19:…@thread.v2" arrives split at its colon
// and is joined again), and a channel thread its channel's id with
// ";messageid=<root>".
func CanonicalTarget(appID string) platform.Canonicalizer {
	return func(t message.Thread, chatless bool) (message.Thread, error) {
		if !guid(appID) {
			return message.Thread{}, errors.New("teams: set TEAMS_APP_ID, the bot's app id, to target Teams")
		}
		if !strings.EqualFold(t.Account, appID) {
			return message.Thread{}, errors.New("teams: the account must be the bot's app id, TEAMS_APP_ID")
		}
		t.Account = appID
		if chatless {
			return t, nil
		}
		if convPrefix(t.Chat) && t.Thread != "" {
			// A target is split at every ":" (platform:account:chat
			// [:thread]), and a conversation id holds one after its kind
			// ("a:…", "19:…"): written whole, it arrives in two parts.
			t.Chat, t.Thread = t.Chat+":"+t.Thread, ""
		}
		if chat, thread := SplitConversation(t.Chat); thread != "" {
			if t.Thread != "" {
				return message.Thread{}, errors.New("teams: a channel thread is named once, as its thread or in its conversation id")
			}
			t.Chat, t.Thread = chat, thread
		}
		if t.Chat == "" || strings.ContainsAny(t.Chat, "/?#; ") || strings.ContainsAny(t.Thread, "/?#; ") {
			return message.Thread{}, errors.New("teams: the chat is a conversation id")
		}
		return t, nil
	}
}
