package media

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/urlfetch"
)

// UploadObjects is the object store as agents' uploads use it (S3Objects):
// the reply function presigns PUTs, delivery heads, reads and presigns GETs.
type UploadObjects interface {
	Head(ctx context.Context, key string) (Object, bool, error)
	Get(ctx context.Context, key string, max int64) ([]byte, error)
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
	PresignPut(ctx context.Context, key, mime string, size int64, ttl time.Duration) (string, error)
}

// UploadTTL is how long an upload's presigned PUT is valid.
const UploadTTL = 15 * time.Minute

// UploadKey is where the upload with id is stored.
func UploadKey(id string) string { return resources.MediaOutPrefix + id }

// Upload is an upload's place: where to PUT the bytes, and the id an
// envelope names them by.
type Upload struct {
	ID        string    `json:"upload_id"`
	URL       string    `json:"url"`
	Method    string    `json:"method"`
	Headers   Headers   `json:"headers"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Headers are the headers the PUT must carry, as signed.
type Headers struct {
	ContentType string `json:"Content-Type"`
}

// UploadRequest is what an agent asks to upload.
type UploadRequest struct {
	// Type is the file's media type (image/png): one PARLEY_MEDIA_TYPES
	// allows.
	Type string `json:"type"`
	// Size is its length in bytes, 1 to PARLEY_MEDIA_MAX_BYTES.
	Size int64 `json:"size"`
}

// ErrUploadRefused is an upload request Parley will not presign; the error
// says why, in words safe to show the agent.
var ErrUploadRefused = errors.New("upload refused")

// NewUpload checks r against c and presigns its PUT under a fresh id.
func NewUpload(ctx context.Context, o UploadObjects, c Config, r UploadRequest, now time.Time) (Upload, error) {
	c = c.WithDefaults()
	switch {
	case r.Type == "" || base(r.Type) != r.Type:
		return Upload{}, fmt.Errorf("%w: type must be a media type without parameters, like image/png", ErrUploadRefused)
	case !c.allowed(r.Type):
		return Upload{}, fmt.Errorf("%w: type %s is not among PARLEY_MEDIA_TYPES", ErrUploadRefused, r.Type)
	case r.Size < 1 || r.Size > c.MaxBytes:
		return Upload{}, fmt.Errorf("%w: size must be 1 to %d bytes", ErrUploadRefused, c.MaxBytes)
	}
	var b [message.UploadIDLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Upload{}, fmt.Errorf("upload id: %w", err)
	}
	id := hex.EncodeToString(b[:])
	url, err := o.PresignPut(ctx, UploadKey(id), r.Type, r.Size, UploadTTL)
	if err != nil {
		return Upload{}, fmt.Errorf("presign the upload: %w", err)
	}
	return Upload{ID: id, URL: url, Method: http.MethodPut, Headers: Headers{ContentType: r.Type},
		ExpiresAt: now.Add(UploadTTL).UTC().Truncate(time.Second)}, nil
}

// Outbound finds media units' files for delivery (delivery.Files): an
// agent's URL as it is, fetched through Fetcher only when a platform needs
// the bytes; an upload from the bucket.
type Outbound struct {
	// Objects is the bucket; nil: uploads fail (media_off).
	Objects UploadObjects
	Config  Config
	// Fetcher gets agents' URLs under shared/urlfetch's rules.
	Fetcher *urlfetch.Fetcher
}

// Open answers m's file. Its errors are *message.SendError values.
func (o *Outbound) Open(ctx context.Context, m message.Media) (platform.MediaFile, error) {
	f := platform.FileOf(m)
	if m.URL != "" {
		f.Fetch = func(ctx context.Context, max int64) (platform.Fetched, error) { return o.fetchURL(ctx, m.URL, max) }
		return f, nil
	}
	if o.Objects == nil || !o.Config.On() {
		return f, &message.SendError{Class: message.FailInvalidPayload, Reason: "media_off: an upload_id needs the media bucket (PARLEY_MEDIA_BUCKET)"}
	}
	cfg := o.Config.WithDefaults()
	key := UploadKey(m.UploadID)
	obj, found, err := o.Objects.Head(ctx, key)
	switch {
	case err != nil:
		return f, &message.SendError{Class: message.FailTransient, Reason: "media bucket: head the upload", Err: err}
	case !found:
		return f, &message.SendError{Class: message.FailInvalidPayload, Reason: "upload_not_found: no upload with this upload_id (never PUT, or expired)"}
	case obj.Size > cfg.MaxBytes:
		return f, &message.SendError{Class: message.FailInvalidPayload, Reason: "too_large: the upload is over PARLEY_MEDIA_MAX_BYTES"}
	}
	url, err := o.Objects.PresignGet(ctx, key, cfg.URLTTL)
	if err != nil {
		return f, &message.SendError{Class: message.FailTransient, Reason: "media bucket: presign the upload", Err: err}
	}
	f.URL, f.Upload, f.Size, f.MIME = url, true, obj.Size, base(obj.MIME)
	f.Fetch = func(ctx context.Context, max int64) (platform.Fetched, error) {
		if obj.Size > max {
			return platform.Fetched{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "too_large: the upload is over what the platform takes"}
		}
		b, err := o.Objects.Get(ctx, key, max)
		if err != nil {
			return platform.Fetched{}, &message.SendError{Class: message.FailTransient, Reason: "media bucket: read the upload", Err: err}
		}
		typ, _ := sniff(obj.MIME, b)
		return platform.Fetched{Bytes: b, MIME: typ}, nil
	}
	return f, nil
}

// fetchURL gets an agent's URL through the fetcher and says why it could
// not, as the unit's failure: a rule broken or a refusal is permanent; a
// timeout, the network or a server error may pass.
func (o *Outbound) fetchURL(ctx context.Context, url string, max int64) (platform.Fetched, error) {
	if o.Fetcher == nil {
		return platform.Fetched{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "media url: Parley fetches no URLs here"}
	}
	body, err := o.Fetcher.Get(ctx, url)
	var fe *urlfetch.Error
	switch {
	case errors.As(err, &fe):
		class := message.FailInvalidPayload
		var cert *tls.CertificateVerificationError
		switch {
		case errors.As(err, &cert):
			// A certificate that does not verify will not tomorrow.
		case fe.Reason == urlfetch.ReasonTimeout, fe.Reason == urlfetch.ReasonNetwork,
			fe.Reason == urlfetch.ReasonStatus && (fe.Status >= 500 || fe.Status == http.StatusTooManyRequests):
			class = message.FailTransient
		}
		return platform.Fetched{}, &message.SendError{Class: class, Reason: "media url refused: " + string(fe.Reason), Err: err}
	case err != nil:
		return platform.Fetched{}, &message.SendError{Class: message.FailTransient, Reason: "media url: fetch failed", Err: err}
	case int64(len(body.Bytes)) > max:
		return platform.Fetched{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "media url refused: too_large for the platform"}
	}
	typ, _ := sniff(body.ContentType, body.Bytes)
	return platform.Fetched{Bytes: body.Bytes, MIME: typ}, nil
}
