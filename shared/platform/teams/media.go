package teams

import (
	"context"
	"errors"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// MaxImage is the largest picture Teams shows in a bot's message: 1 MB
// (and 1024×1024 pixels), PNG, JPEG or GIF
// (https://learn.microsoft.com/microsoftteams/platform/bots/build-conversational-capability).
const MaxImage = 1 << 20

var _ platform.MediaSender = (*Client)(nil)

// MediaLimit: Teams shows an image sent as an attachment by URL. Every
// other kind goes as a link: a bot sends a file into a personal chat only
// through the consent-card flow (a FileConsentCard, the person's accept,
// then an upload to their OneDrive), which needs a person's click before
// the send and a Graph grant Parley does not hold, and into a channel or
// group chat not at all; audio and video attachments Teams shows as links
// anyway.
func (c *Client) MediaLimit(k message.MediaKind) int64 {
	if k == message.MediaImage {
		return MaxImage
	}
	return 0
}

// SendMedia posts an image as an activity whose one attachment has the
// image's type and its URL (Teams fetches it: the agent's URL, or an
// upload's presigned GET), then its caption as a text activity of its own:
// Teams splits an activity holding text and an attachment, and the
// message's id would be lost. The receipt holds both ids; a caption that
// fails after the image was posted is an unknown outcome, since Teams has
// no idempotency key to resend it safely. An image whose type is not one
// Teams shows (an upload's, or an agent URL's extension) is
// platform.ErrNotNative, and delivery sends it as a link. Failures are
// classified like Send's.
func (c *Client) SendMedia(ctx context.Context, m message.Outgoing, f platform.MediaFile) (message.Receipt, error) {
	if err := c.check(m.Thread); err != nil {
		return message.Receipt{}, wrap("send media", err)
	}
	typ := imageType(f)
	if f.Kind != message.MediaImage || typ == "" {
		return message.Receipt{}, wrap("send media", platform.ErrNotNative)
	}
	act := TeamsActivity{Type: TeamsActivityMessage, Attachments: []TeamsAttachment{{ContentType: typ, ContentURL: f.URL, Name: f.Name}}}
	act.ReplyToID = m.ReplyTo
	rc, err := c.post(ctx, m, act)
	if err != nil || f.Caption == "" {
		return rc, err
	}
	caption := c.textActivity(f.Caption)
	cr, err := c.post(ctx, m, caption)
	if err != nil {
		reason := "the image was posted; then its caption failed"
		if se, ok := errors.AsType[*message.SendError](err); ok {
			reason += ": " + strings.TrimSpace(string(se.Class)+" "+se.Reason)
		}
		return rc, wrap("send media", &message.SendError{Class: message.FailUnknown, Reason: reason})
	}
	rc.MessageIDs = append(rc.MessageIDs, cr.MessageIDs...)
	return rc, nil
}

// imageType is the type of the picture f, when Teams shows it: an
// upload's type, or the extension of an agent URL's path; "" otherwise.
func imageType(f platform.MediaFile) string {
	if f.Upload {
		if slices.Contains([]string{"image/png", "image/jpeg", "image/gif"}, f.MIME) {
			return f.MIME
		}
		return ""
	}
	u, err := url.Parse(f.URL)
	if err != nil {
		return ""
	}
	// The picture types Teams shows, by the extension, where Parley does
	// not know the type (an agent's own URL).
	switch strings.ToLower(path.Ext(u.Path)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	}
	return ""
}
