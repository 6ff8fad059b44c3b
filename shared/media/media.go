package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/resources"
)

// Config is the media settings.
type Config struct {
	// Bucket is where files are stored (PARLEY_MEDIA_BUCKET, set by the
	// stack). Empty: media is off, and attachments reach the agent
	// described, with reason media_off.
	Bucket string
	// MaxBytes is the largest file stored (PARLEY_MEDIA_MAX_BYTES);
	// default 20 MiB, the most Telegram's Bot API serves.
	MaxBytes int64
	// Types are the media types stored (PARLEY_MEDIA_TYPES, comma
	// separated; "image/*" takes a family). Default DefaultTypes.
	Types []string
	// URLTTL is how long a presigned URL is valid (PARLEY_MEDIA_URL_TTL);
	// default 1h, at most 12h.
	URLTTL time.Duration
	// PathStyle addresses the bucket in the URL's path, not its host
	// (PARLEY_MEDIA_PATH_STYLE, true or false; default false): for an
	// S3-compatible endpoint without per-bucket host names.
	PathStyle bool
}

// DefaultTypes are the media types stored unless PARLEY_MEDIA_TYPES says
// otherwise: pictures, sound, video, PDFs and plain text, Telegram's
// animated stickers.
var DefaultTypes = []string{"image/*", "audio/*", "video/*", "application/pdf", "text/plain", "application/ogg", "application/x-tgsticker"}

// MaxURLTTL bounds Config.URLTTL: the longest a role session's signature
// lasts.
const MaxURLTTL = 12 * time.Hour

// On reports whether media is stored.
func (c Config) On() bool { return c.Bucket != "" }

// WithDefaults fills what is unset.
func (c Config) WithDefaults() Config {
	if c.MaxBytes <= 0 {
		c.MaxBytes = 20 << 20
	}
	if len(c.Types) == 0 {
		c.Types = DefaultTypes
	}
	if c.URLTTL <= 0 {
		c.URLTTL = time.Hour
	}
	return c
}

// Validate refuses settings that cannot work, naming the variable.
func (c Config) Validate() error {
	var errs []error
	if c.URLTTL > MaxURLTTL {
		errs = append(errs, fmt.Errorf("PARLEY_MEDIA_URL_TTL: at most %s, got %s", MaxURLTTL, c.URLTTL))
	}
	for _, t := range c.Types {
		if _, _, err := mime.ParseMediaType(strings.Replace(t, "/*", "/any", 1)); err != nil || !strings.Contains(t, "/") {
			errs = append(errs, fmt.Errorf("PARLEY_MEDIA_TYPES: %q is not a media type like image/png or image/*", t))
		}
	}
	return errors.Join(errs...)
}

// ParseTypes reads PARLEY_MEDIA_TYPES' value.
func ParseTypes(v string) []string {
	var out []string
	for t := range strings.SplitSeq(v, ",") {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// allowed reports whether typ is one of c.Types.
func (c Config) allowed(typ string) bool {
	typ = base(typ)
	for _, t := range c.Types {
		if t == typ || (strings.HasSuffix(t, "/*") && strings.HasPrefix(typ, strings.TrimSuffix(t, "*"))) {
			return true
		}
	}
	return false
}

// base is a media type without its parameters, lower case.
func base(typ string) string {
	if t, _, err := mime.ParseMediaType(typ); err == nil {
		return t
	}
	return strings.ToLower(strings.TrimSpace(typ))
}

// Object is what the object store keeps of a staged file.
type Object struct {
	MIME   string
	Size   int64
	SHA256 string
}

// Objects is the object store as staging uses it (S3Objects).
type Objects interface {
	// Head answers the object at key, and false when there is none.
	Head(ctx context.Context, key string) (Object, bool, error)
	Put(ctx context.Context, key string, body []byte, o Object) error
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
}

// Stager stages an event's attachments (the package doc).
type Stager struct {
	Objects Objects
	Config  Config
	Now     func() time.Time
	Log     *slog.Logger
}

// Stage answers ev's attachments, each with a URL or a reason. d downloads
// from ev's platform; nil when its adapter cannot. An error is the object
// store's: retry the turn.
func (s *Stager) Stage(ctx context.Context, ev message.Event, d platform.Downloader) ([]message.Attachment, error) {
	out := make([]message.Attachment, len(ev.Attachments))
	for i, a := range ev.Attachments {
		notServed := a.Reason == message.ReasonNotServed
		a.Index, a.URL, a.URLExpires, a.SHA256, a.Reason = i, "", nil, "", ""
		if notServed {
			// The adapter said at the webhook that nothing serves its bytes:
			// no download is tried, whatever the deployment's settings.
			a.Reason = message.ReasonNotServed
			out[i] = a
			continue
		}
		if s == nil || !s.Config.On() || s.Objects == nil {
			a.Reason = message.ReasonMediaOff
			out[i] = a
			continue
		}
		staged, err := s.stage(ctx, ObjectKey(ev, i), a, d)
		if err != nil {
			return nil, fmt.Errorf("stage attachment %d: %w", i, err)
		}
		out[i] = staged
	}
	return out, nil
}

// ObjectKey is where attachment i of ev is stored: its event's key hashed
// (the key holds platform ids), and its index.
func ObjectKey(ev message.Event, i int) string {
	sum := sha256.Sum256([]byte(ev.Key()))
	return resources.MediaPrefix + hex.EncodeToString(sum[:20]) + "/" + strconv.Itoa(i)
}

func (s *Stager) stage(ctx context.Context, key string, a message.Attachment, d platform.Downloader) (message.Attachment, error) {
	cfg := s.Config.WithDefaults()
	log := s.log().With("attachment", a.Index, "kind", string(a.Kind))
	refuse := func(r message.AttachmentReason) (message.Attachment, error) {
		log.Info("attachment not stored", "reason", string(r))
		a.Reason = r
		return a, nil
	}
	switch {
	case a.Size > cfg.MaxBytes:
		return refuse(message.ReasonTooLarge)
	case a.MIME != "" && !cfg.allowed(a.MIME):
		return refuse(message.ReasonTypeRefused)
	}
	obj, found, err := s.Objects.Head(ctx, key)
	if err != nil {
		return a, fmt.Errorf("head %s: %w", key, err)
	}
	if !found {
		if d == nil {
			return refuse(message.ReasonNoDownload)
		}
		body, err := d.Download(ctx, a, cfg.MaxBytes)
		switch {
		case errors.Is(err, platform.ErrFileTooLarge):
			return refuse(message.ReasonTooLarge)
		case err != nil:
			log.Warn("attachment download failed", "error", err)
			return refuse(message.ReasonUnavailable)
		case int64(len(body)) > cfg.MaxBytes:
			return refuse(message.ReasonTooLarge)
		}
		typ, ok := sniff(a.MIME, body)
		switch {
		case !ok:
			return refuse(message.ReasonTypeMismatch)
		case !cfg.allowed(typ):
			return refuse(message.ReasonTypeRefused)
		}
		sum := sha256.Sum256(body)
		obj = Object{MIME: typ, Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}
		if err := s.Objects.Put(ctx, key, body, obj); err != nil {
			return a, fmt.Errorf("put %s: %w", key, err)
		}
	}
	url, err := s.Objects.PresignGet(ctx, key, cfg.URLTTL)
	if err != nil {
		return a, fmt.Errorf("presign %s: %w", key, err)
	}
	until := s.now().Add(cfg.URLTTL).UTC().Truncate(time.Second)
	a.URL, a.URLExpires, a.MIME, a.Size, a.SHA256 = url, &until, obj.MIME, obj.Size, obj.SHA256
	log.Info("attachment staged", "bytes", obj.Size, "stored", !found)
	return a, nil
}

// sniff is the type the bytes are, and false when they contradict the
// declared type. Where the content says little (octet-stream, text), the
// declared type stands.
func sniff(declared string, body []byte) (string, bool) {
	declared = base(declared)
	got := base(http.DetectContentType(body))
	switch {
	case got == "application/octet-stream" || got == "text/plain":
		if declared == "" {
			return got, true
		}
		return declared, true
	case declared == "" || got == declared:
		return got, true
	case family(got) == family(declared):
		return declared, true // image/jpeg declared image/jpg, video/webm as audio/webm
	}
	// What sniffing names by container rather than content.
	switch got {
	case "application/ogg":
		return declared, family(declared) == "audio" || family(declared) == "video"
	case "application/x-gzip":
		return declared, declared == "application/x-tgsticker"
	case "video/webm", "video/mp4":
		// An audio-only WebM or MP4 (M4A: LINE's voice notes, WhatsApp's
		// audio/mp4) sniffs as video.
		return declared, family(declared) == "audio"
	}
	return got, false
}

func family(typ string) string {
	f, _, _ := strings.Cut(typ, "/")
	return f
}

func (s *Stager) now() time.Time {
	if s != nil && s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Stager) log() *slog.Logger {
	if s != nil && s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
