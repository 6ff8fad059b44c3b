package envelope

import (
	"strings"

	"github.com/parleyhq/parley/shared/envelope/internal/jsonscan"
	"github.com/parleyhq/parley/shared/message"
)

// ReasonBadMedia: a bubble's "media" is invalid: an unknown kind, neither
// or both of url and upload_id, a url or preview_url that is not https, a
// bad name, a duration_ms out of range, or a member its kind does not take.
const ReasonBadMedia Reason = "bad_media"

// validateMedia reads a bubble's "media" object.
func validateMedia(n *jsonscan.Node, path string) (*message.Media, *ParseError) {
	if n.Kind != jsonscan.Object {
		return nil, wrongType(n, path, jsonscan.Object)
	}
	if pe := allowKeys(n, path, "kind", "url", "upload_id", "name", "caption", "duration_ms", "preview_url"); pe != nil {
		return nil, pe
	}
	kind, pe := requiredString(n, path, "kind")
	if pe != nil {
		return nil, pe
	}
	if !message.MediaKind(kind.Str).Known() {
		return nil, perr(ReasonBadMedia, path+".kind", kind.Off, "kind must be image, file, audio, voice or video")
	}
	m := &message.Media{Kind: message.MediaKind(kind.Str)}
	u, up := n.Get("url"), n.Get("upload_id")
	switch {
	case u == nil && up == nil:
		return nil, perr(ReasonBadMedia, path, n.Off, "media needs one of url or upload_id")
	case u != nil && up != nil:
		return nil, perr(ReasonBadMedia, path+".upload_id", up.Off, "media takes url or upload_id, not both")
	case u != nil:
		if u.Kind != jsonscan.String {
			return nil, wrongType(u, path+".url", jsonscan.String)
		}
		if detail := message.CheckMediaURL(u.Str); detail != "" {
			return nil, perr(ReasonBadMedia, path+".url", u.Off, detail)
		}
		m.URL = u.Str
	default:
		if up.Kind != jsonscan.String {
			return nil, wrongType(up, path+".upload_id", jsonscan.String)
		}
		if !message.ValidUploadID(up.Str) {
			return nil, perr(ReasonBadMedia, path+".upload_id", up.Off, "upload_id is not one POST /media issued (32 lowercase hex digits)")
		}
		m.UploadID = up.Str
	}
	if nm := n.Get("name"); nm != nil {
		if nm.Kind != jsonscan.String {
			return nil, wrongType(nm, path+".name", jsonscan.String)
		}
		if detail := message.CheckMediaName(nm.Str); detail != "" {
			return nil, perr(ReasonBadMedia, path+".name", nm.Off, detail)
		}
		m.Name = nm.Str
	}
	if c := n.Get("caption"); c != nil {
		if c.Kind != jsonscan.String {
			return nil, wrongType(c, path+".caption", jsonscan.String)
		}
		if strings.TrimSpace(c.Str) == "" {
			return nil, perr(ReasonBlankText, path+".caption", c.Off, "caption is empty or only whitespace")
		}
		if pe := visible(c, path+".caption"); pe != nil {
			return nil, pe
		}
		m.Caption = c.Str
	}
	if pe := mediaExtras(n, path, m); pe != nil {
		return nil, pe
	}
	return m, nil
}

// mediaExtras reads the optional members a platform may need to send a
// file natively (LINE: an audio's duration, a video's preview image), each
// only on a kind that has it.
func mediaExtras(n *jsonscan.Node, path string, m *message.Media) *ParseError {
	if d := n.Get("duration_ms"); d != nil {
		if d.Kind != jsonscan.Number {
			return wrongType(d, path+".duration_ms", jsonscan.Number)
		}
		if !m.Kind.TakesDuration() {
			return perr(ReasonBadMedia, path+".duration_ms", d.Off, "duration_ms is for audio, voice and video")
		}
		v, ok := intValue(d)
		if !ok || v < 1 || v > message.MaxMediaDurationMS {
			return perr(ReasonBadMedia, path+".duration_ms", d.Off, "duration_ms must be an integer from 1 to 86400000")
		}
		m.DurationMS = v
	}
	if p := n.Get("preview_url"); p != nil {
		if p.Kind != jsonscan.String {
			return wrongType(p, path+".preview_url", jsonscan.String)
		}
		if !m.Kind.TakesPreview() {
			return perr(ReasonBadMedia, path+".preview_url", p.Off, "preview_url is for image and video")
		}
		if detail := message.CheckMediaURL(p.Str); detail != "" {
			return perr(ReasonBadMedia, path+".preview_url", p.Off, "preview_"+detail)
		}
		m.PreviewURL = p.Str
	}
	return nil
}

// shown is what people read of a bubble: its text, or its media's caption.
func (b Bubble) shown() string {
	if b.Media != nil {
		return b.Media.Caption
	}
	return b.Text
}

// Content is what the unit carries into the send intent: its text, or its
// file with the caption.
func (u Unit) Content() message.Content {
	if u.Media != nil {
		m := *u.Media
		return message.Content{Media: &m}
	}
	return message.Text(u.Text)
}
