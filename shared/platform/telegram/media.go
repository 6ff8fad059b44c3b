package telegram

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path"
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
				return message.Receipt{}, &message.SendError{Class: message.FailInvalidPayload,
					Reason: "voice_not_audio: a voice bubble must be audio (OGG/Opus, MP3 or M4A for a voice note), got " + cmp.Or(got.MIME, "unknown")}
			}
		}
	} else {
		fields[field] = f.URL
	}
	var sent TelegramMessage
	if err := c.callForm(ctx, method, fields, field, fileName(f), file, &sent); err != nil {
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

// fileName is the name an upload goes by: the agent's, else the kind's.
func fileName(f platform.MediaFile) string {
	if f.Name != "" {
		return f.Name
	}
	if f.URL != "" && !f.Upload {
		if b := path.Base(strings.SplitN(f.URL, "?", 2)[0]); b != "" && b != "/" && b != "." {
			return b
		}
	}
	return string(f.Kind)
}

// callForm calls method with fields as multipart form data, and file's
// bytes as field when file is set.
func (c *Client) callForm(ctx context.Context, method string, fields map[string]string, field, name string, file *platform.Fetched, result any) error {
	api := platform.API{Name: "Bot API", BaseURL: c.BaseURL, DefaultBaseURL: DefaultBaseURL, Token: c.Token, HTTP: c.HTTP}
	if c.Token == "" {
		return &message.SendError{Class: message.FailAuth, Reason: "no bot token configured"}
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			return &message.SendError{Class: message.FailInvalidPayload, Reason: "form does not encode", Err: err}
		}
	}
	if file != nil {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, field, name))
		h.Set("Content-Type", cmp.Or(file.MIME, "application/octet-stream"))
		part, err := w.CreatePart(h)
		if err == nil {
			_, err = part.Write(file.Bytes)
		}
		if err != nil {
			return &message.SendError{Class: message.FailInvalidPayload, Reason: "form does not encode", Err: err}
		}
	}
	if err := w.Close(); err != nil {
		return &message.SendError{Class: message.FailInvalidPayload, Reason: "form does not encode", Err: err}
	}
	base := strings.TrimRight(cmp.Or(c.BaseURL, DefaultBaseURL), "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/bot"+c.Token+"/"+method, &body)
	if err != nil {
		// err quotes the URL, and with it the token: dropped.
		return &message.SendError{Class: message.FailAuth, Reason: "the Bot API URL does not parse with this token"}
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := platform.Do(ctx, cmp.Or(c.HTTP, http.DefaultClient), req)
	if err != nil {
		return err
	}
	return decodeResult(api, resp, result)
}
