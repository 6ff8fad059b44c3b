package slack

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"time"

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

// Reconcile looks an unknown send up in its thread before it is resent:
// every message Parley posts carries its unit's key in its metadata, so a
// message tagged with m's key in the thread's latest ReconcileWindow
// messages is m, posted after all. Not found, the unit was not posted (or
// is older than the window: the unit's age bounds how late a resend may
// come). Errors are classified like a send's.
func (c *Client) Reconcile(ctx context.Context, m message.Outgoing) (message.Receipt, bool, error) {
	if _, err := platform.TextFor(c.TeamID, message.Outgoing{Thread: m.Thread, Content: message.Text("-")}); err != nil {
		return message.Receipt{}, false, err
	}
	method, args := "/conversations.history", map[string]any{"channel": m.Thread.Chat, "limit": ReconcileWindow, "include_all_metadata": true}
	if m.Thread.Thread != "" {
		method, args["ts"] = "/conversations.replies", m.Thread.Thread
	}
	api := platform.API{Name: "Web API", BaseURL: c.BaseURL, DefaultBaseURL: DefaultBaseURL, Token: c.Token, HTTP: c.HTTP}
	header := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "Authorization": {"Bearer " + c.Token}}
	resp, err := api.PostJSON(ctx, method, header, args)
	if err != nil {
		return message.Receipt{}, false, fmt.Errorf("slack %s: %w", method[1:], err)
	}
	if resp.Status != http.StatusOK {
		return message.Receipt{}, false, platform.StatusFailure(resp.Status, resp.Header)
	}
	var h SlackHistory
	if err := api.Decode(resp, &h); err != nil {
		return message.Receipt{}, false, err
	}
	if !h.OK {
		se := &message.SendError{Class: errorClass(h.Error), Status: resp.Status, Reason: platform.Reason(cmp.Or(h.Error, "ok:false without error"))}
		if se.Class == message.FailRateLimit {
			se.RetryAfter = platform.RetryAfter(resp.Header, time.Now())
		}
		return message.Receipt{}, false, se
	}
	for _, msg := range h.Messages {
		if md := msg.Metadata; md != nil && md.EventType == MetadataEventType && md.EventPayload.Unit == m.IdempotencyKey && m.IdempotencyKey != "" {
			return message.Receipt{MessageIDs: []string{msg.TS}}, true, nil
		}
	}
	return message.Receipt{}, false, nil
}
