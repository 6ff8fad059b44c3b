package line

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

const (
	// DefaultDataBaseURL is where LINE serves the content of people's
	// messages: a host of its own, apart from the Messaging API's.
	DefaultDataBaseURL = "https://api-data.line.me"
	// SettingDataAPIBaseURL is its root (the local runner points it at a
	// fake).
	SettingDataAPIBaseURL = "LINE_DATA_API_BASE_URL"
)

// attachment describes a person's image, video, audio or file message. LINE
// declares no media type: an audio message (a voice note recorded in the
// chat) is M4A, declared audio/mp4 so that its MP4 container is taken for
// audio; the turn sniffs every other from the bytes (images are JPEG,
// videos MP4).
func attachment(m LineMessageContent) message.Attachment {
	a := message.Attachment{PlatformID: m.ID, Duration: seconds(m.Duration)}
	switch m.Type {
	case LineMessageImage:
		a.Kind = message.AttachImage
	case LineMessageVideo:
		a.Kind = message.AttachVideo
	case LineMessageAudio:
		a.Kind, a.MIME = message.AttachVoice, "audio/mp4"
	default:
		a.Kind, a.Name, a.Size = message.AttachFile, m.FileName, max(m.FileSize, 0)
	}
	if m.ContentProvider != nil && m.ContentProvider.Type != "" && m.ContentProvider.Type != "line" {
		// Another service's content (contentProvider "external"): LINE's
		// content API does not serve it.
		a.Reason = message.ReasonNotServed
	}
	return a
}

// maxKeywords and maxKeyword bound the keywords of a sticker kept as its
// name: at most 10, each at most 100 bytes of valid UTF-8 (others are
// left out).
const (
	maxKeywords = 10
	maxKeyword  = 100
)

// sticker describes a sticker: PlatformID "<package id>/<sticker id>", its
// keywords (LINE's words for what it shows) as its name. LINE serves no
// sticker's image to a bot, so nothing is fetched.
func sticker(m LineMessageContent) message.Attachment {
	var kw []string
	for _, k := range m.Keywords {
		if k = strings.TrimSpace(k); k != "" && len(k) <= maxKeyword && utf8.ValidString(k) && len(kw) < maxKeywords {
			kw = append(kw, k)
		}
	}
	return message.Attachment{Kind: message.AttachSticker, PlatformID: m.PackageID + "/" + m.StickerID,
		Name: strings.Join(kw, ", "), Reason: message.ReasonNotServed}
}

// seconds rounds LINE's milliseconds to seconds; 0 for what is no
// duration.
func seconds(ms int64) int {
	if ms <= 0 || ms > 1<<40 {
		return 0
	}
	return int((ms + 500) / 1000)
}

// Download fetches the content of a person's message (a.PlatformID is the
// message id) from the content API, GET /v2/bot/message/{id}/content on
// DataBaseURL, with the channel access token, at most max bytes. Content
// LINE no longer holds (it keeps it for a limited time) is
// platform.ErrFileUnavailable. A video or an audio LINE is
// still preparing answers 202: an error, which the turn does not wait out
// (the attachment reaches the agent as unavailable).
func (c *Client) Download(ctx context.Context, a message.Attachment, max int64) ([]byte, error) {
	switch {
	case a.Size > max:
		return nil, platform.ErrFileTooLarge
	case !chatID(a.PlatformID):
		return nil, fmt.Errorf("%w: LINE does not hold this content", platform.ErrFileUnavailable)
	}
	api := platform.API{Name: "content API", BaseURL: c.DataBaseURL, DefaultBaseURL: DefaultDataBaseURL, HTTP: c.HTTP}
	auth := http.Header{"Authorization": {"Bearer " + c.Token}}
	b, err := api.GetFile(ctx, "/v2/bot/message/"+a.PlatformID+"/content", auth, max)
	if err != nil && !errors.Is(err, platform.ErrFileTooLarge) && !errors.Is(err, platform.ErrFileUnavailable) {
		return nil, fmt.Errorf("line content: %w", err)
	}
	return b, err
}
