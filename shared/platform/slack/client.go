package slack

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

const (
	// DefaultBaseURL is the Web API root.
	DefaultBaseURL = "https://slack.com/api"
	// BaseURLEnv names the environment variable a function's config reads
	// into Client.BaseURL (the local runner points it at a fake API).
	BaseURLEnv = "SLACK_API_BASE_URL"
	// TextLimit is the most text Parley puts in one message, in runes.
	// Slack truncates at 40,000 characters but advises 4,000.
	TextLimit = 4000
)

// Client is the send half of the Slack adapter: it posts messages with
// chat.postMessage. Its zero value with a Token is ready to use, and it is
// safe for concurrent use.
type Client struct {
	// Token is the bot token (xoxb-…) with the chat:write scope. Required.
	// It travels in the Authorization header, never in a URL or an error.
	Token string
	// TeamID, when set, is the token's workspace (SLACK_TEAM_ID): a thread
	// of any other workspace is refused without a call.
	TeamID string
	// BaseURL is the Web API root. Defaults to DefaultBaseURL.
	BaseURL string
	// HTTP sends the requests. Defaults to a client with a 30-second
	// timeout; deadlines normally come from ctx.
	HTTP *http.Client
	// TrustMarkup sends the text as written, so Slack renders the agent's
	// markup: mentions (<!channel>, <@U…>), links (<url|label>) and
	// formatting. Defaults to false: & < > are escaped and nothing the agent
	// (or a sender whose words it repeats) writes can ping a channel or
	// disguise a link (SLACK_TRUST_AGENT_MARKUP).
	TrustMarkup bool
	// Assistant says the app is an AI app in Slack (Agents & AI Apps on,
	// the assistant:write scope; SLACK_ASSISTANT): in a thread, a live
	// reply streams natively (chat.startStream…) and the turn's status
	// shows with assistant.threads.setStatus. Defaults to false: previews
	// are a message updated with chat.update, and there is no status.
	Assistant bool
}

// inert escapes the three characters Slack parses as control sequences, as
// Slack documents: &amp; &lt; &gt;. What remains renders as written.
var inert = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// Send posts m with chat.postMessage into m.Thread.Chat, inside the thread
// m.Thread.Thread when set. Slack has no quote-reply, so m.ReplyTo is not
// sent: the thread is the reply. The receipt holds the new message's ts.
// Failures are *message.SendError:
//
//	HTTP 429                         rate_limit, RetryAfter from the Retry-After header
//	HTTP 5xx                         unknown: Slack's edge answered after the
//	                                 request was written (ADR 0003)
//	ok:false                         by Slack's error code (see classes below);
//	                                 internal_error and fatal_error are unknown:
//	                                 Slack documents that part of the operation
//	                                 may have succeeded
//	no answer after the request left unknown (see platform.Do)
//
// An ok:false code Parley does not know is transient: Slack answered, so the
// message was definitely not posted and a retry cannot duplicate it, and the
// retries are bounded, so a permanent newcomer still ends as failed, while a
// temporary one (a workspace migration, an outage code) heals by itself. The
// code is kept as the reason for the operator.
func (c *Client) Send(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	rc, err := c.post(ctx, m)
	if err != nil {
		return message.Receipt{}, fmt.Errorf("slack chat.postMessage: %w", err)
	}
	return rc, nil
}

func (c *Client) post(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	return c.postWith(ctx, m, nil)
}

// metadataOf tags a message with its unit's key and its origin.
func metadataOf(m message.Outgoing) *SlackMetadata {
	if m.IdempotencyKey == "" && m.Origin == "" {
		return nil
	}
	return &SlackMetadata{EventType: MetadataEventType, EventPayload: SlackMetadataPayload{Unit: m.IdempotencyKey, Origin: m.Origin}}
}

// postWith posts m's text with chat.postMessage, with blocks when set.
func (c *Client) postWith(ctx context.Context, m message.Outgoing, blocks []SlackBlock) (message.Receipt, error) {
	text, err := platform.TextFor(c.TeamID, m)
	if err != nil {
		return message.Receipt{}, err
	}
	msg := SlackPostMessage{Channel: m.Thread.Chat, Text: text, ThreadTS: m.Thread.Thread, Blocks: blocks, Metadata: metadataOf(m)}
	if !c.TrustMarkup {
		off := false
		msg.Text, msg.LinkNames, msg.Mrkdwn = inert.Replace(text), &off, &off
	}
	r, err := c.call(ctx, "/chat.postMessage", msg)
	if err != nil {
		return message.Receipt{}, err
	}
	if r.TS == "" {
		return message.Receipt{}, &message.SendError{Class: message.FailUnknown, Status: http.StatusOK, Reason: "answer has no ts"}
	}
	return message.Receipt{MessageIDs: []string{r.TS}}, nil
}

// errorClass maps chat.postMessage's error codes (Slack's documented,
// machine-readable names) to failure classes. Unknown codes are transient:
// see Send.
func errorClass(code string) message.FailureClass {
	if c, ok := errorClasses[code]; ok {
		return c
	}
	return message.FailTransient
}

var errorClasses = map[string]message.FailureClass{
	// The token is wrong, revoked, or of the wrong kind.
	"not_authed":             message.FailAuth,
	"invalid_auth":           message.FailAuth,
	"account_inactive":       message.FailAuth,
	"token_revoked":          message.FailAuth,
	"token_expired":          message.FailAuth,
	"not_allowed_token_type": message.FailAuth,
	"missing_scope":          message.FailAuth,
	"invalid_token":          message.FailAuth,

	// The bot may not post there.
	"no_permission":                            message.FailPermission,
	"not_in_channel":                           message.FailPermission,
	"is_archived":                              message.FailPermission,
	"restricted_action":                        message.FailPermission,
	"restricted_action_read_only_channel":      message.FailPermission,
	"restricted_action_thread_only_channel":    message.FailPermission,
	"restricted_action_non_threadable_channel": message.FailPermission,
	"restricted_action_thread_locked":          message.FailPermission,
	"cannot_reply_to_message":                  message.FailPermission,
	"messages_tab_disabled":                    message.FailPermission,
	"ekm_access_denied":                        message.FailPermission,
	"team_access_not_granted":                  message.FailPermission,
	"access_denied":                            message.FailPermission,
	"enterprise_is_restricted":                 message.FailPermission,
	"org_login_required":                       message.FailPermission,
	"two_factor_setup_required":                message.FailPermission,
	"accesslimited":                            message.FailPermission,
	"slack_connect_file_link_sharing_blocked":  message.FailPermission,
	"slack_connect_canvas_sharing_blocked":     message.FailPermission,

	// The channel, thread or message is gone.
	"channel_not_found":           message.FailNotFound,
	"thread_not_found":            message.FailNotFound,
	"message_not_found":           message.FailNotFound,
	"no_item_specified":           message.FailNotFound,
	"duplicate_channel_not_found": message.FailNotFound,
	"duplicate_message_not_found": message.FailNotFound,

	// The request itself is wrong.
	"msg_too_long":                      message.FailInvalidPayload,
	"invalid_name":                      message.FailInvalidPayload,
	"too_many_reactions":                message.FailInvalidPayload,
	"too_many_emoji":                    message.FailInvalidPayload,
	"msg_blocks_too_long":               message.FailInvalidPayload,
	"no_text":                           message.FailInvalidPayload,
	"invalid_blocks":                    message.FailInvalidPayload,
	"invalid_blocks_format":             message.FailInvalidPayload,
	"invalid_attachments":               message.FailInvalidPayload,
	"invalid_metadata_format":           message.FailInvalidPayload,
	"invalid_metadata_schema":           message.FailInvalidPayload,
	"metadata_too_large":                message.FailInvalidPayload,
	"too_many_attachments":              message.FailInvalidPayload,
	"attachment_payload_limit_exceeded": message.FailInvalidPayload,
	"as_user_not_supported":             message.FailInvalidPayload,
	"invalid_arg_name":                  message.FailInvalidPayload,
	"invalid_arguments":                 message.FailInvalidPayload,
	"invalid_array_arg":                 message.FailInvalidPayload,
	"invalid_charset":                   message.FailInvalidPayload,
	"invalid_form_data":                 message.FailInvalidPayload,
	"invalid_post_type":                 message.FailInvalidPayload,
	"missing_post_type":                 message.FailInvalidPayload,
	"invalid_json":                      message.FailInvalidPayload,
	"json_not_object":                   message.FailInvalidPayload,
	"deprecated_endpoint":               message.FailInvalidPayload,
	"method_deprecated":                 message.FailInvalidPayload,
	"upgrade_required":                  message.FailInvalidPayload,

	// A streaming message that is no longer streaming (stopped, or closed
	// by Slack after a while): chat.appendStream and chat.stopStream.
	"message_not_in_streaming_state": message.FailConflict,

	// Files the bot sends (files.getUploadURLExternal,
	// files.completeUploadExternal).
	"file_uploads_disabled":               message.FailPermission,
	"file_uploads_except_images_disabled": message.FailPermission,
	"file_upload_size_restricted":         message.FailInvalidPayload,
	"file_type_not_allowed":               message.FailInvalidPayload,
	"storage_limit_reached":               message.FailInvalidPayload,
	"missing_argument":                    message.FailInvalidPayload,

	// Slow down.
	"ratelimited":            message.FailRateLimit,
	"rate_limited":           message.FailRateLimit,
	"message_limit_exceeded": message.FailRateLimit,

	// Slack's side. Slack documents that part of the operation may have
	// succeeded before these two: the post may be there.
	"internal_error": message.FailUnknown,
	"fatal_error":    message.FailUnknown,
	// Slack's side, documented as not processed: try again.
	"service_unavailable": message.FailTransient,
	"request_timeout":     message.FailTransient,
	"team_added_to_org":   message.FailTransient,
}
