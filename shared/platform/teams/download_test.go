package teams

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/urlfetch"
)

// An inline image on the connector is fetched with the app token: the
// exact bytes once, and a reason for one the connector does not hold.
func TestDownloadFetchesAnInlineImageWithTheAppToken(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	rig.api.AddAttachment("0-wus-d3-1", fakefiles.SamplePhoto)
	img := rig.srv.URL + "/v3/attachments/0-wus-d3-1/views/original"
	got, err := rig.c.Download(t.Context(), message.Attachment{PlatformID: img}, 1<<20)
	if err != nil || !bytes.Equal(got, fakefiles.SamplePhoto.Body) || rig.api.AttachmentDownloads("0-wus-d3-1") != 1 {
		t.Fatalf("Download = %d bytes, %v (%d downloads)", len(got), err, rig.api.AttachmentDownloads("0-wus-d3-1"))
	}
	for _, tc := range []struct {
		name string
		a    message.Attachment
		max  int64
		want error
	}{
		{"Unknown", message.Attachment{PlatformID: rig.srv.URL + "/v3/attachments/gone/views/original"}, 1 << 20, platform.ErrFileUnavailable},
		{"OverTheBound", message.Attachment{PlatformID: img}, 100, platform.ErrFileTooLarge},
		{"NotAURL", message.Attachment{PlatformID: "::"}, 1 << 20, platform.ErrFileUnavailable},
	} {
		if _, err := rig.c.Download(t.Context(), tc.a, tc.max); !errors.Is(err, tc.want) {
			t.Errorf("%s: Download = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// A file upload's downloadUrl comes from outside: it is fetched through
// urlfetch without the app token. Under the production rules (the zero
// Fetch) a loopback address is refused before anything is sent; a test
// that allows its own loopback TLS server gets the exact bytes.
func TestDownloadFetchesAFileUploadThroughURLFetchWithoutTheToken(t *testing.T) {
	t.Parallel()
	var asked, withToken atomic.Int32
	sharepoint := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.Header.Get("Authorization") != "" {
			withToken.Add(1)
		}
		if r.URL.Path == "/big" {
			w.Header().Set("Content-Length", "5000")
		}
		_, _ = w.Write(fakefiles.SampleDocument.Body)
	}))
	defer sharepoint.Close()
	file := sharepoint.URL + "/_layouts/15/download.aspx?UniqueId=1&tempauth=x"
	rig := newClientRig(t)
	if _, err := rig.c.Download(t.Context(), message.Attachment{PlatformID: file}, 1<<20); !errors.Is(err, platform.ErrFileUnavailable) || asked.Load() != 0 {
		t.Fatalf("production rules: Download = %v after %d requests; want a refusal before any", err, asked.Load())
	}
	var fe *urlfetch.Error
	if _, err := rig.c.Download(t.Context(), message.Attachment{PlatformID: file}, 1<<20); !errors.As(err, &fe) || (fe.Reason != urlfetch.ReasonAddress && fe.Reason != urlfetch.ReasonPort) {
		t.Fatalf("the refusal %v does not say which rule", err)
	}

	u, _ := url.Parse(sharepoint.URL)
	port, _ := strconv.ParseUint(u.Port(), 10, 16)
	pool := sharepoint.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	allowed := &Client{AppID: testApp, Fetch: urlfetch.Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, AllowPorts: []uint16{uint16(port)}, RootCAs: pool}}
	got, err := allowed.Download(t.Context(), message.Attachment{PlatformID: file}, 1<<20)
	if err != nil || !bytes.Equal(got, fakefiles.SampleDocument.Body) || withToken.Load() != 0 {
		t.Fatalf("Download = %d bytes, %v (%d with a token)", len(got), err, withToken.Load())
	}
	if _, err := allowed.Download(t.Context(), message.Attachment{PlatformID: sharepoint.URL + "/big"}, 1000); !errors.Is(err, platform.ErrFileTooLarge) {
		t.Fatalf("over the bound: %v", err)
	}
}
