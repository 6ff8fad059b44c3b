package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// filesHost is where Slack serves files' bytes (url_private_download).
const filesHost = "files.slack.com"

// Download fetches a file a person shared (a.PlatformID is its id):
// files.info for its url_private_download, then the file, with the bot
// token (scope files:read), at most max bytes. The token goes only to
// files.slack.com, or to the API's own host where BaseURL points elsewhere
// (a fake). A file Slack will not serve (gone, not shared with the bot) is
// platform.ErrFileUnavailable.
func (c *Client) Download(ctx context.Context, a message.Attachment, max int64) ([]byte, error) {
	if a.Size > max {
		return nil, platform.ErrFileTooLarge
	}
	api := c.webAPI()
	auth := http.Header{"Authorization": {"Bearer " + c.Token}}
	body, err := api.GetFile(ctx, "/files.info?file="+url.QueryEscape(a.PlatformID), auth, platform.MaxResponseBytes)
	if err != nil {
		return nil, fmt.Errorf("slack files.info: %w", err)
	}
	var info SlackFileInfo
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("slack files.info: the answer does not decode: %w", err)
	}
	if !info.OK {
		if errorClass(info.Error) == message.FailRateLimit {
			return nil, fmt.Errorf("slack files.info: %s", info.Error)
		}
		return nil, fmt.Errorf("%w: slack files.info: %s", platform.ErrFileUnavailable, platform.Reason(info.Error))
	}
	if info.File.Size > max {
		return nil, platform.ErrFileTooLarge
	}
	u, err := url.Parse(info.File.URLPrivateDownload)
	if err != nil || !c.filesURL(u) {
		return nil, fmt.Errorf("%w: files.info gave no download URL on %s", platform.ErrFileUnavailable, filesHost)
	}
	b, err := api.GetURL(ctx, u.String(), auth, max)
	if err != nil && !errors.Is(err, platform.ErrFileTooLarge) && !errors.Is(err, platform.ErrFileUnavailable) {
		return nil, fmt.Errorf("slack file download: %w", err)
	}
	return b, err
}

// filesURL reports whether the bot token may go to u: Slack's files host
// over HTTPS, or the configured API's own scheme and host.
func (c *Client) filesURL(u *url.URL) bool {
	if u.Scheme == "https" && strings.EqualFold(u.Host, filesHost) {
		return true
	}
	base, err := url.Parse(c.BaseURL)
	return c.BaseURL != "" && err == nil && u.Scheme == base.Scheme && strings.EqualFold(u.Host, base.Host)
}
