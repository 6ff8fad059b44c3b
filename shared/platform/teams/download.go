package teams

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/urlfetch"
)

var _ platform.Downloader = (*Client)(nil)

// maxAttachments bounds the files taken from one activity.
const maxAttachments = 10

// attachments describes a person's files: inline images (a contentUrl on
// the connector) and files uploaded to a personal chat (a SharePoint
// downloadUrl), each by the URL its bytes are at (PlatformID). The HTML
// rendering of the message Teams attaches, cards, and files in channels
// (references to SharePoint the bot's token cannot read) are left out.
func attachments(in []TeamsAttachment) []message.Attachment {
	var out []message.Attachment
	for _, t := range in {
		if len(out) == maxAttachments {
			break
		}
		typ := strings.ToLower(t.ContentType)
		switch {
		case strings.HasPrefix(typ, "image/") && t.ContentURL != "":
			if strings.Contains(typ, "*") {
				typ = "" // Teams declares a pasted image image/*: the bytes say which
			}
			out = append(out, message.Attachment{Index: len(out), Kind: message.AttachImage, MIME: typ, Name: t.Name, PlatformID: t.ContentURL})
		case typ == TeamsFileDownloadInfo:
			var f TeamsFileDownload
			raw, _ := json.Marshal(t.Content)
			if json.Unmarshal(raw, &f) != nil || f.DownloadURL == "" {
				continue
			}
			mt := mime.TypeByExtension("." + strings.ToLower(cmp.Or(f.FileType, strings.TrimPrefix(path.Ext(t.Name), "."))))
			mt, _, _ = strings.Cut(mt, ";")
			out = append(out, message.Attachment{Index: len(out), Kind: message.KindOfType(mt), MIME: mt, Name: t.Name, PlatformID: f.DownloadURL})
		}
	}
	return out
}

// Download fetches a person's file, at most max bytes (a.PlatformID is the
// URL of its bytes). An inline image on the connector — the configured
// ServiceURL's host, or Teams' own (smba.trafficmanager.net) — is fetched
// with the app token, which goes nowhere else. Any other URL (a file
// upload's SharePoint downloadUrl, which needs no token) comes from outside
// and is fetched through shared/urlfetch, without a credential: HTTPS,
// public addresses only, checked after DNS and on every redirect. A file
// gone, expired or refused is platform.ErrFileUnavailable.
func (c *Client) Download(ctx context.Context, a message.Attachment, max int64) ([]byte, error) {
	if a.Size > max {
		return nil, platform.ErrFileTooLarge
	}
	u, err := url.Parse(a.PlatformID)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: not a file's URL", platform.ErrFileUnavailable)
	}
	if c.connector(u) {
		if c.tokens == nil {
			return nil, fmt.Errorf("%w: no app password configured", platform.ErrFileUnavailable)
		}
		token, err := c.tokens.get(ctx)
		if err != nil {
			return nil, fmt.Errorf("teams attachment: %w", err)
		}
		api := platform.API{Name: "connector", HTTP: cmp.Or(c.HTTP, defaultHTTP)}
		b, err := api.GetURL(ctx, u.String(), http.Header{"Authorization": {"Bearer " + token}}, max)
		if err != nil && !errors.Is(err, platform.ErrFileTooLarge) && !errors.Is(err, platform.ErrFileUnavailable) {
			return nil, fmt.Errorf("teams attachment: %w", err)
		}
		return b, err
	}
	f, err := c.fetcher(max)
	if err != nil {
		return nil, err
	}
	body, err := f.Get(ctx, u.String())
	var fe *urlfetch.Error
	switch {
	case err == nil:
		return body.Bytes, nil
	case !errors.As(err, &fe):
		return nil, fmt.Errorf("teams file download: %w", err)
	case fe.Reason == urlfetch.ReasonTooLarge:
		return nil, platform.ErrFileTooLarge
	case fe.Reason == urlfetch.ReasonTimeout || fe.Reason == urlfetch.ReasonNetwork || (fe.Reason == urlfetch.ReasonStatus && fe.Status >= 500):
		return nil, fmt.Errorf("teams file download: %w", err)
	}
	// Refused by a rule, a 4xx, or cut short.
	return nil, fmt.Errorf("%w: %w", platform.ErrFileUnavailable, err)
}

// connector reports whether the app token may go to u: over HTTPS to the
// configured connector's host or Teams' default one, or to the configured
// connector's own scheme and host (a fake).
func (c *Client) connector(u *url.URL) bool {
	def, _ := url.Parse(DefaultServiceURL)
	if u.Scheme == "https" && strings.EqualFold(u.Host, def.Host) {
		return true
	}
	base, err := url.Parse(c.ServiceURL)
	return c.ServiceURL != "" && err == nil && u.Scheme == base.Scheme && strings.EqualFold(u.Host, base.Host)
}

// fetcher is the urlfetch.Fetcher for files of at most max bytes, under
// Fetch's rules; one per bound, built once.
func (c *Client) fetcher(max int64) (*urlfetch.Fetcher, error) {
	if f, ok := c.fetchers.Load(max); ok {
		return f.(*urlfetch.Fetcher), nil
	}
	o := c.Fetch
	o.MaxBytes = max
	f, err := urlfetch.New(o)
	if err != nil {
		return nil, fmt.Errorf("teams file download: %w", err)
	}
	got, _ := c.fetchers.LoadOrStore(max, f)
	return got.(*urlfetch.Fetcher), nil
}
