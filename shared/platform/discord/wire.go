package discord

import (
	"encoding/json"
	"strconv"
	"time"
)

// Discord wire types, with JSON tags verbatim from the interactions
// reference (https://discord.com/developers/docs/interactions/receiving-and-responding),
// the message resource (https://discord.com/developers/docs/resources/message),
// the components reference (https://discord.com/developers/docs/components/reference)
// and application commands
// (https://discord.com/developers/docs/interactions/application-commands).
// Only the fields Parley reads or writes are declared: a field Discord
// changes the type of, and Parley never reads, cannot break a request.

// Interaction types (DiscordInteraction.Type).
const (
	DiscordInteractionPing               = 1
	DiscordInteractionApplicationCommand = 2
	DiscordInteractionMessageComponent   = 3
	DiscordInteractionAutocomplete       = 4
	DiscordInteractionModalSubmit        = 5
)

// Interaction callback types (DiscordInteractionResponse.Type).
const (
	DiscordCallbackPong                     = 1
	DiscordCallbackChannelMessageWithSource = 4
	// DiscordCallbackDeferredChannelMessage shows "… is thinking" until the
	// response is edited (PATCH …/messages/@original).
	DiscordCallbackDeferredChannelMessage = 5
	// DiscordCallbackDeferredUpdateMessage acknowledges a component press
	// without changing its message; @original is the pressed message.
	DiscordCallbackDeferredUpdateMessage = 6
	DiscordCallbackAutocompleteResult    = 8
)

// Application command types (DiscordInteractionData.Type,
// DiscordApplicationCommand.Type).
const (
	DiscordCommandChatInput = 1
	DiscordCommandUser      = 2
	DiscordCommandMessage   = 3
)

// Application command option types Parley reads or registers.
const (
	DiscordOptionString = 3
	// DiscordOptionAttachment is a file option: its value is an
	// attachment's id, resolved in DiscordResolved.Attachments.
	DiscordOptionAttachment = 11
)

// DiscordMessageFlagVoice marks a voice message: its one attachment is a
// voice note recorded in the client (IS_VOICE_MESSAGE).
const DiscordMessageFlagVoice = 1 << 13

// Component types (DiscordComponent.Type, DiscordInteractionData.ComponentType).
const (
	DiscordComponentActionRow    = 1
	DiscordComponentButton       = 2
	DiscordComponentStringSelect = 3
)

// Button styles (DiscordComponent.Style).
const (
	DiscordButtonPrimary   = 1
	DiscordButtonSecondary = 2
	DiscordButtonSuccess   = 3
)

// Channel types (DiscordChannel.Type) Parley tells apart.
const (
	DiscordChannelGuildText = 0
	DiscordChannelDM        = 1
	DiscordChannelGroupDM   = 3
)

// DiscordFlagEphemeral shows a message to the person who interacted
// alone (interaction responses and follow-ups only).
const DiscordFlagEphemeral = 1 << 6

// Command contexts and installation types (DiscordApplicationCommand).
const (
	DiscordContextGuild  = 0
	DiscordContextBotDM  = 1
	DiscordInstallGuild  = 0
	discordEpochMillis   = 1420070400000
	discordSnowflakeBits = 22
)

// DiscordInteraction is the body of every request to the Interactions
// Endpoint URL. Member is set in a guild, User in a DM.
type DiscordInteraction struct {
	ID            string                  `json:"id"`
	ApplicationID string                  `json:"application_id"`
	Type          int                     `json:"type"`
	Data          *DiscordInteractionData `json:"data,omitempty"`
	GuildID       string                  `json:"guild_id,omitempty"`
	Channel       *DiscordChannel         `json:"channel,omitempty"`
	ChannelID     string                  `json:"channel_id,omitempty"`
	Member        *DiscordMember          `json:"member,omitempty"`
	User          *DiscordUser            `json:"user,omitempty"`
	Token         string                  `json:"token"`
	Message       *DiscordMessage         `json:"message,omitempty"`
}

// DiscordInteractionData is an interaction's data: a command's name,
// options and resolved objects, or a component's custom_id and values.
type DiscordInteractionData struct {
	ID       string                     `json:"id,omitempty"`
	Name     string                     `json:"name,omitempty"`
	Type     int                        `json:"type,omitempty"`
	Options  []DiscordInteractionOption `json:"options,omitempty"`
	Resolved *DiscordResolved           `json:"resolved,omitempty"`
	TargetID string                     `json:"target_id,omitempty"`
	CustomID string                     `json:"custom_id,omitempty"`
	// ComponentType is the pressed component's type.
	ComponentType int      `json:"component_type,omitempty"`
	Values        []string `json:"values,omitempty"`
}

// DiscordInteractionOption is one option a command was given. Value's
// JSON type follows Type.
type DiscordInteractionOption struct {
	Name  string          `json:"name"`
	Type  int             `json:"type"`
	Value json.RawMessage `json:"value,omitempty"`
}

// DiscordResolved holds the objects a command names; Messages, by id, for
// a message command's target; Attachments, by id, for file options.
type DiscordResolved struct {
	Messages    map[string]DiscordMessage    `json:"messages,omitempty"`
	Attachments map[string]DiscordAttachment `json:"attachments,omitempty"`
}

// DiscordMessage is a message, as interactions and the API return it.
type DiscordMessage struct {
	ID          string              `json:"id"`
	ChannelID   string              `json:"channel_id,omitempty"`
	Content     string              `json:"content"`
	Author      *DiscordUser        `json:"author,omitempty"`
	Attachments []DiscordAttachment `json:"attachments,omitempty"`
	Flags       int                 `json:"flags,omitempty"`
}

// DiscordAttachment is a file on a message or given to a file option
// (https://discord.com/developers/docs/resources/message#attachment-object).
// URL is on Discord's CDN, signed and expiring (ex, is, hm); DurationSecs
// is a voice message's.
type DiscordAttachment struct {
	ID           string  `json:"id"`
	Filename     string  `json:"filename"`
	ContentType  string  `json:"content_type,omitempty"`
	Size         int64   `json:"size"`
	URL          string  `json:"url"`
	ProxyURL     string  `json:"proxy_url,omitempty"`
	Width        int     `json:"width,omitempty"`
	Height       int     `json:"height,omitempty"`
	DurationSecs float64 `json:"duration_secs,omitempty"`
}

// DiscordUser is a user. GlobalName is their display name; Username their
// unique handle.
type DiscordUser struct {
	ID         string `json:"id"`
	Username   string `json:"username,omitempty"`
	GlobalName string `json:"global_name,omitempty"`
	Bot        bool   `json:"bot,omitempty"`
}

// DiscordMember is a guild member: its user, and its nickname there.
type DiscordMember struct {
	User *DiscordUser `json:"user,omitempty"`
	Nick string       `json:"nick,omitempty"`
}

// DiscordChannel is the channel an interaction happened in.
type DiscordChannel struct {
	ID   string `json:"id"`
	Type int    `json:"type"`
}

// DiscordInteractionResponse is the answer to an interaction, in the
// webhook's HTTP response.
type DiscordInteractionResponse struct {
	Type int `json:"type"`
	Data any `json:"data,omitempty"`
}

// DiscordCallbackMessage is a response message's data: Flags
// DiscordFlagEphemeral shows it to the person who interacted alone.
type DiscordCallbackMessage struct {
	Content string `json:"content"`
	Flags   int    `json:"flags,omitempty"`
}

// DiscordAutocompleteResult is an autocomplete answer's data.
type DiscordAutocompleteResult struct {
	Choices []struct{} `json:"choices"`
}

// DiscordMessageSend is the body of a channel message (POST
// /channels/{id}/messages), a follow-up (POST /webhooks/{app}/{token}) and
// an edit (PATCH …/messages/{id}). Components is always sent, so that an
// edit to text or to a closed prompt removes the controls.
type DiscordMessageSend struct {
	Content          string                   `json:"content"`
	Nonce            string                   `json:"nonce,omitempty"`
	EnforceNonce     bool                     `json:"enforce_nonce,omitempty"`
	AllowedMentions  *DiscordAllowedMentions  `json:"allowed_mentions,omitempty"`
	MessageReference *DiscordMessageReference `json:"message_reference,omitempty"`
	Components       []DiscordComponent       `json:"components"`
	Flags            int                      `json:"flags,omitempty"`
	// Attachments name the files of a multipart message (files[n], n the
	// id).
	Attachments []DiscordAttachmentSend `json:"attachments,omitempty"`
}

// DiscordAttachmentSend is a file of a message being sent: ID is n of its
// files[n] part.
type DiscordAttachmentSend struct {
	ID       int    `json:"id"`
	Filename string `json:"filename"`
}

// DiscordAllowedMentions says whom a message may notify. Parse empty and
// RepliedUser false: nobody, whatever the content names.
type DiscordAllowedMentions struct {
	Parse       []string `json:"parse"`
	RepliedUser bool     `json:"replied_user"`
}

// DiscordMessageReference makes a channel message a reply.
type DiscordMessageReference struct {
	MessageID       string `json:"message_id"`
	FailIfNotExists bool   `json:"fail_if_not_exists"`
}

// DiscordComponent is an action row (holding buttons or one select), a
// button or a string select.
type DiscordComponent struct {
	Type        int                   `json:"type"`
	Components  []DiscordComponent    `json:"components,omitempty"`
	Style       int                   `json:"style,omitempty"`
	Label       string                `json:"label,omitempty"`
	CustomID    string                `json:"custom_id,omitempty"`
	Options     []DiscordSelectOption `json:"options,omitempty"`
	MinValues   *int                  `json:"min_values,omitempty"`
	MaxValues   *int                  `json:"max_values,omitempty"`
	Placeholder string                `json:"placeholder,omitempty"`
}

// DiscordSelectOption is one option of a string select.
type DiscordSelectOption struct {
	Label   string `json:"label"`
	Value   string `json:"value"`
	Default bool   `json:"default,omitempty"`
}

// DiscordError is the API's error body: a JSON code and message, and for
// a 429 the wait in seconds (a float) and whether the limit is global.
type DiscordError struct {
	Code       int     `json:"code"`
	Message    string  `json:"message"`
	RetryAfter float64 `json:"retry_after,omitempty"`
	Global     bool    `json:"global,omitempty"`
}

// DiscordApplicationCommand is a command as Parley registers it (PUT
// /applications/{app}/commands).
type DiscordApplicationCommand struct {
	ID               string                            `json:"id,omitempty"`
	Type             int                               `json:"type"`
	Name             string                            `json:"name"`
	Description      string                            `json:"description"`
	Options          []DiscordApplicationCommandOption `json:"options,omitempty"`
	Contexts         []int                             `json:"contexts,omitempty"`
	IntegrationTypes []int                             `json:"integration_types,omitempty"`
}

// DiscordApplicationCommandOption is an option of a registered command.
type DiscordApplicationCommandOption struct {
	Type        int    `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required,omitempty"`
}

// SnowflakeTime is when a Discord id was made: its top 42 bits are
// milliseconds since 2015-01-01 (Discord's epoch). ok is false for what is
// not a snowflake: not a decimal uint64, or 0.
func SnowflakeTime(id string) (t time.Time, ok bool) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || n == 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(n>>discordSnowflakeBits) + discordEpochMillis).UTC(), true
}
