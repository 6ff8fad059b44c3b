package discord

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// MaxUpload is the largest file Parley sends to Discord: the default limit
// of a file a bot sends where no server boost raises it, 10 MiB
// (docs/adr/0026-slack-discord-media.md).
const MaxUpload = 10 << 20

var _ platform.MediaSender = (*Client)(nil)

// MediaLimit: Discord takes every kind as an attachment.
func (c *Client) MediaLimit(message.MediaKind) int64 { return MaxUpload }

// SendMedia sends f's bytes (an agent's URL read through shared/urlfetch,
// an upload from the bucket) as the attachment of a message that goes
// where Send's text would (see Client): the interaction's response or a
// follow-up, with the same multipart form, or a channel message with its
// nonce. The caption is the message's content, inert and notifying no one
// as Send's text; one over PlatformLimit once escaped follows the file as
// text messages, split as a bubble is, each with its own key (so its own
// nonce), and the receipt holds them too. A voice note is an audio
// attachment: Discord's voice message needs a waveform of the audio, which
// Parley does not compute. Failures are classified like Send's.
func (c *Client) SendMedia(ctx context.Context, m message.Outgoing, f platform.MediaFile) (message.Receipt, error) {
	if err := c.checkOut(m); err != nil {
		return message.Receipt{}, fmt.Errorf("discord send media: %w", err)
	}
	got, name, err := f.Bytes(ctx, MaxUpload)
	if err != nil {
		return message.Receipt{}, fmt.Errorf("discord send media: %w", err)
	}
	msg := DiscordMessageSend{AllowedMentions: noMentions(), Components: []DiscordComponent{},
		Attachments: []DiscordAttachmentSend{{ID: 0, Filename: name}}}
	caption := c.text(f.Caption)
	long := utf8.RuneCountInString(caption) > PlatformLimit
	if !long {
		msg.Content = caption
	}
	rc, err := c.deliver(ctx, m, msg, platform.FilePart("files[0]", name, got))
	if err != nil || !long {
		return rc, err
	}
	// The caption, too long for the file's message, follows it; as
	// follow-ups of the interaction where the file was one (or its
	// response).
	for i, p := range platform.FollowingTexts(m, f.CaptionTexts(), 1) {
		p.ReplyTo = ""
		if m.Sequence >= 0 {
			p.Sequence = m.Sequence + 1 + i
		}
		more, err := c.post(ctx, p)
		if err != nil {
			return rc, &message.SendError{Class: message.FailUnknown, Reason: "the file was sent, its caption not: " + err.Error()}
		}
		rc.MessageIDs = append(rc.MessageIDs, more.MessageIDs...)
	}
	return rc, nil
}
