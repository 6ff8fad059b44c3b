package googlechat

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

var _ platform.Downloader = (*Client)(nil)

// maxAttachments bounds the files taken from one message.
const maxAttachments = 10

// maxResourceName bounds an attachment's resource name, which Parley puts
// in a URL's path.
const maxResourceName = 1024

// attachments describes a message's files: one uploaded to Chat by its
// resource name (media.download's), a Drive file by its Drive id with
// message.ReasonNotServed, since the app's token cannot read a person's
// Drive. Anything else (no name to fetch or describe it by) is left out.
func attachments(files []GoogleChatAttachment) []message.Attachment {
	var out []message.Attachment
	for _, f := range files {
		if len(out) == maxAttachments {
			break
		}
		a := message.Attachment{Index: len(out), Kind: message.KindOfType(f.ContentType), MIME: f.ContentType, Name: f.ContentName}
		switch {
		case f.Source == GoogleChatUploadedContent && f.AttachmentDataRef != nil && f.AttachmentDataRef.ResourceName != "":
			a.PlatformID = f.AttachmentDataRef.ResourceName
		case f.Source == GoogleChatDriveFile && f.DriveDataRef != nil && f.DriveDataRef.DriveFileID != "":
			a.PlatformID, a.Reason = f.DriveDataRef.DriveFileID, message.ReasonNotServed
		default:
			continue
		}
		out = append(out, a)
	}
	return out
}

// Download fetches a file uploaded to Chat (a.PlatformID is its resource
// name) with media.download, GET /v1/media/{resourceName}?alt=media on
// the Chat API's root, with the app's token (scope chat.bot), at most max
// bytes. A Drive file, and a file Chat will not serve the app, are
// platform.ErrFileUnavailable.
func (c *Client) Download(ctx context.Context, a message.Attachment, max int64) ([]byte, error) {
	if a.Size > max {
		return nil, platform.ErrFileTooLarge
	}
	path, ok := mediaPath(a.PlatformID)
	if !ok {
		return nil, fmt.Errorf("%w: not a file uploaded to Chat", platform.ErrFileUnavailable)
	}
	if c.sa == nil {
		return nil, fmt.Errorf("%w: no service account configured", platform.ErrFileUnavailable)
	}
	tok, err := c.token(ctx)
	if err != nil {
		return nil, fmt.Errorf("google chat media: %w", err)
	}
	api := platform.API{Name: "Chat API", BaseURL: c.BaseURL, DefaultBaseURL: DefaultBaseURL, HTTP: cmp.Or(c.HTTP, defaultHTTP)}
	b, err := api.GetFile(ctx, path, http.Header{"Authorization": {"Bearer " + tok}}, max)
	if err != nil && !errors.Is(err, platform.ErrFileTooLarge) && !errors.Is(err, platform.ErrFileUnavailable) {
		return nil, fmt.Errorf("google chat media: %w", err)
	}
	return b, err
}

// mediaPath is media.download's path of a resource name: each of its
// segments escaped, and none that is empty, "." or "..".
func mediaPath(resource string) (string, bool) {
	if resource == "" || len(resource) > maxResourceName {
		return "", false
	}
	segs := strings.Split(resource, "/")
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			return "", false
		}
		segs[i] = url.PathEscape(s)
	}
	return "/v1/media/" + strings.Join(segs, "/") + "?alt=media", true
}
