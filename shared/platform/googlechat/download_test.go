package googlechat

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Download fetches an uploaded file with media.download and the app's
// token: the exact bytes once, and a reason for what Chat will not serve.
func TestDownloadFetchesMediaWithTheAppsToken(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	rig.api.AddAttachment("ClxzcGFjZXMvQUFBQS9hdHQ", fakefiles.SampleDocument)
	rig.api.AddAttachment("spaces/AAAA/attachments/cut", fakefiles.File{Body: fakefiles.SamplePhoto.Body, Truncate: true})
	got, err := rig.c.Download(t.Context(), message.Attachment{PlatformID: "ClxzcGFjZXMvQUFBQS9hdHQ"}, 1<<20)
	if err != nil || !bytes.Equal(got, fakefiles.SampleDocument.Body) || rig.api.AttachmentDownloads("ClxzcGFjZXMvQUFBQS9hdHQ") != 1 {
		t.Fatalf("Download = %d bytes, %v (%d downloads)", len(got), err, rig.api.AttachmentDownloads("ClxzcGFjZXMvQUFBQS9hdHQ"))
	}
	for _, tc := range []struct {
		name string
		a    message.Attachment
		max  int64
		want error
	}{
		{"Unknown", message.Attachment{PlatformID: "Cnone"}, 1 << 20, platform.ErrFileUnavailable},
		{"BrokeOff", message.Attachment{PlatformID: "spaces/AAAA/attachments/cut"}, 1 << 20, platform.ErrFileUnavailable},
		{"NoResource", message.Attachment{}, 1 << 20, platform.ErrFileUnavailable},
		{"ClimbsOut", message.Attachment{PlatformID: "a/../../token"}, 1 << 20, platform.ErrFileUnavailable},
		{"OverTheBound", message.Attachment{PlatformID: "ClxzcGFjZXMvQUFBQS9hdHQ"}, 10, platform.ErrFileTooLarge},
		{"DeclaredOverTheBound", message.Attachment{PlatformID: "ClxzcGFjZXMvQUFBQS9hdHQ", Size: 11}, 10, platform.ErrFileTooLarge},
	} {
		if _, err := rig.c.Download(t.Context(), tc.a, tc.max); !errors.Is(err, tc.want) {
			t.Errorf("%s: Download = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// FuzzMediaPath: whatever a resource name holds, the path asked is below
// /v1/media/, with no segment that climbs out.
func FuzzMediaPath(f *testing.F) {
	for _, s := range []string{"ClxzcGFjZXMv", "spaces/A/attachments/B", "a/../b", "a//b", "%2e%2e/x", "a?b#c", "/lead"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := mediaPath(s)
		if !ok {
			return
		}
		rest, found := strings.CutPrefix(p, "/v1/media/")
		if !found || !strings.HasSuffix(rest, "?alt=media") || strings.Count(p, "?") != 1 {
			t.Fatalf("mediaPath(%q) = %q", s, p)
		}
		for seg := range strings.SplitSeq(strings.TrimSuffix(rest, "?alt=media"), "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("mediaPath(%q) = %q has segment %q", s, p, seg)
			}
		}
	})
}
