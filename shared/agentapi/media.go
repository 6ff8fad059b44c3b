package agentapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/media"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// maxMediaRequest bounds POST /media's body: it describes a file, it does
// not carry one.
const maxMediaRequest = 4 << 10

// MediaHandler serves POST /media: an agent about to send a file it holds
// asks for a place to put it, signed as /reply is, and gets a presigned PUT
// of the media bucket and the upload_id its envelope names the file by.
type MediaHandler struct {
	Verifier standardwebhooks.Verifier
	// Objects is the media bucket; nil: media is off (503 media_off).
	Objects media.UploadObjects
	Config  media.Config
	Now     func() time.Time
	Log     *slog.Logger
}

func (h *MediaHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := logOr(h.Log).With("endpoint", "media")
	if !postTo(w, r, log, "") {
		return
	}
	now := nowFrom(h.Now)
	body, _, ok := signedBody(w, r, log, h.Verifier, maxMediaRequest, "the body describes the file: {\"type\": …, \"size\": …}; the bytes go to the upload URL", now)
	if !ok {
		return
	}
	req, err := ParseUploadRequest(body)
	if err != nil {
		refuse(w, log, http.StatusBadRequest, "malformed", err.Error())
		return
	}
	if h.Objects == nil || !h.Config.On() {
		refuse(w, log, http.StatusServiceUnavailable, "media_off", "this deployment has no media bucket (PARLEY_MEDIA_BUCKET)")
		return
	}
	up, err := media.NewUpload(r.Context(), h.Objects, h.Config, req, now)
	switch {
	case errors.Is(err, media.ErrUploadRefused):
		refuse(w, log, http.StatusUnprocessableEntity, "upload_refused", err.Error())
		return
	case err != nil:
		log.Error("presign an upload failed", "error", err)
		refuse(w, log, http.StatusServiceUnavailable, "unavailable", "try again")
		return
	}
	log.Info("upload presigned", "outcome", "accepted", "upload_id", up.ID, "bytes", req.Size)
	respond(w, http.StatusCreated, up)
}

// ParseUploadRequest reads a POST /media body (docs/schema/parley.media.v1.json):
// exactly type and size, a media type without parameters, a size of at
// least one byte. Whether the deployment takes that type and size is
// media.NewUpload's to say.
func ParseUploadRequest(body []byte) (media.UploadRequest, error) {
	var req struct {
		Type *string `json:"type"`
		Size *int64  `json:"size"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		return media.UploadRequest{}, errors.New(`want {"type": "image/png", "size": 12345} and nothing else`)
	}
	switch {
	case req.Type == nil || !mediaType(*req.Type):
		return media.UploadRequest{}, errors.New("type: want a media type without parameters, in lower case, like image/png")
	case req.Size == nil || *req.Size < 1:
		return media.UploadRequest{}, errors.New("size: want the file's length in bytes, at least 1")
	}
	return media.UploadRequest{Type: *req.Type, Size: *req.Size}, nil
}

// mediaType reports whether s is type/subtype of the schema's pattern.
func mediaType(s string) bool {
	t, sub, ok := strings.Cut(s, "/")
	return ok && token(t) && token(sub)
}

func token(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("!#$&^_.+-", rune(c))) {
			return false
		}
	}
	return true
}
