package telegram

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Bot API bounds on a bot's files: uploads of photos up to 10 MB, of
// anything else up to 50 MB; a caption up to 1024 UTF-16 code units.
const (
	MaxPhotoUpload = 10 << 20
	MaxFileUpload  = 50 << 20
	CaptionLimit   = 1024
)

var _ platform.MediaSender = (*Client)(nil)

// MediaLimit: Telegram sends every kind natively.
func (c *Client) MediaLimit(k message.MediaKind) int64 {
	if k == message.MediaImage {
		return MaxPhotoUpload
	}
	return MaxFileUpload
}

// mediaMethods are the Bot API method, and its file's field, per kind.
var mediaMethods = map[message.MediaKind][2]string{
	message.MediaImage: {"sendPhoto", "photo"},
	message.MediaFile:  {"sendDocument", "document"},
	message.MediaAudio: {"sendAudio", "audio"},
	message.MediaVoice: {"sendVoice", "voice"},
	message.MediaVideo: {"sendVideo", "video"},
}

// SendMedia sends f with sendPhoto, sendDocument, sendAudio, sendVoice or
// sendVideo. An agent's URL goes as the URL (Telegram fetches it; Parley
// does not); an upload goes as bytes read from the bucket (multipart). A
// voice note goes as bytes always: Parley reads it (an agent's URL through
// shared/urlfetch) to check its format, since sendVoice plays only OGG/Opus,
// MP3 and M4A. Any other audio goes as sendAudio; anything that is not audio
// is refused. Parley converts nothing. A caption over 1024 UTF-16 code units
// is a text message after the file; the receipt holds both ids. Failures
// are classified like Send's.
func (c *Client) SendMedia(ctx context.Context, m message.Outgoing, f platform.MediaFile) (message.Receipt, error) {
	rc, err := c.sendMedia(ctx, m, f)
	if err != nil {
		return rc, fmt.Errorf("telegram %s: %w", mediaMethods[f.Kind][0], err)
	}
	return rc, nil
}

func (c *Client) sendMedia(ctx context.Context, m message.Outgoing, f platform.MediaFile) (message.Receipt, error) {
	if err := platform.CheckThread(c.BotID, m.Thread); err != nil {
		return message.Receipt{}, err
	}
	mm, ok := mediaMethods[f.Kind]
	if !ok {
		return message.Receipt{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "unknown media kind " + strconv.Quote(string(f.Kind))}
	}
	method, field := mm[0], mm[1]
	fields := map[string]string{"chat_id": m.Thread.Chat}
	if m.Thread.Thread != "" {
		if _, err := optionalID("message_thread_id", m.Thread.Thread); err != nil {
			return message.Receipt{}, err
		}
		fields["message_thread_id"] = m.Thread.Thread
	}
	if m.ReplyTo != "" {
		id, err := optionalID("reply_parameters.message_id", m.ReplyTo)
		if err != nil {
			return message.Receipt{}, err
		}
		fields["reply_parameters"] = `{"message_id":` + strconv.FormatInt(id, 10) + `,"allow_sending_without_reply":true}`
	}
	long := len(utf16.Encode([]rune(f.Caption))) > CaptionLimit
	if f.Caption != "" && !long {
		fields["caption"] = f.Caption
	}
	var file *platform.Fetched
	if f.Upload || f.Kind == message.MediaVoice {
		got, err := f.Fetch(ctx, c.MediaLimit(f.Kind))
		if err != nil {
			return message.Receipt{}, err
		}
		file = &got
		if f.Kind == message.MediaVoice {
			switch voiceFormat(got.MIME) {
			case "voice":
			case "audio":
				method, field = "sendAudio", "audio"
			default:
				return message.Receipt{}, platform.CheckVoice(f.Kind, got.MIME)
			}
		}
	} else {
		fields[field] = f.URL
	}
	var sent TelegramMessage
	if err := c.callForm(ctx, method, fields, field, f.FileName(""), file, &sent); err != nil {
		return message.Receipt{}, err
	}
	if sent.MessageID == 0 {
		return message.Receipt{}, &message.SendError{Class: message.FailUnknown, Status: http.StatusOK, Reason: "answer has no message_id"}
	}
	rc := message.Receipt{MessageIDs: []string{strconv.FormatInt(sent.MessageID, 10)}}
	if !long {
		return rc, nil
	}
	// The caption, too long for one, follows as a message of its own.
	cm := m
	cm.Content, cm.ReplyTo = message.Text(f.Caption), ""
	more, err := c.send(ctx, cm)
	if err != nil {
		return rc, &message.SendError{Class: message.FailUnknown, Reason: "the file was sent, its caption not: " + err.Error()}
	}
	rc.MessageIDs = append(rc.MessageIDs, more.MessageIDs...)
	return rc, nil
}

// voiceFormat says how a voice bubble of type typ goes: "voice" (a format
// sendVoice plays), "audio" (other audio, sent to be played as a file), or
// "" (not audio at all).
func voiceFormat(typ string) string {
	switch typ {
	case "application/ogg", "audio/ogg", "audio/opus", "audio/mpeg", "audio/mp3", "audio/mp4", "audio/x-m4a", "audio/m4a":
		return "voice"
	}
	if strings.HasPrefix(typ, "audio/") {
		return "audio"
	}
	return ""
}

// callForm calls method with fields as multipart form data, and file's
// bytes as field when file is set.
func (c *Client) callForm(ctx context.Context, method string, fields map[string]string, field, name string, file *platform.Fetched, result any) error {
	api := platform.API{Name: "Bot API", BaseURL: c.BaseURL, DefaultBaseURL: DefaultBaseURL, Token: c.Token, HTTP: c.HTTP}
	var parts []platform.FormPart
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		parts = append(parts, platform.FieldPart(k, fields[k]))
	}
	if file != nil {
		parts = append(parts, platform.FilePart(field, name, *file))
	}
	// The Bot API takes the token in the path.
	resp, err := api.SendForm(ctx, http.MethodPost, "/bot"+c.Token+"/"+method, nil, parts)
	if err != nil {
		return err
	}
	return decodeResult(api, resp, result)
}
