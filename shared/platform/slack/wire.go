package slack

import "encoding/json"

// Slack wire types, with JSON tags verbatim from the Events API
// (https://docs.slack.dev/apis/events-api/), interactivity payloads
// (https://docs.slack.dev/reference/interaction-payloads/block_actions-payload)
// and the Web API's chat.postMessage
// (https://docs.slack.dev/reference/methods/chat.postmessage). Only the
// fields Parley reads or writes are declared.

// Envelope types (SlackEnvelope.Type).
const (
	SlackTypeURLVerification = "url_verification"
	SlackTypeEventCallback   = "event_callback"
	SlackTypeAppRateLimited  = "app_rate_limited"
)

// SlackEnvelope is the outer body of every Events API request. Event is kept
// raw: its shape depends on its own type field.
type SlackEnvelope struct {
	Token              string               `json:"token,omitempty"`
	Challenge          string               `json:"challenge,omitempty"`
	TeamID             string               `json:"team_id,omitempty"`
	APIAppID           string               `json:"api_app_id,omitempty"`
	Event              json.RawMessage      `json:"event,omitempty"`
	Type               string               `json:"type"`
	EventID            string               `json:"event_id,omitempty"`
	EventTime          int64                `json:"event_time,omitempty"`
	Authorizations     []SlackAuthorization `json:"authorizations,omitempty"`
	IsExtSharedChannel bool                 `json:"is_ext_shared_channel,omitempty"`
	EventContext       string               `json:"event_context,omitempty"`
}

// SlackAuthorization is an installation the event is visible to. For a bot
// install, UserID is the app's bot user.
type SlackAuthorization struct {
	EnterpriseID        string `json:"enterprise_id,omitempty"`
	TeamID              string `json:"team_id"`
	UserID              string `json:"user_id"`
	IsBot               bool   `json:"is_bot"`
	IsEnterpriseInstall bool   `json:"is_enterprise_install"`
}

// Inner event types (SlackMessageEvent.Type).
const (
	SlackEventMessage         = "message"
	SlackEventAppMention      = "app_mention"
	SlackEventReactionAdded   = "reaction_added"
	SlackEventReactionRemoved = "reaction_removed"
)

// SlackReactionEvent is a reaction_added or reaction_removed event
// (scope reactions:read). Reaction is the emoji's name, without colons,
// with a "::skin-tone-N" suffix when one was chosen.
type SlackReactionEvent struct {
	Type     string            `json:"type"`
	User     string            `json:"user"`
	Reaction string            `json:"reaction"`
	ItemUser string            `json:"item_user,omitempty"`
	Item     SlackReactionItem `json:"item"`
	EventTS  string            `json:"event_ts"`
}

// SlackReactionItem is what a reaction is on: a message (a channel and its
// ts), or a file.
type SlackReactionItem struct {
	Type    string `json:"type"`
	Channel string `json:"channel,omitempty"`
	TS      string `json:"ts,omitempty"`
}

// Message subtypes (SlackMessageEvent.Subtype) Parley tells apart.
const (
	SlackSubtypeBotMessage      = "bot_message"
	SlackSubtypeMessageChanged  = "message_changed"
	SlackSubtypeMessageDeleted  = "message_deleted"
	SlackSubtypeThreadBroadcast = "thread_broadcast"
	SlackSubtypeFileShare       = "file_share"
)

// Channel types (SlackMessageEvent.ChannelType).
const (
	SlackChannelIM      = "im"
	SlackChannelMPIM    = "mpim"
	SlackChannelPublic  = "channel"
	SlackChannelPrivate = "group"
)

// SlackMessageEvent is a "message" or "app_mention" event. app_mention has
// no channel_type.
type SlackMessageEvent struct {
	Type            string             `json:"type"`
	Subtype         string             `json:"subtype,omitempty"`
	Hidden          bool               `json:"hidden,omitempty"`
	Channel         string             `json:"channel"`
	ChannelType     string             `json:"channel_type,omitempty"`
	User            string             `json:"user,omitempty"`
	BotID           string             `json:"bot_id,omitempty"`
	AppID           string             `json:"app_id,omitempty"`
	Team            string             `json:"team,omitempty"`
	Text            string             `json:"text"`
	TS              string             `json:"ts"`
	ThreadTS        string             `json:"thread_ts,omitempty"`
	ParentUserID    string             `json:"parent_user_id,omitempty"`
	EventTS         string             `json:"event_ts,omitempty"`
	ClientMsgID     string             `json:"client_msg_id,omitempty"`
	Message         *SlackMessageEvent `json:"message,omitempty"`
	PreviousMessage *SlackMessageEvent `json:"previous_message,omitempty"`
	DeletedTS       string             `json:"deleted_ts,omitempty"`
	Metadata        *SlackMetadata     `json:"metadata,omitempty"`
	Files           []SlackFile        `json:"files,omitempty"`
}

// SlackFile is a file shared in a message (the fields Parley reads), as an
// event carries it and files.info answers it.
type SlackFile struct {
	ID                 string `json:"id"`
	Name               string `json:"name,omitempty"`
	Mimetype           string `json:"mimetype,omitempty"`
	Subtype            string `json:"subtype,omitempty"` // slack_audio: a voice clip
	Mode               string `json:"mode,omitempty"`    // hosted, external, tombstone, …
	Size               int64  `json:"size,omitempty"`
	OriginalW          int    `json:"original_w,omitempty"`
	OriginalH          int    `json:"original_h,omitempty"`
	DurationMS         int    `json:"duration_ms,omitempty"`
	URLPrivateDownload string `json:"url_private_download,omitempty"`
}

// SlackFileInfo is files.info's answer.
type SlackFileInfo struct {
	OK    bool      `json:"ok"`
	Error string    `json:"error,omitempty"`
	File  SlackFile `json:"file"`
}

// SlackReactionRequest is the body of reactions.add and reactions.remove.
type SlackReactionRequest struct {
	Channel   string `json:"channel"`
	Timestamp string `json:"timestamp"`
	Name      string `json:"name"`
}

// MetadataEventType is the event_type of the metadata Parley attaches to
// every message it posts: the unit's key (for reconciling an unknown send)
// and its origin (for dropping an echo of Parley's own output by tag).
const MetadataEventType = "parley_unit"

// SlackMetadata is a message's metadata, as posted and as delivered.
type SlackMetadata struct {
	EventType    string               `json:"event_type"`
	EventPayload SlackMetadataPayload `json:"event_payload"`
}

// SlackMetadataPayload is Parley's event_payload.
type SlackMetadataPayload struct {
	Unit   string `json:"unit,omitempty"`
	Origin string `json:"origin,omitempty"`
}

// InteractionPayloadField is the form field of an interactivity request
// that holds its JSON payload.
const InteractionPayloadField = "payload"

// Interactivity payload types (SlackInteraction.Type) Parley tells apart.
const (
	SlackInteractionBlockActions = "block_actions"
)

// Container types (SlackContainer.Type).
const (
	SlackContainerMessage = "message"
	SlackContainerView    = "view"
)

// SlackInteraction is the payload of an interactivity request: a press of a
// Block Kit control (block_actions), a shortcut, a modal's submission ….
// Only block_actions on a message is read.
type SlackInteraction struct {
	Type        string             `json:"type"`
	Team        *SlackTeam         `json:"team,omitempty"`
	User        *SlackUser         `json:"user,omitempty"`
	APIAppID    string             `json:"api_app_id,omitempty"`
	Container   *SlackContainer    `json:"container,omitempty"`
	ActionTS    string             `json:"action_ts,omitempty"`
	TriggerID   string             `json:"trigger_id,omitempty"`
	Channel     *SlackChannel      `json:"channel,omitempty"`
	Message     *SlackMessageEvent `json:"message,omitempty"`
	ResponseURL string             `json:"response_url,omitempty"`
	Actions     []SlackAction      `json:"actions,omitempty"`
}

// SlackTeam is a workspace.
type SlackTeam struct {
	ID     string `json:"id"`
	Domain string `json:"domain,omitempty"`
}

// SlackUser is who interacted.
type SlackUser struct {
	ID       string `json:"id"`
	Username string `json:"username,omitempty"`
	Name     string `json:"name,omitempty"`
	TeamID   string `json:"team_id,omitempty"`
}

// SlackChannel is the conversation of an interaction.
type SlackChannel struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// SlackContainer is where the pressed control is: for a message, its
// channel, its ts and the thread it is in.
type SlackContainer struct {
	Type        string `json:"type"`
	MessageTS   string `json:"message_ts,omitempty"`
	ChannelID   string `json:"channel_id,omitempty"`
	ThreadTS    string `json:"thread_ts,omitempty"`
	IsEphemeral bool   `json:"is_ephemeral,omitempty"`
}

// SlackAction is one control's action: a button's Value, a select's
// SelectedOption.
type SlackAction struct {
	Type           string       `json:"type"`
	ActionID       string       `json:"action_id"`
	BlockID        string       `json:"block_id,omitempty"`
	Value          string       `json:"value,omitempty"`
	SelectedOption *SlackOption `json:"selected_option,omitempty"`
	// SelectedOptions are what checkboxes or a multi-select hold now.
	SelectedOptions []SlackOption `json:"selected_options,omitempty"`
	ActionTS        string        `json:"action_ts"`
}

// SlackOption is a select's or checkboxes' option.
type SlackOption struct {
	Text  *SlackText `json:"text,omitempty"`
	Value string     `json:"value"`
}

// SlackText is a Block Kit text object. Parley writes plain_text only:
// Slack parses no mention or markup in it.
type SlackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// SlackBlock is a Block Kit block Parley sends: a section of text, or an
// actions block of controls.
type SlackBlock struct {
	Type     string         `json:"type"`
	BlockID  string         `json:"block_id,omitempty"`
	Text     *SlackText     `json:"text,omitempty"`
	Elements []SlackElement `json:"elements,omitempty"`
}

// SlackElement is a control of an actions block: a button, a static
// select, checkboxes, or a multi-select.
type SlackElement struct {
	Type           string        `json:"type"`
	ActionID       string        `json:"action_id"`
	Text           *SlackText    `json:"text,omitempty"`
	Value          string        `json:"value,omitempty"`
	Placeholder    *SlackText    `json:"placeholder,omitempty"`
	Options        []SlackOption `json:"options,omitempty"`
	InitialOptions []SlackOption `json:"initial_options,omitempty"`
}

// SlackUpdate is the body of chat.update.
type SlackUpdate struct {
	Channel   string       `json:"channel"`
	TS        string       `json:"ts"`
	Text      string       `json:"text"`
	Blocks    []SlackBlock `json:"blocks"`
	LinkNames *bool        `json:"link_names,omitempty"`
}

// SlackDelete is the body of chat.delete.
type SlackDelete struct {
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// SlackPostEphemeral is the body of chat.postEphemeral: a message only
// User sees.
type SlackPostEphemeral struct {
	Channel   string `json:"channel"`
	User      string `json:"user"`
	Text      string `json:"text"`
	ThreadTS  string `json:"thread_ts,omitempty"`
	LinkNames *bool  `json:"link_names,omitempty"`
}

// SlackPostMessage is the body of chat.postMessage.
type SlackPostMessage struct {
	Channel   string `json:"channel"`
	Text      string `json:"text"`
	ThreadTS  string `json:"thread_ts,omitempty"`
	LinkNames *bool  `json:"link_names,omitempty"`
	// Mrkdwn false shows *bold*, _italic_ and `code` as typed.
	Mrkdwn   *bool          `json:"mrkdwn,omitempty"`
	Blocks   []SlackBlock   `json:"blocks,omitempty"`
	Metadata *SlackMetadata `json:"metadata,omitempty"`
}

// SlackPostMessageResponse is chat.postMessage's answer: TS of the new
// message when OK, else Error, Slack's machine-readable error code.
type SlackPostMessageResponse struct {
	OK      bool   `json:"ok"`
	Error   string `json:"error,omitempty"`
	Warning string `json:"warning,omitempty"`
	Channel string `json:"channel,omitempty"`
	TS      string `json:"ts,omitempty"`
}

// SlackStartStream is the body of chat.startStream: a streaming message in
// Channel, replying in ThreadTS, its first MarkdownText (at most 12,000
// characters). A stream in a channel (not a DM) names the person it is for.
type SlackStartStream struct {
	Channel         string `json:"channel"`
	ThreadTS        string `json:"thread_ts,omitempty"`
	MarkdownText    string `json:"markdown_text,omitempty"`
	RecipientUserID string `json:"recipient_user_id,omitempty"`
	RecipientTeamID string `json:"recipient_team_id,omitempty"`
}

// SlackAppendStream is the body of chat.appendStream: MarkdownText appended
// to the streaming message TS.
type SlackAppendStream struct {
	Channel      string `json:"channel"`
	TS           string `json:"ts"`
	MarkdownText string `json:"markdown_text"`
}

// SlackStopStream is the body of chat.stopStream: the streaming message TS
// becomes an ordinary message.
type SlackStopStream struct {
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// SlackSetStatus is the body of assistant.threads.setStatus: Status shown
// in the assistant thread ThreadTS of ChannelID; "" clears it.
type SlackSetStatus struct {
	ChannelID string `json:"channel_id"`
	ThreadTS  string `json:"thread_ts"`
	Status    string `json:"status"`
}

// SlackUploadURL is files.getUploadURLExternal's answer: where the file's
// bytes go (UploadURL, on files.slack.com) and the file's id.
type SlackUploadURL struct {
	OK        bool   `json:"ok"`
	Error     string `json:"error,omitempty"`
	UploadURL string `json:"upload_url"`
	FileID    string `json:"file_id"`
}

// SlackCompleteFile is a file of files.completeUploadExternal's files
// argument (a JSON array): its id, and its title as shown.
type SlackCompleteFile struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
}

// SlackCompleteUpload is files.completeUploadExternal's answer: the files
// shared, each with where it was shared when Slack says so already.
type SlackCompleteUpload struct {
	OK    bool              `json:"ok"`
	Error string            `json:"error,omitempty"`
	Files []SlackSharedFile `json:"files"`
}

// SlackSharedFile is a file in files.completeUploadExternal's answer.
// Shares may still be empty: Slack shares a file as its processing ends.
type SlackSharedFile struct {
	ID     string          `json:"id"`
	Title  string          `json:"title,omitempty"`
	Shares SlackFileShares `json:"shares"`
}

// SlackFileShares are the messages a file was shared in, by channel: in
// public channels, and in private channels and DMs.
type SlackFileShares struct {
	Public  map[string][]SlackShare `json:"public,omitempty"`
	Private map[string][]SlackShare `json:"private,omitempty"`
}

// SlackShare is one message that shares a file: its ts.
type SlackShare struct {
	TS       string `json:"ts"`
	ThreadTS string `json:"thread_ts,omitempty"`
}
