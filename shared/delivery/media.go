package delivery

import (
	"context"
	"errors"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/split"
)

// Files finds a media unit's file: the agent's URL as it is, an upload in
// the media bucket (package media's Outbound). Its errors are
// *message.SendError values saying why, which fail or retry the unit.
type Files interface {
	Open(ctx context.Context, m message.Media) (platform.MediaFile, error)
}

// sendMedia sends a media unit: natively where the sender can send its kind
// (at its size, when known) and does not decline the file
// (platform.ErrNotNative), else as a link in text (the caption, then the
// link).
func (c Channel) sendMedia(ctx context.Context, m message.Outgoing, md message.Media) (message.Receipt, error) {
	var f platform.MediaFile
	switch {
	case c.Files != nil:
		var err error
		if f, err = c.Files.Open(ctx, md); err != nil {
			return message.Receipt{}, err
		}
	case md.URL != "":
		f = platform.FileOf(md)
	default:
		return message.Receipt{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "media_off: an upload_id needs the media bucket (PARLEY_MEDIA_BUCKET)"}
	}
	if ms, ok := c.Sender.(platform.MediaSender); ok {
		if limit := ms.MediaLimit(md.Kind); limit > 0 && f.Size <= limit {
			f.Split = func(caption string) []string { return split.Text(caption, c.Capabilities) }
			rc, err := ms.SendMedia(ctx, m, f)
			if !errors.Is(err, platform.ErrNotNative) {
				return rc, err
			}
		}
	}
	return c.sendLink(ctx, m, f)
}

// sendLink sends a file as text: its caption and its link in one message
// where they fit, else the caption (split as a bubble is) and then the
// link. A failure after a message went out is an unknown outcome: the
// platform's policy decides whether the whole unit is sent again.
func (c Channel) sendLink(ctx context.Context, m message.Outgoing, f platform.MediaFile) (message.Receipt, error) {
	if f.URL == "" {
		return message.Receipt{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "media has no link to send"}
	}
	caps := c.Capabilities
	texts := []string{f.URL}
	if f.Caption != "" {
		texts = []string{f.LinkText()}
		if caps.TextLimit > 0 && caps.Counting.Len(texts[0]) > caps.TextLimit {
			texts = append(split.Text(f.Caption, caps), f.URL)
		}
	}
	if caps.TextLimit > 0 && caps.Counting.Len(f.URL) > caps.TextLimit {
		return message.Receipt{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "media link is longer than the platform's text limit"}
	}
	first := m
	first.Content = message.Text(texts[0])
	parts := append([]message.Outgoing{first}, platform.FollowingTexts(m, texts[1:], 1)...)
	var rc message.Receipt
	for i, part := range parts {
		if i > 0 {
			part.ReplyContext = nil // a reply token answers the first message alone
		}
		r, err := c.Sender.Send(ctx, part)
		if err != nil {
			return rc, partial(rc, err)
		}
		rc.MessageIDs = append(rc.MessageIDs, r.MessageIDs...)
	}
	return rc, nil
}

// partial is err after rc's messages went out: an unknown outcome when
// any did, since the unit cannot be both sent and retried.
func partial(rc message.Receipt, err error) error {
	if len(rc.MessageIDs) == 0 {
		return err
	}
	reason := "part of the unit was sent"
	var se *message.SendError
	if errors.As(err, &se) {
		reason += "; then " + strings.TrimSpace(string(se.Class)+" "+se.Reason)
	}
	return &message.SendError{Class: message.FailUnknown, Reason: reason}
}
