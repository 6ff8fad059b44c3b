package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

var (
	_ platform.PreviewFinalizer = (*Client)(nil)
	_ platform.StatusPreviewer  = (*Client)(nil)
)

// streamInterval paces a native stream's appends: chat.appendStream is
// Tier 4 (100 a minute and more).
const streamInterval = time.Second

// MarkdownLimit is the most markdown_text one stream call takes, in
// characters.
const MarkdownLimit = 12000

// streams reports whether a preview in t is Slack's native stream: the app
// is an assistant, and t is a thread (a stream replies to the person's
// request, in its thread; a reply outside a thread would leave its first
// bubble in a thread and the rest beside it).
func (c *Client) streams(t message.Thread) bool { return c.Assistant && t.Thread != "" }

// streamPreview shows text through the native stream: chat.startStream the
// first time, in the thread, then chat.appendStream of what text adds to
// what the stream shows (p.Streamed). A text that does not extend it (an
// attempt that took the preview over knows nothing of what it shows; the
// stream may have been closed by Slack) stops the stream and rewrites the
// message with chat.update: the preview goes on as an updated message.
func (c *Client) streamPreview(ctx context.Context, p message.Preview, text string) (message.Preview, error) {
	if err := platform.CheckThread(c.TeamID, p.Thread); err != nil {
		return p, fmt.Errorf("slack chat.startStream: %w", err)
	}
	if p.MessageID == "" {
		start := SlackStartStream{Channel: p.Thread.Chat, ThreadTS: p.Thread.Thread, MarkdownText: c.markdown(text)}
		if !strings.HasPrefix(p.Thread.Chat, "D") {
			// Slack asks a stream in a channel to name who it is for.
			start.RecipientUserID, start.RecipientTeamID = p.Recipient, p.Thread.Account
		}
		r, err := c.call(ctx, "/chat.startStream", start)
		if err != nil {
			return p, fmt.Errorf("slack chat.startStream: %w", err)
		}
		if r.TS == "" {
			return p, fmt.Errorf("slack chat.startStream: %w", &message.SendError{Class: message.FailUnknown, Reason: "answer has no ts"})
		}
		p.MessageID, p.Streamed = r.TS, text
		return p, nil
	}
	if p.Streamed != "" && strings.HasPrefix(text, p.Streamed) {
		more := text[len(p.Streamed):]
		if more == "" {
			return p, nil
		}
		_, err := c.call(ctx, "/chat.appendStream", SlackAppendStream{Channel: p.Thread.Chat, TS: p.MessageID, MarkdownText: c.markdown(more)})
		if err == nil {
			p.Streamed = text
			return p, nil
		}
		if !stopped(err) {
			return p, fmt.Errorf("slack chat.appendStream: %w", err)
		}
	}
	if err := c.stopStream(ctx, p); err != nil {
		return p, err
	}
	p.Streamed = ""
	return p, c.Edit(ctx, p.Thread, p.MessageID, message.Text(text))
}

// stopStream ends p's stream (chat.stopStream): its message becomes an
// ordinary one. A stream that is no longer streaming is stopped.
func (c *Client) stopStream(ctx context.Context, p message.Preview) error {
	_, err := c.call(ctx, "/chat.stopStream", SlackStopStream{Channel: p.Thread.Chat, TS: p.MessageID})
	if err != nil && !stopped(err) {
		return fmt.Errorf("slack chat.stopStream: %w", err)
	}
	return nil
}

// stopped reports Slack's answer that a message is not streaming (any
// more): message_not_in_streaming_state.
func stopped(err error) bool {
	var se *message.SendError
	return errors.As(err, &se) && se.Class == message.FailConflict
}

// FinalizePreview makes the preview the reply's first bubble ct: a native
// stream is stopped, then, stream or not, the message is updated to the
// bubble (chat.update), so that it reads exactly as a bubble sent fresh
// would. Done again, it changes nothing.
func (c *Client) FinalizePreview(ctx context.Context, p message.Preview, ct message.Content) error {
	if c.streams(p.Thread) {
		if err := c.stopStream(ctx, p); err != nil {
			return err
		}
	}
	return c.Edit(ctx, p.Thread, p.MessageID, ct)
}

// NativeStatus: an assistant's thread shows a status line of its own.
func (c *Client) NativeStatus(t message.Thread) bool { return c.streams(t) }

// PreviewStatus shows a stream's status line ("searching flights…") as
// the thread's status; "" clears it.
func (c *Client) PreviewStatus(ctx context.Context, t message.Thread, status string) error {
	return c.setStatus(ctx, t, status)
}

func (c *Client) setStatus(ctx context.Context, t message.Thread, status string) error {
	if !c.streams(t) {
		return nil
	}
	if err := platform.CheckThread(c.TeamID, t); err != nil {
		return fmt.Errorf("slack assistant.threads.setStatus: %w", err)
	}
	if _, err := c.call(ctx, "/assistant.threads.setStatus", SlackSetStatus{ChannelID: t.Chat, ThreadTS: t.Thread, Status: status}); err != nil {
		return fmt.Errorf("slack assistant.threads.setStatus: %w", err)
	}
	return nil
}

// markdownInert escapes what markdown_text would render: every ASCII
// punctuation character gets a backslash (CommonMark's escapes), then & < >
// become entities, so that no mention, link or formatting the agent writes
// comes alive; the text reads as written.
func markdownInert(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r < 0x80 && r > ' ' && strings.ContainsRune("!\"#$%'()*+,-./:;=?@[\\]^_`{|}~", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markdown is text as a stream call sends it: inert unless TrustMarkup, cut
// to MarkdownLimit.
func (c *Client) markdown(text string) string {
	if !c.TrustMarkup {
		text = markdownInert(text)
	}
	return platform.Fit(text, MarkdownLimit, message.CountRunes)
}
