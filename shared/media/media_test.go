package media_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/media"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// files is a platform serving files by id, counting downloads.
type files struct {
	byID  map[string][]byte
	err   error
	calls atomic.Int64
}

func (f *files) Download(_ context.Context, a message.Attachment, max int64) ([]byte, error) {
	f.calls.Add(1)
	if f.err != nil {
		return nil, f.err
	}
	b, ok := f.byID[a.PlatformID]
	switch {
	case !ok:
		return nil, platform.ErrFileUnavailable
	case int64(len(b)) > max:
		return nil, platform.ErrFileTooLarge
	}
	return b, nil
}

var (
	pdf  = []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n%%EOF\n")
	png  = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)
	ogg  = append([]byte("OggS\x00\x02"), make([]byte, 64)...)
	t0   = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	wait = 10 * time.Second
)

func stager(t *testing.T, cfg media.Config) *media.Stager {
	t.Helper()
	env := emulatortest.New(t)
	cfg.Bucket = env.Resources.MediaBucket
	return &media.Stager{Objects: media.NewS3Objects(env.AWS, cfg.Bucket, true), Config: cfg, Now: func() time.Time { return t0 }}
}

func event(atts ...message.Attachment) message.Event {
	return message.Event{Platform: message.Telegram, Account: "7", EventID: "900", Kind: message.KindMessage, Attachments: atts}
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET presigned URL: %d %s", resp.StatusCode, b)
	}
	return b
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestStageStoresEachFileOnceAndHandsOutURLsOfTheExactBytes(t *testing.T) {
	t.Parallel()
	s := stager(t, media.Config{})
	d := &files{byID: map[string][]byte{"doc": pdf, "pic": png, "note": ogg}}
	ev := event(
		message.Attachment{Kind: message.AttachFile, PlatformID: "doc", MIME: "application/pdf", Name: "pass.pdf"},
		message.Attachment{Kind: message.AttachImage, PlatformID: "pic", MIME: "image/png"},
		message.Attachment{Kind: message.AttachVoice, PlatformID: "note", MIME: "audio/ogg", Duration: 4},
	)
	want := [][]byte{pdf, png, ogg}
	for round := range 2 { // the second is a retried turn
		got, err := s.Stage(t.Context(), ev, d)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range got {
			if a.Reason != "" || a.URL == "" || a.Index != i || a.SHA256 != digest(want[i]) || a.Size != int64(len(want[i])) {
				t.Fatalf("round %d, attachment %d: %+v", round, i, a)
			}
			if a.URLExpires == nil || !a.URLExpires.Equal(t0.Add(time.Hour)) {
				t.Fatalf("url expires %v, want %v", a.URLExpires, t0.Add(time.Hour))
			}
			if b := get(t, a.URL); !bytes.Equal(b, want[i]) {
				t.Fatalf("attachment %d: the URL serves %d other bytes", i, len(b))
			}
		}
		if got[2].MIME != "audio/ogg" || got[2].Duration != 4 || got[0].Name != "pass.pdf" {
			t.Fatalf("what the platform said is lost: %+v", got)
		}
	}
	if n := d.calls.Load(); n != 3 {
		t.Fatalf("%d downloads for 3 files staged twice, want 3", n)
	}
}

func TestStageGivesAReasonAndStoresNothingForWhatItRefuses(t *testing.T) {
	t.Parallel()
	s := stager(t, media.Config{MaxBytes: 1000, Types: []string{"image/*", "application/pdf"}})
	d := &files{byID: map[string][]byte{"pdf-as-jpeg": pdf, "big": make([]byte, 2000), "png-as-pdf": png, "ogg": ogg}}
	cases := []struct {
		a    message.Attachment
		want message.AttachmentReason
	}{
		{message.Attachment{Kind: message.AttachFile, PlatformID: "declared-big", Size: 1001}, message.ReasonTooLarge},
		{message.Attachment{Kind: message.AttachFile, PlatformID: "big"}, message.ReasonTooLarge},
		{message.Attachment{Kind: message.AttachVoice, PlatformID: "ogg", MIME: "audio/ogg"}, message.ReasonTypeRefused},
		{message.Attachment{Kind: message.AttachVoice, PlatformID: "ogg"}, message.ReasonTypeRefused}, // sniffed
		{message.Attachment{Kind: message.AttachImage, PlatformID: "pdf-as-jpeg", MIME: "image/jpeg"}, message.ReasonTypeMismatch},
		{message.Attachment{Kind: message.AttachFile, PlatformID: "png-as-pdf", MIME: "application/pdf"}, message.ReasonTypeMismatch},
		{message.Attachment{Kind: message.AttachFile, PlatformID: "gone", MIME: "application/pdf"}, message.ReasonUnavailable},
	}
	var atts []message.Attachment
	for _, c := range cases {
		atts = append(atts, c.a)
	}
	got, err := s.Stage(t.Context(), event(atts...), d)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if got[i].Reason != c.want || got[i].URL != "" {
			t.Errorf("%s: reason %q, url %q; want %q and no URL", c.a.PlatformID, got[i].Reason, got[i].URL, c.want)
		}
	}
	if again, _ := s.Stage(t.Context(), event(atts...), d); again[4].Reason != message.ReasonTypeMismatch {
		t.Fatalf("a refused file was stored: %+v", again[4])
	}
}

func TestStageWithoutMediaOrADownloaderDescribesTheFiles(t *testing.T) {
	t.Parallel()
	a := message.Attachment{Kind: message.AttachImage, PlatformID: "pic", MIME: "image/png"}
	var off *media.Stager
	got, err := off.Stage(t.Context(), event(a), &files{})
	if err != nil || got[0].Reason != message.ReasonMediaOff || got[0].PlatformID != "pic" {
		t.Fatalf("media off: %+v, %v", got, err)
	}
	got, err = stager(t, media.Config{}).Stage(t.Context(), event(a), nil)
	if err != nil || got[0].Reason != message.ReasonNoDownload {
		t.Fatalf("no downloader: %+v, %v", got, err)
	}
}

// A file the adapter marked as served by nobody is described, never
// downloaded, stored or given a URL, media on or off.
func TestStageLeavesAFileNobodyServes(t *testing.T) {
	t.Parallel()
	drive := message.Attachment{Kind: message.AttachFile, PlatformID: "drive-1", MIME: "application/pdf", Name: "plan.pdf", Reason: message.ReasonNotServed}
	d := &files{byID: map[string][]byte{"drive-1": []byte("%PDF-1.4")}}
	var off *media.Stager
	for name, s := range map[string]*media.Stager{"on": stager(t, media.Config{}), "off": off} {
		got, err := s.Stage(t.Context(), event(drive), d)
		if err != nil || got[0].Reason != message.ReasonNotServed || got[0].URL != "" || got[0].Name != "plan.pdf" || got[0].PlatformID != "drive-1" {
			t.Fatalf("media %s: %+v, %v", name, got, err)
		}
	}
	if n := d.calls.Load(); n != 0 {
		t.Fatalf("a file nobody serves was downloaded %d times", n)
	}
}

// The store failing is the turn's to retry: no reason is made up.
func TestStageFailsWhenTheBucketDoesNot(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	s := &media.Stager{Objects: media.NewS3Objects(env.AWS, "no-such-bucket-"+strings.ToLower(t.Name()[:8]), true), Config: media.Config{Bucket: "x"}}
	_, err := s.Stage(t.Context(), event(message.Attachment{Kind: message.AttachImage, PlatformID: "pic"}), &files{byID: map[string][]byte{"pic": png}})
	if err == nil {
		t.Fatal("staging into a missing bucket succeeded")
	}
	if errors.Is(err, platform.ErrFileUnavailable) {
		t.Fatalf("a store failure blamed on the platform: %v", err)
	}
}

func TestConfigValidateNamesTheSetting(t *testing.T) {
	for _, c := range []struct {
		cfg  media.Config
		name string
	}{
		{media.Config{URLTTL: 13 * time.Hour}, "PARLEY_MEDIA_URL_TTL"},
		{media.Config{Types: media.ParseTypes("image/*, pdf")}, "PARLEY_MEDIA_TYPES"},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%+v: %v, want an error naming %s", c.cfg, err, c.name)
		}
	}
	if err := (media.Config{Types: media.ParseTypes("image/*, application/pdf")}).WithDefaults().Validate(); err != nil {
		t.Fatal(err)
	}
}
