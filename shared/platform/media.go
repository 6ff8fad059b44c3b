package platform

import (
	"cmp"
	"context"
	"errors"
	"mime"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/parleyhq/parley/shared/message"
)

// MediaSender is a sender that sends files natively (a media unit). Where
// a sender lacks it, or MediaLimit says 0 for a kind, delivery sends the
// file as a link in text instead.
type MediaSender interface {
	// MediaLimit is the most bytes the platform takes of a file of kind k;
	// 0 when it has no native message for the kind.
	MediaLimit(k message.MediaKind) int64
	// SendMedia sends f into m.Thread (m.Content.Media is the unit's
	// media). The receipt holds every message the send created: the file,
	// and its caption where that is a message of its own. Failures are
	// classified like Send's; a failure after one of those messages was
	// created is FailUnknown, so the platform's unknown-outcome policy
	// decides about a resend. A file it will not send natively after all
	// is ErrNotNative, with nothing sent.
	SendMedia(ctx context.Context, m message.Outgoing, f MediaFile) (message.Receipt, error)
}

// ErrNotNative is SendMedia's answer, before anything is sent, for a file
// the platform takes natively by its kind and size but not as it is (LINE:
// an audio without its duration; Teams: a picture of a type it does not
// show; WhatsApp: any file outside the 24-hour window). Delivery then sends
// it as a link, as for a kind MediaLimit refuses: its caption split as a
// bubble is, then the link.
var ErrNotNative = errors.New("the platform cannot send this file natively")

// MediaFile is a media unit's file as a sender sees it.
type MediaFile struct {
	Kind    message.MediaKind
	Name    string
	Caption string
	// URL is where the platform may fetch the file itself: the agent's
	// URL, or, for an upload, a presigned GET of Parley's copy (which
	// expires, and is never shown to people by a native send).
	URL string
	// Upload is true when the file is an agent's upload (POST /media).
	Upload bool
	// Size and MIME are known for an upload (0 and "" for a URL).
	Size int64
	MIME string
	// DurationMS and PreviewURL are what the agent stated of the file
	// (message.Media), 0 and "" when it did not.
	DurationMS int64
	PreviewURL string
	// Fetch reads the bytes, at most max: an upload from the bucket, an
	// agent's URL through shared/urlfetch (HTTPS, public addresses only,
	// bounded). Its errors are *message.SendError values saying why.
	Fetch func(ctx context.Context, max int64) (Fetched, error)
	// Split cuts a caption too long for the file's own message into the
	// platform's text messages, as a bubble is split (delivery sets it:
	// shared/split with the platform's capabilities, which adapters do
	// not import, to keep the registry free of outside modules).
	Split func(caption string) []string
}

// CaptionTexts is the caption as text messages of its own: Split's parts,
// or the caption whole where Split is not set.
func (f MediaFile) CaptionTexts() []string {
	if f.Split == nil {
		return []string{f.Caption}
	}
	return f.Split(f.Caption)
}

// LinkText is f as one text message where a platform cannot send it
// natively: its caption, then its link, or the link alone.
func (f MediaFile) LinkText() string {
	if f.Caption == "" {
		return f.URL
	}
	return f.Caption + "\n" + f.URL
}

// FileOf is m's file as far as the bubble says it: its kind, name,
// caption, the agent's own URL (none for an upload) and what the agent
// stated of it. The caller adds where an upload is and how to read it.
func FileOf(m message.Media) MediaFile {
	return MediaFile{Kind: m.Kind, Name: m.Name, Caption: m.Caption, URL: m.URL, DurationMS: m.DurationMS, PreviewURL: m.PreviewURL}
}

// Fetched is a file's bytes and their type, sniffed.
type Fetched struct {
	Bytes []byte
	MIME  string
}

// FileName is the name a file's bytes go by: the agent's name, else the
// last segment of the agent's URL, else the kind ("image"); with an
// extension for typ (the bytes' type) added when it has none, since
// platforms tell a picture or a clip to show inline by its name
// (Discord), and a person saves it by it.
func (f MediaFile) FileName(typ string) string {
	name := f.Name
	if u, err := url.Parse(f.URL); name == "" && err == nil && !f.Upload {
		if b := path.Base(u.Path); b != "" && b != "/" && b != "." {
			name = b
		}
	}
	name = cmp.Or(name, string(f.Kind))
	if path.Ext(name) == "" {
		name += extension(typ)
	}
	return name
}

// extension is the usual file extension of a media type, "" for one
// Parley does not know.
func extension(typ string) string {
	switch typ {
	case "image/jpeg":
		return ".jpg"
	case "audio/mpeg", "audio/mp3":
		return ".mp3"
	case "audio/mp4", "audio/x-m4a", "audio/m4a":
		return ".m4a"
	case "audio/ogg", "application/ogg", "audio/opus":
		return ".ogg"
	case "text/plain":
		return ".txt"
	}
	if exts, err := mime.ExtensionsByType(typ); err == nil && len(exts) > 0 {
		return exts[0]
	}
	return ""
}

// CheckVoice refuses a voice bubble whose bytes, of type typ, are not
// audio (voice_not_audio, invalid_payload): a platform without a voice
// message of its own sends a voice note as an audio file, and Parley
// converts nothing. Any other kind passes.
func CheckVoice(k message.MediaKind, typ string) error {
	if k != message.MediaVoice || strings.HasPrefix(typ, "audio/") || typ == "application/ogg" {
		return nil
	}
	return &message.SendError{Class: message.FailInvalidPayload,
		Reason: "voice_not_audio: a voice bubble must be audio (OGG/Opus, MP3 or M4A for a voice note), got " + cmp.Or(typ, "unknown")}
}

// FollowingTexts are the text messages that follow a unit's first message
// (a file whose caption did not fit it, a caption before its link): m with
// each of texts, each under its own idempotency key, m's with "#1", "#2"…
// from start, so that no two messages of one unit share a nonce, a retry
// key or a reconcile tag. The caller drops what only the first message
// may carry (a single-use reply token).
func FollowingTexts(m message.Outgoing, texts []string, start int) []message.Outgoing {
	out := make([]message.Outgoing, 0, len(texts))
	for i, t := range texts {
		p := m
		p.Content = message.Text(t)
		p.IdempotencyKey = m.IdempotencyKey + "#" + strconv.Itoa(start+i)
		out = append(out, p)
	}
	return out
}

// Bytes reads f's bytes for a platform that takes files as bytes (Slack,
// Discord), at most max: Fetch, then CheckVoice. It returns them with the
// name the file goes by (FileName of their type).
func (f MediaFile) Bytes(ctx context.Context, max int64) (Fetched, string, error) {
	got, err := f.Fetch(ctx, max)
	if err != nil {
		return Fetched{}, "", err
	}
	if err := CheckVoice(f.Kind, got.MIME); err != nil {
		return Fetched{}, "", err
	}
	return got, f.FileName(got.MIME), nil
}
