package teams

import "encoding/json"

// Bot Framework wire types, with JSON tags verbatim from the Bot Framework
// activity schema (https://github.com/microsoft/botframework-sdk/blob/main/specs/botframework-activity/botframework-activity.md)
// and the Connector REST API reference. Only the fields Parley reads or
// writes are declared.

// Activity types (TeamsActivity.Type).
const (
	TeamsActivityMessage            = "message"
	TeamsActivityTyping             = "typing"
	TeamsActivityInvoke             = "invoke"
	TeamsActivityConversationUpdate = "conversationUpdate"
	TeamsActivityInstallationUpdate = "installationUpdate"
	TeamsActivityMessageUpdate      = "messageUpdate"
	TeamsActivityMessageDelete      = "messageDelete"
	TeamsActivityMessageReaction    = "messageReaction"
)

// Conversation types (TeamsConversation.ConversationType).
const (
	TeamsConversationPersonal  = "personal"
	TeamsConversationGroupChat = "groupChat"
	TeamsConversationChannel   = "channel"
)

// TeamsChannelID is the channelId of every Teams activity.
const TeamsChannelID = "msteams"

// TeamsInvokeAdaptiveCardAction is the invoke name of an Action.Execute.
const TeamsInvokeAdaptiveCardAction = "adaptiveCard/action"

// TeamsActivity is an activity, inbound or outbound.
type TeamsActivity struct {
	Type         string               `json:"type"`
	ID           string               `json:"id,omitempty"`
	Timestamp    string               `json:"timestamp,omitempty"`
	ServiceURL   string               `json:"serviceUrl,omitempty"`
	ChannelID    string               `json:"channelId,omitempty"`
	From         *TeamsChannelAccount `json:"from,omitempty"`
	Conversation *TeamsConversation   `json:"conversation,omitempty"`
	Recipient    *TeamsChannelAccount `json:"recipient,omitempty"`
	Text         string               `json:"text,omitempty"`
	TextFormat   string               `json:"textFormat,omitempty"`
	Entities     []TeamsEntity        `json:"entities,omitempty"`
	Attachments  []TeamsAttachment    `json:"attachments,omitempty"`
	ChannelData  *TeamsChannelData    `json:"channelData,omitempty"`
	ReplyToID    string               `json:"replyToId,omitempty"`
	Name         string               `json:"name,omitempty"`
	Value        json.RawMessage      `json:"value,omitempty"`
}

// TeamsChannelAccount is a person or bot.
type TeamsChannelAccount struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	AadObjectID string `json:"aadObjectId,omitempty"`
	Role        string `json:"role,omitempty"`
}

// TeamsConversation is where an activity happens.
type TeamsConversation struct {
	ID               string `json:"id"`
	ConversationType string `json:"conversationType,omitempty"`
	TenantID         string `json:"tenantId,omitempty"`
	IsGroup          bool   `json:"isGroup,omitempty"`
}

// TeamsEntity is an activity's entity; Parley reads mentions.
type TeamsEntity struct {
	Type      string               `json:"type"`
	Mentioned *TeamsChannelAccount `json:"mentioned,omitempty"`
	Text      string               `json:"text,omitempty"`
}

// TeamsChannelData is Teams' part of an activity.
type TeamsChannelData struct {
	Tenant  *TeamsID `json:"tenant,omitempty"`
	Team    *TeamsID `json:"team,omitempty"`
	Channel *TeamsID `json:"channel,omitempty"`
}

// TeamsID is an object holding an id.
type TeamsID struct {
	ID string `json:"id"`
}

// TeamsAttachment is a card or file attached to an activity. A person's
// inline image has a ContentURL on the connector (fetched with the app
// token); a file uploaded to a personal chat is ContentType
// TeamsFileDownloadInfo, its Content a TeamsFileDownload.
type TeamsAttachment struct {
	ContentType string `json:"contentType"`
	ContentURL  string `json:"contentUrl,omitempty"`
	Name        string `json:"name,omitempty"`
	Content     any    `json:"content,omitempty"`
}

// TeamsFileDownloadInfo is the content type of a file a person uploaded in
// a personal chat with the bot.
const TeamsFileDownloadInfo = "application/vnd.microsoft.teams.file.download.info"

// TeamsFileDownload is a file upload's content: DownloadURL is
// pre-authenticated (for about an hour) on the tenant's SharePoint.
type TeamsFileDownload struct {
	DownloadURL string `json:"downloadUrl"`
	UniqueID    string `json:"uniqueId,omitempty"`
	FileType    string `json:"fileType,omitempty"`
}

// TeamsResourceResponse is the connector's answer to a send: the new
// activity's id.
type TeamsResourceResponse struct {
	ID string `json:"id"`
}

// TeamsErrorResponse is the connector's error body.
type TeamsErrorResponse struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TeamsInvokeResponse is the body that answers an Action.Execute invoke
// (an adaptiveCard/action's AdaptiveCardInvokeResponse).
type TeamsInvokeResponse struct {
	StatusCode int    `json:"statusCode"`
	Type       string `json:"type"`
	Value      any    `json:"value"`
}
