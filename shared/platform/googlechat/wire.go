package googlechat

// Google Chat wire types, with JSON tags verbatim from the Chat API
// reference (Event, Message, Space, User, cardsV2). Only the fields Parley
// reads or writes are declared.

// Event types (GoogleChatEvent.Type).
const (
	GoogleChatMessageEvent   = "MESSAGE"
	GoogleChatCardClicked    = "CARD_CLICKED"
	GoogleChatAddedToSpace   = "ADDED_TO_SPACE"
	GoogleChatRemovedFrom    = "REMOVED_FROM_SPACE"
	GoogleChatSpaceTypeDM    = "DIRECT_MESSAGE"
	GoogleChatLegacyTypeDM   = "DM"
	GoogleChatUserTypeBot    = "BOT"
	GoogleChatActionFunction = "parley"
)

// GoogleChatEvent is an interaction event posted to the app's endpoint.
type GoogleChatEvent struct {
	Type      string             `json:"type"`
	EventTime string             `json:"eventTime"`
	Space     *GoogleChatSpace   `json:"space,omitempty"`
	Message   *GoogleChatMessage `json:"message,omitempty"`
	User      *GoogleChatUser    `json:"user,omitempty"`
	Action    *GoogleChatAction  `json:"action,omitempty"`
	Common    *GoogleChatCommon  `json:"common,omitempty"`
}

// GoogleChatSpace is a space: a direct message or a named space.
type GoogleChatSpace struct {
	Name            string `json:"name"`
	Type            string `json:"type,omitempty"`
	SpaceType       string `json:"spaceType,omitempty"`
	SingleUserBotDm bool   `json:"singleUserBotDm,omitempty"`
}

// GoogleChatUser is a person or an app.
type GoogleChatUser struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName,omitempty"`
	Type        string `json:"type,omitempty"`
}

// GoogleChatThread is a message's thread.
type GoogleChatThread struct {
	Name string `json:"name,omitempty"`
}

// GoogleChatMessage is a message, inbound or outbound.
type GoogleChatMessage struct {
	Name                 string             `json:"name,omitempty"`
	Sender               *GoogleChatUser    `json:"sender,omitempty"`
	CreateTime           string             `json:"createTime,omitempty"`
	Text                 string             `json:"text,omitempty"`
	ArgumentText         string             `json:"argumentText,omitempty"`
	Thread               *GoogleChatThread  `json:"thread,omitempty"`
	CardsV2              []GoogleChatCardV2 `json:"cardsV2,omitempty"`
	PrivateMessageViewer *GoogleChatUser    `json:"privateMessageViewer,omitempty"`
	Space                *GoogleChatSpace   `json:"space,omitempty"`
	// Attachment lists the files a person's message carries (inbound
	// only).
	Attachment []GoogleChatAttachment `json:"attachment,omitempty"`
}

// GoogleChatAttachment is a file on a message: one uploaded to Chat
// (source UPLOADED_CONTENT, its bytes at media.download of
// AttachmentDataRef.ResourceName, with the app's token) or a Drive file
// (DRIVE_FILE, which the app cannot read).
type GoogleChatAttachment struct {
	Name              string                   `json:"name,omitempty"`
	ContentName       string                   `json:"contentName,omitempty"`
	ContentType       string                   `json:"contentType,omitempty"`
	AttachmentDataRef *GoogleChatAttachmentRef `json:"attachmentDataRef,omitempty"`
	DriveDataRef      *GoogleChatDriveRef      `json:"driveDataRef,omitempty"`
	Source            string                   `json:"source,omitempty"`
}

// GoogleChatDriveRef names a Drive file shared on a message.
type GoogleChatDriveRef struct {
	DriveFileID string `json:"driveFileId,omitempty"`
}

// GoogleChatAttachmentRef names an uploaded file's bytes for
// media.download.
type GoogleChatAttachmentRef struct {
	ResourceName string `json:"resourceName,omitempty"`
}

// The sources of an attachment: a file uploaded to Chat, a Drive file.
const (
	GoogleChatUploadedContent = "UPLOADED_CONTENT"
	GoogleChatDriveFile       = "DRIVE_FILE"
)

// GoogleChatCardV2 is a card of a message.
type GoogleChatCardV2 struct {
	CardID string `json:"cardId"`
	Card   any    `json:"card"`
}

// GoogleChatAction is a clicked control's action (CARD_CLICKED).
type GoogleChatAction struct {
	ActionMethodName string                `json:"actionMethodName"`
	Parameters       []GoogleChatParameter `json:"parameters,omitempty"`
}

// GoogleChatParameter is a key and value of an action.
type GoogleChatParameter struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// GoogleChatCommon is what every event carries about the client: for a
// click, the function, its parameters and the card's form inputs.
type GoogleChatCommon struct {
	InvokedFunction string                         `json:"invokedFunction,omitempty"`
	Parameters      map[string]string              `json:"parameters,omitempty"`
	FormInputs      map[string]GoogleChatFormInput `json:"formInputs,omitempty"`
}

// GoogleChatFormInput is a form input's value.
type GoogleChatFormInput struct {
	StringInputs struct {
		Value []string `json:"value"`
	} `json:"stringInputs"`
}

// GoogleChatError is Google's error body.
type GoogleChatError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}
