package message

import (
	"strings"
	"time"
)

// AttachmentKind says what a person attached. Its value is what the agent
// reads.
type AttachmentKind string

const (
	AttachImage   AttachmentKind = "image"
	AttachFile    AttachmentKind = "file"  // a document of any type
	AttachAudio   AttachmentKind = "audio" // a music or audio file
	AttachVoice   AttachmentKind = "voice" // a voice note recorded in the chat
	AttachVideo   AttachmentKind = "video"
	AttachSticker AttachmentKind = "sticker"
)

// KindOfType is the kind a file of media type mime is when its platform
// says no more: an image, audio, a video, else a file. Whether audio is a
// voice note is the platform's to say.
func KindOfType(mime string) AttachmentKind {
	family, _, _ := strings.Cut(strings.ToLower(mime), "/")
	switch family {
	case "image":
		return AttachImage
	case "audio":
		return AttachAudio
	case "video":
		return AttachVideo
	}
	return AttachFile
}

// Attachment is a file that came with a person's message: what the platform
// said of it at the webhook, and, once the turn has stored it (package
// media), where the agent may fetch it. A caption is the event's Text.
type Attachment struct {
	// Index is its place among the event's attachments, from 0: with the
	// event's key it names the stored object, so a retried turn finds it.
	Index int            `json:"index"`
	Kind  AttachmentKind `json:"kind"`
	// MIME is the media type: as the platform declared it, until the turn
	// has read the bytes, then as they are.
	MIME string `json:"mime_type,omitempty"`
	// Size is in bytes, as the platform declared it, then as stored.
	Size int64  `json:"size,omitempty"`
	Name string `json:"name,omitempty"`
	// PlatformID is the platform's id of the file (Telegram's file_id),
	// which its adapter downloads by.
	PlatformID string `json:"platform_id,omitempty"`
	// Width and Height are an image's or a video's, in pixels, where known.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Duration is a voice note's, an audio's or a video's, in seconds.
	Duration int `json:"duration,omitempty"`
	// URL is a presigned GET of the stored bytes, valid until URLExpires;
	// set by the turn for the agent, never stored with the event.
	URL        string     `json:"url,omitempty"`
	URLExpires *time.Time `json:"url_expires_at,omitempty"`
	// SHA256 is the stored bytes' hex digest, with URL.
	SHA256 string `json:"sha256,omitempty"`
	// Reason, when there is no URL, says why (AttachmentReason).
	Reason AttachmentReason `json:"reason,omitempty"`
}

// AttachmentReason says why an attachment reached the agent without a URL.
type AttachmentReason string

const (
	// ReasonMediaOff: the deployment stores no media (no PARLEY_MEDIA_BUCKET).
	ReasonMediaOff AttachmentReason = "media_off"
	// ReasonTooLarge: over PARLEY_MEDIA_MAX_BYTES, declared or read.
	ReasonTooLarge AttachmentReason = "too_large"
	// ReasonTypeRefused: a media type PARLEY_MEDIA_TYPES does not allow, as
	// declared or as the bytes turned out to be.
	ReasonTypeRefused AttachmentReason = "type_not_allowed"
	// ReasonTypeMismatch: the bytes are not the type the platform declared
	// (a "photo" that is a PDF).
	ReasonTypeMismatch AttachmentReason = "type_mismatch"
	// ReasonUnavailable: the platform would not serve the file (gone,
	// refused, or a download that broke off).
	ReasonUnavailable AttachmentReason = "unavailable"
	// ReasonNoDownload: the platform's adapter cannot download files yet.
	ReasonNoDownload AttachmentReason = "not_downloadable"
	// ReasonNotServed: the platform serves the app no bytes for it — a
	// file another service holds (a Google Drive file, a Slack external
	// file, a LINE file from an external provider) or a LINE sticker. Its
	// adapter says so at the webhook; its kind, name, type and platform id
	// still tell the agent what the person sent.
	ReasonNotServed AttachmentReason = "not_served"
)
