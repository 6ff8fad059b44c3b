package slack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

var _ platform.Previewer = (*Client)(nil)

// previewInterval keeps a preview's chat.update calls within Slack's Tier 3
// (about 50 a minute) with room for the reply's own calls.
const previewInterval = 1500 * time.Millisecond

// Preview shows a reply being written as one message in the conversation's
// thread (chat.postMessage, tagged as the turn's preview so that its echo
// is dropped), updated after (chat.update): the reply's first bubble
// updates it into itself. The text is inert, as every bubble's, and cut to
// 4000 characters. Failures are classified like Send's.
//
// In an assistant's thread (Client.Assistant) the preview is Slack's native
// stream instead (streamPreview), appended to every second.
func (c *Client) Preview(ctx context.Context, p message.Preview, text string) (message.Preview, error) {
	text = platform.Fit(text, TextLimit, message.CountRunes)
	if c.streams(p.Thread) {
		return c.streamPreview(ctx, p, text)
	}
	if p.MessageID != "" {
		return p, c.Edit(ctx, p.Thread, p.MessageID, message.Text(text))
	}
	rc, err := c.post(ctx, message.Outgoing{Thread: p.Thread, Content: message.Text(text), Origin: message.OriginAgent,
		IdempotencyKey: intent.UnitKey(p.Key, intent.PreviewUnit)})
	if err != nil {
		return p, fmt.Errorf("slack chat.postMessage: %w", err)
	}
	p.MessageID = rc.MessageIDs[0]
	return p, nil
}

// ClearPreview deletes the preview's message (chat.delete), a native
// stream stopped first; one already gone is cleared.
func (c *Client) ClearPreview(ctx context.Context, p message.Preview) error {
	if p.MessageID == "" {
		return nil
	}
	if err := platform.CheckThread(c.TeamID, p.Thread); err != nil {
		return fmt.Errorf("slack chat.delete: %w", err)
	}
	if c.streams(p.Thread) {
		if err := c.stopStream(ctx, p); err != nil {
			return err
		}
	}
	_, err := c.call(ctx, "/chat.delete", SlackDelete{Channel: p.Thread.Chat, TS: p.MessageID})
	var se *message.SendError
	if errors.As(err, &se) && se.Class == message.FailNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("slack chat.delete: %w", err)
	}
	return nil
}

// PreviewInterval: one update every 1.5 seconds; a native stream's append
// every second.
func (c *Client) PreviewInterval(t message.Thread) time.Duration {
	if c.streams(t) {
		return streamInterval
	}
	return previewInterval
}
