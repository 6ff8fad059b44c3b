package whatsapp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

var _ platform.Downloader = (*Client)(nil)

// mediaHost is where the Cloud API serves media's bytes: the URL GET
// /<media id> answers, valid for five minutes, with the access token.
const mediaHost = "lookaside.fbsbx.com"

// maxMediaID bounds a media id: Graph's are decimal numbers.
const maxMediaID = 32

// mediaAttachment describes a media message's file, and answers its
// caption. A media id that is no Graph id (digits) is malformed: Parley
// would put it in a URL's path.
func mediaAttachment(m WhatsAppMessage) (message.Attachment, string, error) {
	var f *WhatsAppMedia
	var kind message.AttachmentKind
	switch m.Type {
	case WhatsAppTypeImage:
		f, kind = m.Image, message.AttachImage
	case WhatsAppTypeDocument:
		f, kind = m.Document, message.AttachFile
	case WhatsAppTypeAudio:
		f, kind = m.Audio, message.AttachAudio
		if f != nil && f.Voice {
			kind = message.AttachVoice
		}
	case WhatsAppTypeVideo:
		f, kind = m.Video, message.AttachVideo
	case WhatsAppTypeSticker:
		f, kind = m.Sticker, message.AttachSticker
	}
	if f == nil || !digits(f.ID) || len(f.ID) > maxMediaID {
		return message.Attachment{}, "", fmt.Errorf("%w: whatsapp %s message without its media id", platform.ErrMalformed, m.Type)
	}
	return message.Attachment{Kind: kind, MIME: f.MIMEType, Name: f.Filename, PlatformID: f.ID}, f.Caption, nil
}

// Download fetches a media message's file (a.PlatformID is its media id):
// GET /<media id> for its URL, which lasts five minutes (so it is asked at
// the turn, never kept), then the file with the access token, at most max
// bytes. The token goes only to lookaside.fbsbx.com over HTTPS, or to the
// configured API's own host where BaseURL points elsewhere (a fake). The
// bytes must have the SHA-256 Graph gave: a download cut short or swapped
// is platform.ErrFileUnavailable, as is media Graph no longer holds (30
// days) or never did.
func (c *Client) Download(ctx context.Context, a message.Attachment, max int64) ([]byte, error) {
	switch {
	case a.Size > max:
		return nil, platform.ErrFileTooLarge
	case !digits(a.PlatformID) || len(a.PlatformID) > maxMediaID:
		return nil, fmt.Errorf("%w: not a WhatsApp media id", platform.ErrFileUnavailable)
	}
	api := platform.API{Name: "Graph API", BaseURL: c.BaseURL, DefaultBaseURL: DefaultBaseURL, HTTP: c.HTTP}
	auth := http.Header{"Authorization": {"Bearer " + c.Token}}
	path := "/" + a.PlatformID
	if digits(c.PhoneNumberID) {
		// Graph then answers only for media sent to this number.
		path += "?phone_number_id=" + c.PhoneNumberID
	}
	body, err := api.GetFile(ctx, path, auth, platform.MaxResponseBytes)
	if err != nil {
		return nil, fmt.Errorf("whatsapp media url: %w", err)
	}
	var m WhatsAppMediaURL
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("whatsapp media url: the answer does not decode: %w", err)
	}
	if n, err := strconv.ParseInt(m.FileSize.String(), 10, 64); err == nil && n > max {
		return nil, platform.ErrFileTooLarge
	}
	u, err := url.Parse(m.URL)
	if err != nil || !c.mediaURL(u) {
		return nil, fmt.Errorf("%w: Graph gave no media URL on %s", platform.ErrFileUnavailable, mediaHost)
	}
	b, err := api.GetURL(ctx, u.String(), auth, max)
	switch {
	case errors.Is(err, platform.ErrFileTooLarge), errors.Is(err, platform.ErrFileUnavailable):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("whatsapp media download: %w", err)
	}
	if want, err := base64.StdEncoding.DecodeString(m.SHA256); err == nil && len(want) == sha256.Size {
		if got := sha256.Sum256(b); string(got[:]) != string(want) {
			return nil, fmt.Errorf("%w: the download is not the file Graph described (SHA-256)", platform.ErrFileUnavailable)
		}
	}
	return b, nil
}

// mediaURL reports whether the access token may go to u: the Cloud API's
// media host over HTTPS, or the configured API's own scheme and host.
func (c *Client) mediaURL(u *url.URL) bool {
	if u.Scheme == "https" && strings.EqualFold(u.Host, mediaHost) {
		return true
	}
	base, err := url.Parse(c.BaseURL)
	return c.BaseURL != "" && err == nil && u.Scheme == base.Scheme && strings.EqualFold(u.Host, base.Host)
}
