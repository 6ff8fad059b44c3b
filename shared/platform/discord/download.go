package discord

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// DefaultCDNBaseURL is where Discord serves attachments' bytes.
const DefaultCDNBaseURL = "https://cdn.discordapp.com"

// maxAttachments is the most files one message carries on Discord; more in
// a payload are left out rather than stored.
const maxAttachments = 10

// cdnHosts are the hosts Discord names an attachment's bytes by: url is on
// the CDN, proxy_url on the media proxy; both serve the same paths.
var cdnHosts = []string{"cdn.discordapp.com", "media.discordapp.net"}

// optionFile is the attachment a file option names, from the command's
// resolved objects.
func optionFile(o DiscordInteractionOption, r *DiscordResolved) (DiscordAttachment, error) {
	var id string
	if o.Type != DiscordOptionAttachment || json.Unmarshal(o.Value, &id) != nil || id == "" {
		return DiscordAttachment{}, fmt.Errorf("%w: /%s's %s option is not an attachment id", platform.ErrMalformed, CommandAsk, OptionFile)
	}
	if r != nil {
		if a, ok := r.Attachments[id]; ok {
			return a, nil
		}
	}
	return DiscordAttachment{}, fmt.Errorf("%w: /%s's %s option without its resolved attachment", platform.ErrMalformed, CommandAsk, OptionFile)
}

// attachments describes a message's files (flags are the message's: a
// voice message's one file is a voice note). PlatformID is the file's CDN
// URL, which Download fetches by: Discord names a file by it, and it is
// what the signed interaction says the bytes are.
func attachments(files []DiscordAttachment, flags int) []message.Attachment {
	var out []message.Attachment
	for _, f := range files[:min(len(files), maxAttachments)] {
		out = append(out, message.Attachment{
			Index: len(out), Kind: fileKind(f, flags), MIME: f.ContentType, Size: max(f.Size, 0), Name: f.Filename,
			PlatformID: f.URL, Width: max(f.Width, 0), Height: max(f.Height, 0), Duration: seconds(f.DurationSecs),
		})
	}
	return out
}

// fileKind is what a Discord file is, by its type; a recording is a voice
// note when its message is a voice message, or it has a duration (only
// voice messages' files do).
func fileKind(f DiscordAttachment, flags int) message.AttachmentKind {
	kind := message.KindOfType(f.ContentType)
	if kind == message.AttachAudio && (flags&DiscordMessageFlagVoice != 0 || f.DurationSecs > 0) {
		return message.AttachVoice
	}
	return kind
}

// seconds rounds a voice message's duration to whole seconds; 0 for what
// is not a duration.
func seconds(s float64) int {
	if !(s > 0) || s > math.MaxInt32 {
		return 0
	}
	return int(math.Round(s))
}

// Download fetches a file a person attached (a.PlatformID is its CDN URL),
// at most max bytes. Only a URL on Discord's CDN hosts is taken, and only
// its path and query (the CDN's signature): they are fetched below
// CDNBaseURL, so no payload chooses where Parley connects, and no
// credential is sent (Discord's signed CDN URLs need none). An expired or
// deleted file is platform.ErrFileUnavailable.
func (c *Client) Download(ctx context.Context, a message.Attachment, max int64) ([]byte, error) {
	if a.Size > max {
		return nil, platform.ErrFileTooLarge
	}
	target, err := c.cdnURL(a.PlatformID)
	if err != nil {
		return nil, err
	}
	api := platform.API{Name: "Discord CDN", HTTP: c.HTTP}
	b, err := api.GetURL(ctx, target, nil, max)
	if err != nil && !errors.Is(err, platform.ErrFileTooLarge) && !errors.Is(err, platform.ErrFileUnavailable) {
		return nil, fmt.Errorf("discord attachment download: %w", err)
	}
	return b, err
}

// cdnURL is where the attachment at raw is fetched: its path and query
// below CDNBaseURL, for a URL on Discord's CDN naming an attachment.
func (c *Client) cdnURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme != "https" || u.User != nil || u.Port() != "" || !cdnHost(u.Hostname()):
		return "", fmt.Errorf("%w: not a file on Discord's CDN", platform.ErrFileUnavailable)
	case !strings.HasPrefix(u.Path, "/attachments/") && !strings.HasPrefix(u.Path, "/ephemeral-attachments/"),
		path.Clean(u.Path) != u.Path:
		return "", fmt.Errorf("%w: not an attachment's path on Discord's CDN", platform.ErrFileUnavailable)
	}
	root := strings.TrimRight(cmp.Or(c.CDNBaseURL, DefaultCDNBaseURL), "/")
	target := root + u.EscapedPath()
	if u.RawQuery != "" {
		target += "?" + u.RawQuery
	}
	return target, nil
}

func cdnHost(h string) bool {
	for _, c := range cdnHosts {
		if strings.EqualFold(h, c) {
			return true
		}
	}
	return false
}
