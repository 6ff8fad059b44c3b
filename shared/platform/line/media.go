package line

import (
	"context"
	"errors"
	"fmt"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// MaxImage is the largest image LINE takes (10 MB).
const MaxImage = 10 << 20

var _ platform.MediaSender = (*Client)(nil)

// MediaLimit: LINE sends images natively. Its audio needs the file's
// duration and its video a preview image, which Parley does not know, and
// a bot has no file message: those kinds go as links.
func (c *Client) MediaLimit(k message.MediaKind) int64 {
	if k == message.MediaImage {
		return MaxImage
	}
	return 0
}

// SendMedia sends an image message by URL (LINE fetches it: the agent's URL,
// or an upload's presigned GET), the same URL as its preview, and its
// caption as a text message in the same call, so the two are posted
// together or not at all: with the reply token while it is fresh (the
// reply's first bubble), pushed with the unit's retry key otherwise. An
// upload that is not JPEG or PNG, which LINE cannot show, goes as a link
// instead. Failures are classified like Send's.
func (c *Client) SendMedia(ctx context.Context, m message.Outgoing, f platform.MediaFile) (message.Receipt, error) {
	if err := platform.CheckThread(c.BotUserID, m.Thread); err != nil {
		return message.Receipt{}, fmt.Errorf("line send image: %w", err)
	}
	if f.Kind != message.MediaImage || f.Upload && f.MIME != "image/jpeg" && f.MIME != "image/png" {
		text := f.URL
		if f.Caption != "" {
			text = f.Caption + "\n" + f.URL
		}
		m.Content = message.Text(text)
		return c.Send(ctx, m)
	}
	msgs := []LineTextMessage{{Type: "image", OriginalContentURL: f.URL, PreviewImageURL: f.URL}}
	if f.Caption != "" {
		msgs = append(msgs, textMessage(f.Caption, ""))
	}
	if token := c.replyToken(m.Sequence, m.ReplyContext); token != "" {
		ids, refused, err := c.replyAll(ctx, token, msgs)
		if se := (*message.SendError)(nil); errors.As(err, &se) && se.Class == message.FailUnknown {
			se.Reason += " (a reply takes no retry key: its resend may post it twice)"
		}
		if !refused {
			return message.Receipt{MessageIDs: ids}, err
		}
	}
	return c.pushAll(ctx, m.Thread.Chat, msgs, m.IdempotencyKey)
}
