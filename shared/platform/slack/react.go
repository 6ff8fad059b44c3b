package slack

import (
	"context"
	"errors"
	"fmt"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

var _ platform.Reactor = (*Client)(nil)

// React adds the reaction r.Emoji to the message messageID (its ts) in t
// with reactions.add, by Slack's name for it (NameFromEmoji: a known
// emoji, or a ":name:" the agent gave), then takes r.Received back with
// reactions.remove: Slack keeps every reaction a bot adds. A reaction the
// bot already added, or one it never added, is no failure, so React may
// be tried again. An emoji Slack has no name for is invalid_payload;
// other failures are classified like Send's. Needs reactions:write.
func (c *Client) React(ctx context.Context, t message.Thread, messageID string, r message.React) error {
	if err := platform.CheckThread(c.TeamID, t); err != nil {
		return fmt.Errorf("slack reactions.add: %w", err)
	}
	if r.Emoji != "" {
		name := NameFromEmoji(r.Emoji)
		if name == "" {
			return fmt.Errorf("slack reactions.add: %w", &message.SendError{Class: message.FailInvalidPayload, Reason: "no Slack name for the emoji"})
		}
		if err := c.reaction(ctx, "/reactions.add", t.Chat, messageID, name, "already_reacted"); err != nil {
			return fmt.Errorf("slack reactions.add: %w", err)
		}
	}
	if name := NameFromEmoji(r.Received); name != "" && r.Received != r.Emoji {
		// Best effort: the final reaction is set, whatever became of the
		// received one.
		_ = c.reaction(ctx, "/reactions.remove", t.Chat, messageID, name, "no_reaction")
	}
	return nil
}

// reaction calls a reactions method; the error code done means it was
// done before.
func (c *Client) reaction(ctx context.Context, method, channel, ts, name, done string) error {
	_, err := c.call(ctx, method, SlackReactionRequest{Channel: channel, Timestamp: ts, Name: name})
	var se *message.SendError
	if errors.As(err, &se) && se.Reason == done {
		return nil
	}
	return err
}
