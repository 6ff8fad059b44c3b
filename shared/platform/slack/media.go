package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// MaxUpload is the largest file Parley sends to Slack. Slack takes files up
// to 1 GB, but delivery holds a file's bytes in memory (a 128 MB function)
// and sends it within one send's timeout, so the bound is Telegram's, and
// PARLEY_MEDIA_MAX_BYTES (20 MiB by default) is lower still
// (docs/adr/0026-slack-discord-media.md).
const MaxUpload = 50 << 20

var _ platform.MediaSender = (*Client)(nil)

// MediaLimit: Slack takes every kind as a file (it has no voice message
// for a bot: a voice note is an audio file).
func (c *Client) MediaLimit(message.MediaKind) int64 { return MaxUpload }

// SendMedia uploads f's bytes (an agent's URL is read through
// shared/urlfetch, an upload from the bucket) and shares the file into
// m.Thread, in its thread, with Slack's external upload:
//
//  1. files.getUploadURLExternal (filename, length) names an upload URL
//     and the file's id;
//  2. the bytes are POSTed to that URL (files.slack.com, with no token);
//  3. files.completeUploadExternal shares the file into channel_id and
//     thread_ts, the caption its initial_comment, escaped as Send escapes
//     text.
//
// Nothing is shown before step 3: Slack discards an upload that is never
// completed. So a failure of step 1 or 2, whatever it is, is transient (a
// retry starts again from step 1, and no copy can appear), and only step
// 3's outcome can be unknown. A caption over TextLimit follows the file as
// text messages (split as a bubble is), and the receipt holds them too.
// The receipt holds the file message's ts where Slack's answer names it
// (the file's shares; Slack may share it a moment later, and say
// nothing), then the file's id. Scope files:write.
func (c *Client) SendMedia(ctx context.Context, m message.Outgoing, f platform.MediaFile) (message.Receipt, error) {
	rc, err := c.sendMedia(ctx, m, f)
	if err != nil {
		return rc, fmt.Errorf("slack file upload: %w", err)
	}
	return rc, nil
}

func (c *Client) sendMedia(ctx context.Context, m message.Outgoing, f platform.MediaFile) (message.Receipt, error) {
	if err := platform.CheckThread(c.TeamID, m.Thread); err != nil {
		return message.Receipt{}, err
	}
	got, name, err := f.Bytes(ctx, MaxUpload)
	if err != nil {
		return message.Receipt{}, err
	}
	var up SlackUploadURL
	args := url.Values{"filename": {name}, "length": {strconv.Itoa(len(got.Bytes))}}
	if err := c.callValues(ctx, "/files.getUploadURLExternal", args, &up); err != nil {
		return message.Receipt{}, unshared(err)
	}
	u, err := url.Parse(up.UploadURL)
	if err != nil || up.FileID == "" || !c.filesURL(u) {
		return message.Receipt{}, &message.SendError{Class: message.FailTransient, Reason: "files.getUploadURLExternal named no upload URL on " + filesHost}
	}
	api := platform.API{Name: "Web API", HTTP: c.HTTP}
	resp, err := api.PostBytes(ctx, u.String(), "application/octet-stream", got.Bytes)
	switch {
	case err != nil:
		return message.Receipt{}, unshared(err)
	case resp.Status == http.StatusRequestEntityTooLarge:
		return message.Receipt{}, &message.SendError{Class: message.FailInvalidPayload, Status: resp.Status, Reason: "the upload URL refused the file as too large"}
	case resp.Status != http.StatusOK:
		// The upload URL is signed for this one file, and nothing is
		// shared yet: a URL refused (expired, never issued) or a server's
		// failure is a retry's, with a fresh URL, never an auth problem of
		// the bot's token. A 429 keeps its Retry-After.
		se := platform.StatusFailure(resp.Status, resp.Header)
		if se.Class != message.FailRateLimit {
			se.Class = message.FailTransient
		}
		return message.Receipt{}, se
	}

	title, _ := json.Marshal([]SlackCompleteFile{{ID: up.FileID, Title: name}})
	args = url.Values{"files": {string(title)}, "channel_id": {m.Thread.Chat}}
	if m.Thread.Thread != "" {
		args.Set("thread_ts", m.Thread.Thread)
	}
	long := utf8.RuneCountInString(f.Caption) > TextLimit
	if f.Caption != "" && !long {
		args.Set("initial_comment", c.text(f.Caption))
	}
	var done SlackCompleteUpload
	if err := c.callValues(ctx, "/files.completeUploadExternal", args, &done); err != nil {
		return message.Receipt{}, err
	}
	rc := message.Receipt{MessageIDs: append(sharedTS(done, up.FileID, m.Thread.Chat), up.FileID)}
	if !long {
		return rc, nil
	}
	// The caption, too long for a message's text, follows the file.
	for _, p := range platform.FollowingTexts(m, f.CaptionTexts(), 1) {
		r, err := c.post(ctx, p)
		if err != nil {
			return rc, &message.SendError{Class: message.FailUnknown, Reason: "the file was sent, its caption not: " + err.Error()}
		}
		rc.MessageIDs = append(rc.MessageIDs, r.MessageIDs...)
	}
	return rc, nil
}

// text is s as a message's text goes: escaped (inert) unless TrustMarkup.
func (c *Client) text(s string) string {
	if c.TrustMarkup {
		return s
	}
	return inert.Replace(s)
}

// sharedTS is the ts of the message that shares file id in channel, as
// files.completeUploadExternal's answer names it: none when the answer has
// no shares yet.
func sharedTS(done SlackCompleteUpload, id, channel string) []string {
	for _, f := range done.Files {
		if f.ID != id {
			continue
		}
		for _, shares := range []map[string][]SlackShare{f.Shares.Public, f.Shares.Private} {
			for _, s := range shares[channel] {
				if s.TS != "" {
					return []string{s.TS}
				}
			}
		}
	}
	return nil
}

// unshared is the failure of a step before files.completeUploadExternal:
// Slack shows nothing before that step, so an outcome that would be
// unknown is transient, and a retry uploads again.
func unshared(err error) error {
	var se *message.SendError
	if errors.As(err, &se) && se.Class == message.FailUnknown {
		again := *se
		again.Class = message.FailTransient
		return &again
	}
	return err
}

// callValues posts args form-encoded (every Web API method takes them; the
// files methods' JSON support is documented later than their forms) and
// reads the answer into v like chat.postMessage's (webAnswer).
func (c *Client) callValues(ctx context.Context, method string, args url.Values, v answer) error {
	api := c.webAPI()
	resp, err := api.PostValues(ctx, method, http.Header{"Authorization": {"Bearer " + c.Token}}, args)
	if err != nil {
		return err
	}
	return webAnswer(api, resp, v)
}
