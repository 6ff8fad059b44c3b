package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

var (
	_ platform.Previewer        = (*Client)(nil)
	_ platform.PreviewFinalizer = (*Client)(nil)
)

// PreviewInterval is the least time between two edits of a preview.
// Discord publishes no fixed figures (its answers' X-RateLimit-* headers
// say them), but message writes are bucketed per channel or webhook at
// about 5 per 5 seconds: a preview takes at most half of such a bucket,
// leaving the rest to the reply's own bubbles.
const PreviewInterval = 2 * time.Second

// Preview shows a reply being written in the interaction's deferred
// response: its "… is thinking" message (@original) is edited (PATCH
// /webhooks/{app}/{token}/messages/@original) while the interaction's token
// lives, and the reply's first bubble finalizes it into itself. The text is
// inert, as every bubble's, cut to TextLimit. There is no preview where
// there is no deferred response of the reply's own: a press's (its
// @original is the pressed message), a proactive event's, or one whose
// token is past its life; Preview then does nothing. A preview whose token
// has expired since it was shown is edited with the bot token instead.
func (c *Client) Preview(ctx context.Context, p message.Preview, text string) (message.Preview, error) {
	if err := c.check(p.Thread); err != nil {
		return p, fmt.Errorf("discord preview: %w", err)
	}
	msg := DiscordMessageSend{Content: c.text(platform.Fit(text, TextLimit, message.CountRunes)), AllowedMentions: noMentions(), Components: []DiscordComponent{}}
	token, ok := c.originalToken(p.ReplyContext)
	switch {
	case ok:
		rc, _, err := c.webhook(ctx, http.MethodPatch, "/messages/@original", token, msg)
		if err != nil {
			return p, wrap("preview edit of the interaction's response", err)
		}
		p.MessageID = rc.MessageIDs[0]
		return p, nil
	case p.MessageID != "":
		return p, c.Edit(ctx, p.Thread, p.MessageID, message.Text(text))
	}
	return p, nil
}

// FinalizePreview edits the preview into the reply's first bubble ct, the
// way Preview edited it: through the interaction's token while it lives
// (which reaches a channel the bot is no member of), with the bot token
// after. Failures are classified like Send's: a preview someone deleted is
// not_found (10008).
func (c *Client) FinalizePreview(ctx context.Context, p message.Preview, ct message.Content) error {
	if err := c.check(p.Thread); err != nil {
		return fmt.Errorf("discord finalize preview: %w", err)
	}
	token, ok := c.originalToken(p.ReplyContext)
	if !ok {
		return c.Edit(ctx, p.Thread, p.MessageID, ct)
	}
	msg, err := c.render(ct)
	if err != nil {
		return fmt.Errorf("discord finalize preview: %w", err)
	}
	_, gone, err := c.webhook(ctx, http.MethodPatch, "/messages/@original", token, msg)
	if gone {
		return c.Edit(ctx, p.Thread, p.MessageID, ct)
	}
	return wrap("edit of the interaction's response into the reply", err)
}

// ClearPreview deletes the preview's message: the interaction's response
// (DELETE /webhooks/{app}/{token}/messages/@original) while its token
// lives, the channel message with the bot token after. One already gone is
// cleared.
func (c *Client) ClearPreview(ctx context.Context, p message.Preview) error {
	if p.MessageID == "" {
		return nil
	}
	if err := c.check(p.Thread); err != nil {
		return fmt.Errorf("discord clear preview: %w", err)
	}
	if !snowflake(p.MessageID) {
		return fmt.Errorf("discord clear preview: %w", invalid("the message id is not a snowflake"))
	}
	var resp *platform.Response
	var err error
	webhook := false
	if token, ok := c.originalToken(p.ReplyContext); ok {
		resp, err = c.call(ctx, http.MethodDelete, "/webhooks/"+c.ApplicationID+"/"+url.PathEscape(token)+"/messages/@original", false, struct{}{})
		webhook = true
	} else {
		resp, err = c.call(ctx, http.MethodDelete, "/channels/"+p.Thread.Chat+"/messages/"+p.MessageID, true, struct{}{})
	}
	if err == nil && resp.Status != http.StatusNoContent && resp.Status != http.StatusOK {
		se, gone := classify(resp, webhook)
		if gone {
			// The token no longer answers: the bot's may still reach it.
			p.ReplyContext = nil
			return c.ClearPreview(ctx, p)
		}
		err = se
	}
	var se *message.SendError
	if errors.As(err, &se) && se.Class == message.FailNotFound {
		return nil
	}
	return wrap("delete of the preview", err)
}

// PreviewInterval is PreviewInterval, in every channel.
func (c *Client) PreviewInterval(message.Thread) time.Duration { return PreviewInterval }

// originalToken is the interaction token that reaches the reply's own
// deferred response, while it lives: a command's (a press's @original is
// the pressed message, never a preview).
func (c *Client) originalToken(rc *message.ReplyContext) (string, bool) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if !rc.Fresh(now(), TokenMargin) {
		return "", false
	}
	callback, token := splitReplyToken(rc.Token)
	return token, callback == DiscordCallbackDeferredChannelMessage && token != ""
}
