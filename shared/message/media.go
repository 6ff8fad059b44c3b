package message

import (
	"net/url"
	"strings"
	"unicode"
)

// ContentMedia is a file to send (a Media): natively where the platform's
// sender can (platform.MediaSender), as a link in text elsewhere.
const ContentMedia ContentKind = "media"

// MediaKind says what a file is to the person who gets it.
type MediaKind string

const (
	MediaImage MediaKind = "image"
	MediaFile  MediaKind = "file"
	MediaAudio MediaKind = "audio"
	// MediaVoice is a voice note: a platform's native voice message
	// where it has one (Telegram: OGG/Opus only).
	MediaVoice MediaKind = "voice"
	MediaVideo MediaKind = "video"
)

// MediaKinds are the kinds an agent may send, in the order docs list them.
var MediaKinds = []MediaKind{MediaImage, MediaFile, MediaAudio, MediaVoice, MediaVideo}

// Known reports whether k is one of MediaKinds.
func (k MediaKind) Known() bool {
	for _, m := range MediaKinds {
		if k == m {
			return true
		}
	}
	return false
}

// Media is a file an agent sends: by its own HTTPS URL, or by an upload it
// made to Parley (POST /media) named by its upload id. Exactly one of URL
// and UploadID is set.
type Media struct {
	Kind     MediaKind `json:"kind"`
	URL      string    `json:"url,omitempty"`
	UploadID string    `json:"upload_id,omitempty"`
	// Name is the file's name as people see it; empty: the platform's or
	// the URL's.
	Name string `json:"name,omitempty"`
	// Caption is text shown with the file (a second message where the
	// platform has no caption, or where it is over the caption's limit).
	Caption string `json:"caption,omitempty"`
	// DurationMS is an audio's, a voice note's or a video's length in
	// milliseconds, as the agent states it; 0 when not given. LINE's audio
	// message needs it: without it, LINE gets a link.
	DurationMS int64 `json:"duration_ms,omitempty"`
	// PreviewURL is an https URL of a JPEG or PNG image standing for a
	// video (or a smaller copy of an image); "" when not given. LINE's video
	// message needs it: without it, LINE gets a link.
	PreviewURL string `json:"preview_url,omitempty"`
}

// Limits of a Media's members.
const (
	MaxMediaURL  = 2048 // bytes
	MaxMediaName = 255  // bytes
	// UploadIDLen is the length of an upload id: 32 lowercase hex digits.
	UploadIDLen = 32
	// MaxMediaDurationMS bounds DurationMS: a day, far above any file a
	// chat takes, and small enough that no platform's integer overflows.
	MaxMediaDurationMS = 24 * 60 * 60 * 1000
)

// TakesDuration reports whether a file of kind k has a length (audio, a
// voice note, video), so that Media.DurationMS may be given.
func (k MediaKind) TakesDuration() bool {
	return k == MediaAudio || k == MediaVoice || k == MediaVideo
}

// TakesPreview reports whether a file of kind k can be shown by a preview
// image (an image, a video), so that Media.PreviewURL may be given.
func (k MediaKind) TakesPreview() bool {
	return k == MediaImage || k == MediaVideo
}

// ValidUploadID reports whether s has the form POST /media issues.
func ValidUploadID(s string) bool {
	if len(s) != UploadIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// CheckMediaURL returns why s cannot be an agent's media URL, or "": an
// absolute https URL with a host, without credentials, at most MaxMediaURL
// bytes. Its address is checked when (and if) Parley fetches it
// (shared/urlfetch).
func CheckMediaURL(s string) string {
	if len(s) > MaxMediaURL {
		return "url is longer than 2048 bytes"
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || !u.IsAbs() || u.Opaque != "":
		return "url is not an absolute URL"
	case u.Scheme != "https":
		return "url must be https"
	case u.User != nil:
		return "url must not hold credentials"
	case u.Hostname() == "":
		return "url has no host"
	}
	return ""
}

// CheckMediaName returns why s cannot be a file name, or "".
func CheckMediaName(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "name is blank"
	case len(s) > MaxMediaName:
		return "name is longer than 255 bytes"
	case strings.ContainsAny(s, `/\`):
		return "name holds a path separator"
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "name holds a control character"
	}
	return ""
}
