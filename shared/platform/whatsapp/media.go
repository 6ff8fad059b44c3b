package whatsapp

import (
	"context"
	"fmt"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// CaptionLimit is the most a media message's caption holds, in UTF-16
// code units.
const CaptionLimit = 1024

var _ platform.MediaSender = (*Client)(nil)

// MediaLimit is what Cloud API takes by link: images 5 MB, audio (voice
// notes too) and video 16 MB, documents 100 MB.
func (c *Client) MediaLimit(k message.MediaKind) int64 {
	switch k {
	case message.MediaImage:
		return 5 << 20
	case message.MediaAudio, message.MediaVoice, message.MediaVideo:
		return 16 << 20
	case message.MediaFile:
		return 100 << 20
	}
	return 0
}

// SendMedia sends f by link (Graph fetches it: Parley reads nothing): an
// image, a document (with its name), audio or a video. A voice bubble goes
// as audio: Parley converts nothing, and Graph plays an OGG/Opus file as a
// voice note. Audio has no caption, and a caption over CaptionLimit does
// not fit one: the caption then follows as a text message, and the receipt
// holds both wamids. Outside the 24-hour window, where only a template may
// go, it is platform.ErrNotNative: delivery sends it as a link in text,
// which Send sends as it sends text there. Failures are classified like
// Send's.
func (c *Client) SendMedia(ctx context.Context, m message.Outgoing, f platform.MediaFile) (message.Receipt, error) {
	if c.windowClosed(m) {
		return message.Receipt{}, fmt.Errorf("whatsapp send media: %w", platform.ErrNotNative)
	}
	link := &WhatsAppMediaLink{Link: f.URL}
	separate := f.Caption != "" && (f.Kind == message.MediaAudio || f.Kind == message.MediaVoice || units(f.Caption) > CaptionLimit)
	if !separate {
		link.Caption = c.markup(f.Caption) // inert, as every text body
	}
	rc, err := c.send(ctx, m, func(msg *WhatsAppSendMessage) error {
		switch f.Kind {
		case message.MediaImage:
			msg.Type, msg.Image = "image", link
		case message.MediaFile:
			link.Filename = f.Name
			msg.Type, msg.Document = "document", link
		case message.MediaAudio, message.MediaVoice:
			msg.Type, msg.Audio = "audio", link
		case message.MediaVideo:
			msg.Type, msg.Video = "video", link
		default:
			return invalid("unknown media kind " + string(f.Kind))
		}
		return nil
	})
	if err != nil {
		return message.Receipt{}, fmt.Errorf("whatsapp send media: %w", err)
	}
	if !separate {
		return rc, nil
	}
	cm := m
	cm.Content, cm.ReplyTo, cm.IdempotencyKey = message.Text(f.Caption), "", ""
	more, err := c.Send(ctx, cm)
	if err != nil {
		return rc, &message.SendError{Class: message.FailUnknown, Reason: "the file was sent, its caption not: " + err.Error()}
	}
	rc.MessageIDs = append(rc.MessageIDs, more.MessageIDs...)
	return rc, nil
}

// windowClosed reports whether m answers a customer-service window that
// has closed (outsideWindow's test, without sending).
func (c *Client) windowClosed(m message.Outgoing) bool {
	rc := m.ReplyContext
	if rc == nil || rc.Token != message.WindowToken {
		return false
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	return !rc.Fresh(now(), WindowMargin)
}
