package line

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// The largest files LINE takes by URL: an image 10 MB, an audio or a video
// 200 MB (https://developers.line.biz/en/reference/messaging-api/#image-message).
const (
	MaxImage = 10 << 20
	MaxAudio = 200 << 20
	MaxVideo = 200 << 20
)

// The types LINE plays, for an upload, whose type Parley knows: an image
// JPEG or PNG, an audio M4A or MP3, a video MP4. An agent's own URL is
// taken as the agent says it is: LINE fetches it, not Parley.
var (
	imageTypes = []string{"image/jpeg", "image/png"}
	audioTypes = []string{"audio/mp4", "audio/x-m4a", "audio/m4a", "audio/mpeg", "audio/mp3"}
	videoTypes = []string{"video/mp4"}
)

var _ platform.MediaSender = (*Client)(nil)

// MediaLimit: LINE has image, audio and video messages, by URL; a bot has
// no file message, so a file goes as a link. A voice note is an audio
// message (LINE has no other voice message).
func (c *Client) MediaLimit(k message.MediaKind) int64 {
	switch k {
	case message.MediaImage:
		return MaxImage
	case message.MediaAudio, message.MediaVoice:
		return MaxAudio
	case message.MediaVideo:
		return MaxVideo
	}
	return 0
}

// SendMedia sends an image, audio or video message by URL (LINE fetches
// it: the agent's URL, or an upload's presigned GET), and its caption as a
// text message in the same call, so the two are posted together or not at
// all: with the reply token while it is fresh (the reply's first bubble),
// pushed with the unit's retry key otherwise. A file LINE cannot take that
// way is platform.ErrNotNative, and delivery sends it as a link: an audio
// whose duration the agent did not give (LINE requires it; Parley does not
// decode audio to measure it), a video without a preview image, or an
// upload of a type LINE does not play. Failures are classified like Send's.
func (c *Client) SendMedia(ctx context.Context, m message.Outgoing, f platform.MediaFile) (message.Receipt, error) {
	if err := platform.CheckThread(c.BotUserID, m.Thread); err != nil {
		return message.Receipt{}, fmt.Errorf("line send media: %w", err)
	}
	media, ok := mediaMessage(f)
	if !ok {
		return message.Receipt{}, fmt.Errorf("line send media: %w", platform.ErrNotNative)
	}
	msgs := []LineTextMessage{media}
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

// mediaMessage lays f out as LINE's message of its kind; ok is false when
// LINE cannot take it natively (see SendMedia).
func mediaMessage(f platform.MediaFile) (_ LineTextMessage, ok bool) {
	plays := func(types []string) bool { return !f.Upload || slices.Contains(types, f.MIME) }
	switch f.Kind {
	case message.MediaImage:
		if plays(imageTypes) {
			// The preview the agent gave, else the image itself (LINE
			// scales it).
			return LineTextMessage{Type: LineMessageImage, OriginalContentURL: f.URL, PreviewImageURL: cmp.Or(f.PreviewURL, f.URL)}, true
		}
	case message.MediaAudio, message.MediaVoice:
		if f.DurationMS > 0 && plays(audioTypes) {
			return LineTextMessage{Type: LineMessageAudio, OriginalContentURL: f.URL, Duration: f.DurationMS}, true
		}
	case message.MediaVideo:
		if f.PreviewURL != "" && plays(videoTypes) {
			return LineTextMessage{Type: LineMessageVideo, OriginalContentURL: f.URL, PreviewImageURL: f.PreviewURL}, true
		}
	}
	return LineTextMessage{}, false
}
