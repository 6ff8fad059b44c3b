package slack

import (
	"context"
	"fmt"
	"net/http"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// ReconcileWindow is how many of the thread's latest messages Reconcile
// reads: a unit held unknown is looked up within minutes, while its thread
// holds only the bubbles that followed it.
const ReconcileWindow = 50

// SlackHistory is conversations.history's (and conversations.replies')
// answer, with the messages' metadata (include_all_metadata).
type SlackHistory struct {
	OK       bool                `json:"ok"`
	Error    string              `json:"error,omitempty"`
	Messages []SlackMessageEvent `json:"messages"`
}

// Reconcile looks an unknown send up in its thread before it is resent
// (a file, which carries no metadata, is platform.ErrNotReconcilable):
// every message Parley posts carries its unit's key in its metadata, so a
// message tagged with m's key in the thread's latest ReconcileWindow
// messages is m, posted after all. Not found, the unit was not posted (or
// is older than the window: the unit's age bounds how late a resend may
// come). Errors are classified like a send's.
func (c *Client) Reconcile(ctx context.Context, m message.Outgoing) (message.Receipt, bool, error) {
	if m.Content.Media != nil {
		// A file message carries no metadata (files.completeUploadExternal
		// takes none), so "not found" would prove nothing.
		return message.Receipt{}, false, platform.ErrNotReconcilable
	}
	if _, err := platform.TextFor(c.TeamID, message.Outgoing{Thread: m.Thread, Content: message.Text("-")}); err != nil {
		return message.Receipt{}, false, err
	}
	method, args := "/conversations.history", map[string]any{"channel": m.Thread.Chat, "limit": ReconcileWindow, "include_all_metadata": true}
	if m.Thread.Thread != "" {
		method, args["ts"] = "/conversations.replies", m.Thread.Thread
	}
	api := c.webAPI()
	header := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "Authorization": {"Bearer " + c.Token}}
	resp, err := api.PostJSON(ctx, method, header, args)
	if err != nil {
		return message.Receipt{}, false, fmt.Errorf("slack %s: %w", method[1:], err)
	}
	var h SlackHistory
	if err := webAnswer(api, resp, &h); err != nil {
		return message.Receipt{}, false, err
	}
	for _, msg := range h.Messages {
		if md := msg.Metadata; md != nil && md.EventType == MetadataEventType && md.EventPayload.Unit == m.IdempotencyKey && m.IdempotencyKey != "" {
			return message.Receipt{MessageIDs: []string{msg.TS}}, true, nil
		}
	}
	return message.Receipt{}, false, nil
}
