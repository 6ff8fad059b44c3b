package discord

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Download fetches an attachment's CDN path and signature below the
// configured CDN root: the exact bytes, and a reason for each file the CDN
// will not serve.
func TestDownloadFetchesTheCDNPathBelowTheConfiguredRoot(t *testing.T) {
	t.Parallel()
	api := fakediscord.New(fakediscord.Options{Token: "t"})
	srv := httptest.NewServer(api)
	defer srv.Close()
	c := &Client{Token: "t", ApplicationID: testApp, CDNBaseURL: srv.URL}
	pdf := fakefiles.SampleDocument
	u := api.AddAttachment("1309000000000000200", "1444357000000000077", "pass.pdf", pdf)
	got, err := c.Download(t.Context(), message.Attachment{PlatformID: u, Size: int64(len(pdf.Body))}, 1<<20)
	if err != nil || !bytes.Equal(got, pdf.Body) || api.AttachmentDownloads(u) != 1 {
		t.Fatalf("Download = %d bytes, %v (%d downloads); want the %d bytes once", len(got), err, api.AttachmentDownloads(u), len(pdf.Body))
	}
	cut := api.AddAttachment("1309000000000000200", "1444357000000000078", "cut.png", fakefiles.File{Body: fakefiles.SamplePhoto.Body, Truncate: true})
	for _, tc := range []struct {
		name string
		a    message.Attachment
		max  int64
		want error
	}{
		{"Unknown", message.Attachment{PlatformID: fakediscord.AttachmentURL("/attachments/1/2/gone.png")}, 1 << 20, platform.ErrFileUnavailable},
		{"SignatureAltered", message.Attachment{PlatformID: strings.Replace(u, "hm=", "hm=0", 1)}, 1 << 20, platform.ErrFileUnavailable},
		{"BrokeOff", message.Attachment{PlatformID: cut}, 1 << 20, platform.ErrFileUnavailable},
		{"OverTheBound", message.Attachment{PlatformID: u}, 10, platform.ErrFileTooLarge},
		{"DeclaredOverTheBound", message.Attachment{PlatformID: u, Size: 11}, 10, platform.ErrFileTooLarge},
	} {
		if _, err := c.Download(t.Context(), tc.a, tc.max); !errors.Is(err, tc.want) {
			t.Errorf("%s: Download = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// No payload chooses where Parley connects: a URL on any host but
// Discord's CDN, or a path that is no attachment's, is refused before any
// request, and the CDN root's host is the only one ever asked.
func TestDownloadConnectsOnlyToTheCDNRoot(t *testing.T) {
	t.Parallel()
	var asked atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked.Add(1) }))
	defer elsewhere.Close()
	root := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked.Add(100) }))
	defer root.Close()
	c := &Client{Token: "t", ApplicationID: testApp, CDNBaseURL: root.URL}
	for _, raw := range []string{
		elsewhere.URL + "/attachments/1/2/a.png",
		"https://169.254.169.254/attachments/1/2/a.png",
		"http://cdn.discordapp.com/attachments/1/2/a.png",
		"https://cdn.discordapp.com:8443/attachments/1/2/a.png",
		"https://user@cdn.discordapp.com/attachments/1/2/a.png",
		"https://cdn.discordapp.com.evil.example/attachments/1/2/a.png",
		"https://cdn.discordapp.com/avatars/1/2.png",
		"https://cdn.discordapp.com/attachments/../../admin",
		"https://cdn.discordapp.com/attachments/1/%2e%2e/%2e%2e/x",
		"",
		"::",
	} {
		if _, err := c.Download(t.Context(), message.Attachment{PlatformID: raw}, 1<<20); !errors.Is(err, platform.ErrFileUnavailable) {
			t.Errorf("Download(%q) = %v, want ErrFileUnavailable", raw, err)
		}
	}
	if n := asked.Load(); n != 0 {
		t.Fatalf("%d requests were made", n)
	}
	if _, err := c.Download(t.Context(), message.Attachment{PlatformID: "https://media.discordapp.net/attachments/1/2/a.png?ex=1"}, 1<<20); err != nil {
		t.Fatalf("the media proxy's URL: %v", err)
	}
	if n := asked.Load(); n != 100 {
		t.Fatalf("asked %d, want the root once", n)
	}
}

// FuzzCDNURL: whatever a payload names, the URL fetched is below the CDN
// root, on an attachment's path, with nothing that climbs out of it.
func FuzzCDNURL(f *testing.F) {
	for _, s := range []string{
		"https://cdn.discordapp.com/attachments/1/2/a.png?ex=1&is=2&hm=3", "https://media.discordapp.net/ephemeral-attachments/1/2/a%20b.ogg",
		"https://cdn.discordapp.com/attachments/1/2/a/../../../x", "https://CDN.discordapp.com/attachments//x", "https://cdn.discordapp.com/attachments/%2F..%2F",
		"https://cdn.discordapp.com/attachments/1/2/a.png#frag", "https://cdn.discordapp.com/attachments/1/2/a.png?x=\u0000",
	} {
		f.Add(s)
	}
	const root = "https://cdn.test.example"
	c := &Client{CDNBaseURL: root}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := c.cdnURL(raw)
		if err != nil {
			if !errors.Is(err, platform.ErrFileUnavailable) {
				t.Fatalf("cdnURL(%q) = %v", raw, err)
			}
			return
		}
		if !strings.HasPrefix(got, root+"/attachments/") && !strings.HasPrefix(got, root+"/ephemeral-attachments/") {
			t.Fatalf("cdnURL(%q) = %q, outside the root's attachments", raw, got)
		}
		if req, err := http.NewRequest(http.MethodGet, got, nil); err != nil || req.URL.Host != "cdn.test.example" || strings.Contains(req.URL.Path, "/../") {
			t.Fatalf("cdnURL(%q) = %q: %v", raw, got, err)
		}
	})
}
