package faketelegram

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"unicode/utf16"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/message"
)

// CaptionLimit is the most a media message's caption holds, in UTF-16
// code units.
const CaptionLimit = 1024

// maxUpload bounds what the fake reads of a multipart upload (the Bot
// API's 50 MB).
const maxUpload = 50 << 20

// mediaFields are the media methods the fake serves and their file's field.
var mediaFields = map[string]string{
	"sendPhoto": "photo", "sendDocument": "document", "sendAudio": "audio", "sendVoice": "voice", "sendVideo": "video",
}

// Recorded media arguments: a delivered file's method, and its source: the
// URL Telegram was given, or the uploaded bytes' SHA-256, size, name and
// type (multipart).
const (
	ArgMethod   = "_method"
	ArgURL      = "_url"
	ArgSHA256   = fakeapi.ArgSHA256
	ArgSize     = fakeapi.ArgSize
	ArgFileName = fakeapi.ArgFileName
	ArgFileType = fakeapi.ArgFileType
)

// sendMedia serves sendPhoto, sendDocument, sendAudio, sendVoice and
// sendVideo, by URL (JSON or form) or by upload (multipart/form-data). It
// records the file as a delivery whose Text is its caption and whose Args
// hold the method and the file's source (Arg…).
func (a *API) sendMedia(w http.ResponseWriter, r *http.Request, method string) {
	field := mediaFields[method]
	args := map[string]json.RawMessage{}
	var upload []byte
	var name, typ string
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		if err := r.ParseMultipartForm(maxUpload); err != nil {
			fail(w, http.StatusBadRequest, "Bad Request: can't parse multipart form", nil)
			return
		}
		for k := range r.MultipartForm.Value {
			b, _ := json.Marshal(r.FormValue(k))
			args[k] = b
		}
		if f, h, err := r.FormFile(field); err == nil {
			upload, _ = io.ReadAll(io.LimitReader(f, maxUpload+1))
			_ = f.Close()
			name, typ = h.Filename, h.Header.Get("Content-Type")
		}
	} else {
		var ok bool
		if args, ok = fakeapi.Args(r); !ok {
			fail(w, http.StatusBadRequest, "Bad Request: can't parse JSON object", nil)
			return
		}
	}
	chat := fakeapi.Str(args, "chat_id")
	a.Send(w, fakeapi.Send{
		Platform: message.Telegram,
		Chat:     chat,
		Fail:     failWith,
		Accept: func(w http.ResponseWriter) (fakeapi.Delivery, bool) {
			caption := fakeapi.Str(args, "caption")
			url := fakeapi.Str(args, field)
			var refusal string
			switch {
			case chatError(chat) != "":
				refusal = chatError(chat)
			case upload == nil && url == "":
				refusal = "Bad Request: there is no " + field + " in the request"
			case upload == nil && !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://"):
				refusal = "Bad Request: wrong remote file identifier specified"
			case len(upload) > maxUpload:
				refusal = "Request Entity Too Large"
			case len(utf16.Encode([]rune(caption))) > CaptionLimit:
				refusal = "Bad Request: message caption is too long"
			}
			if refusal != "" {
				fail(w, http.StatusBadRequest, refusal, nil)
				return fakeapi.Delivery{}, false
			}
			rec := map[string]json.RawMessage{}
			for k, v := range args {
				rec[k] = v
			}
			set := func(k, v string) { b, _ := json.Marshal(v); rec[k] = b }
			set(ArgMethod, method)
			if upload != nil {
				fakeapi.RecordFile(rec, upload, name, typ)
			} else {
				set(ArgURL, url)
			}
			var reply struct {
				MessageID json.Number `json:"message_id"`
			}
			if raw := fakeapi.Str(args, "reply_parameters"); raw != "" {
				_ = json.Unmarshal([]byte(raw), &reply)
			}
			return fakeapi.Delivery{Chat: chat, Thread: fakeapi.Str(args, "message_thread_id"), Text: caption, ReplyTo: reply.MessageID.String(), Args: rec}, true
		},
		Answer: a.answer,
	})
}
