package telegram

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

var _ platform.Previewer = (*Client)(nil)

// Preview intervals. Telegram asks bots for at most about one message a
// second in a chat and 20 a minute in a group, edits included.
const (
	privatePreviewInterval = time.Second
	groupPreviewInterval   = 3 * time.Second
)

// Preview shows a reply being written. In a private chat it is a draft
// (sendMessageDraft), animated from one update to the next and gone on its
// own some 30 seconds after the last: no message exists until the reply's
// bubbles are sent. In a group it is a message (sendMessage, quoting
// p.ReplyTo), edited after (editMessageText): the reply's first bubble
// edits it into itself. The text goes without parse_mode, verbatim, cut to
// 4096 UTF-16 code units. Failures are classified like Send's.
func (c *Client) Preview(ctx context.Context, p message.Preview, text string) (message.Preview, error) {
	if err := platform.CheckThread(c.BotID, p.Thread); err != nil {
		return p, fmt.Errorf("telegram preview: %w", err)
	}
	text = platform.Fit(text, TextLimit, message.CountUTF16)
	if _, private := adapter.Private(adapter{}, p.Thread); private {
		args := TelegramSendMessageDraft{ChatID: TelegramChatID(p.Thread.Chat), DraftID: draftID(p.Key), Text: text}
		var err error
		if args.MessageThreadID, err = optionalID("message_thread_id", p.Thread.Thread); err != nil {
			return p, fmt.Errorf("telegram sendMessageDraft: %w", err)
		}
		var ok bool
		if err := c.call(ctx, "sendMessageDraft", args, &ok); err != nil {
			return p, fmt.Errorf("telegram sendMessageDraft: %w", err)
		}
		return p, nil
	}
	if p.MessageID != "" {
		return p, c.Edit(ctx, p.Thread, p.MessageID, message.Text(text))
	}
	rc, err := c.sendWith(ctx, message.Outgoing{Thread: p.Thread, Content: message.Text(text), ReplyTo: p.ReplyTo}, nil)
	if err != nil {
		return p, fmt.Errorf("telegram sendMessage: %w", err)
	}
	p.MessageID = rc.MessageIDs[0]
	return p, nil
}

// ClearPreview deletes a group's preview message (deleteMessage); one
// already gone is cleared. A draft has nothing to clear: it expires.
func (c *Client) ClearPreview(ctx context.Context, p message.Preview) error {
	if p.MessageID == "" {
		return nil
	}
	if err := platform.CheckThread(c.BotID, p.Thread); err != nil {
		return fmt.Errorf("telegram deleteMessage: %w", err)
	}
	id, err := strconv.ParseInt(p.MessageID, 10, 64)
	if err != nil {
		return fmt.Errorf("telegram deleteMessage: %w", &message.SendError{Class: message.FailInvalidPayload, Reason: "message_id is not an integer"})
	}
	var ok bool
	err = c.call(ctx, "deleteMessage", TelegramDeleteMessage{ChatID: TelegramChatID(p.Thread.Chat), MessageID: id}, &ok)
	var se *message.SendError
	if errors.As(err, &se) && se.Class == message.FailNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("telegram deleteMessage: %w", err)
	}
	return nil
}

// PreviewInterval: one update a second in a private chat, one every three
// seconds in a group (20 a minute).
func (c *Client) PreviewInterval(t message.Thread) time.Duration {
	if _, private := adapter.Private(adapter{}, t); private {
		return privatePreviewInterval
	}
	return groupPreviewInterval
}

// draftID is a turn's draft id: derived from its key, so a retried turn
// animates the same draft; positive and non-zero, as the Bot API wants.
func draftID(key string) int64 {
	sum := sha256.Sum256([]byte(key))
	return int64(binary.BigEndian.Uint32(sum[:4])&0x7fffffff) + 1
}
