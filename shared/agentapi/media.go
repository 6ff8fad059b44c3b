package agentapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
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
	log := h.Log
	if log == nil {
		log = slog.Default()
	}
	log = log.With("endpoint", "media")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(w, log, http.StatusMethodNotAllowed, "method", "use POST")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxMediaRequest+1))
	switch {
	case err != nil:
		refuse(w, log, http.StatusBadRequest, "unreadable", "the body could not be read")
		return
	case len(body) > maxMediaRequest:
		refuse(w, log, http.StatusRequestEntityTooLarge, "too_large", "the body describes the file: {\"type\": …, \"size\": …}; the bytes go to the upload URL")
		return
	}
	now := time.Now()
	if h.Now != nil {
		now = h.Now()
	}
	if _, err := h.Verifier.Verify(r.Header, body, now); err != nil {
		refuse(w, log, http.StatusUnauthorized, "unauthorized", "signature: "+err.Error())
		return
	}
	var req media.UploadRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		refuse(w, log, http.StatusBadRequest, "malformed", `want {"type": "image/png", "size": 12345}`)
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
