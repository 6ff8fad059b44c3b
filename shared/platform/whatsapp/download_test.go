package whatsapp

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Download asks Graph for the media's URL, then fetches it with the
// access token: the exact bytes once, and a reason for what WhatsApp will
// not serve, including bytes that are not the file Graph described.
func TestDownloadAsksTheURLThenFetchesIt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	api := fakewhatsapp.New(fakewhatsapp.Options{Token: "wa-token", PhoneNumberID: testPhone, Recorder: fakeapi.New(fakeapi.Options{Now: clock})})
	srv := httptest.NewServer(api)
	defer srv.Close()
	c := &Client{Token: "wa-token", PhoneNumberID: testPhone, BaseURL: srv.URL + "/v25.0"}
	api.AddMedia("101", fakefiles.SampleVoice)
	api.AddMedia("102", fakefiles.File{Body: fakefiles.SampleDocument.Body, Truncate: true})
	got, err := c.Download(t.Context(), message.Attachment{PlatformID: "101"}, 1<<20)
	if err != nil || !bytes.Equal(got, fakefiles.SampleVoice.Body) || api.MediaDownloads("101") != 1 {
		t.Fatalf("Download = %d bytes, %v (%d downloads)", len(got), err, api.MediaDownloads("101"))
	}
	for _, tc := range []struct {
		name string
		c    *Client
		a    message.Attachment
		max  int64
		want error
	}{
		{"Unknown", c, message.Attachment{PlatformID: "999"}, 1 << 20, platform.ErrFileUnavailable},
		{"BrokeOff", c, message.Attachment{PlatformID: "102"}, 1 << 20, platform.ErrFileUnavailable},
		{"NotAMediaID", c, message.Attachment{PlatformID: "../me"}, 1 << 20, platform.ErrFileUnavailable},
		{"OtherNumber", &Client{Token: "wa-token", PhoneNumberID: "999", BaseURL: srv.URL}, message.Attachment{PlatformID: "101"}, 1 << 20, platform.ErrFileUnavailable},
		{"WrongToken", &Client{Token: "nope", BaseURL: srv.URL}, message.Attachment{PlatformID: "101"}, 1 << 20, platform.ErrFileUnavailable},
		{"OverTheBound", c, message.Attachment{PlatformID: "101"}, 100, platform.ErrFileTooLarge},
		{"DeclaredOverTheBound", c, message.Attachment{PlatformID: "101", Size: 101}, 100, platform.ErrFileTooLarge},
	} {
		if _, err := tc.c.Download(t.Context(), tc.a, tc.max); !errors.Is(err, tc.want) {
			t.Errorf("%s: Download = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// The token goes only to WhatsApp's media host (or the configured API's
// own), and bytes whose SHA-256 is not the one Graph gave are refused.
func TestDownloadSendsTheTokenNowhereElseAndChecksTheHash(t *testing.T) {
	t.Parallel()
	var leaked bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = leaked || r.Header.Get("Authorization") != ""
	}))
	defer elsewhere.Close()
	var fileURL string
	graph := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/file" {
			_, _ = w.Write([]byte("not the file"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"url":"` + fileURL + `","mime_type":"image/jpeg","sha256":"X7eKkkVaJdI40ukT0MvlRcIAmXf2P0knvxPC+WQbf6M=","file_size":"12","id":"1"}`))
	}))
	defer graph.Close()
	base := strings.Replace(graph.URL, "127.0.0.1", "localhost", 1)
	c := &Client{Token: "wa-token", BaseURL: base}
	fileURL = elsewhere.URL + "/steal"
	if _, err := c.Download(t.Context(), message.Attachment{PlatformID: "1"}, 1<<20); !errors.Is(err, platform.ErrFileUnavailable) || leaked {
		t.Fatalf("Download = %v, token sent elsewhere: %v", err, leaked)
	}
	fileURL = base + "/file"
	if _, err := c.Download(t.Context(), message.Attachment{PlatformID: "1"}, 1<<20); !errors.Is(err, platform.ErrFileUnavailable) {
		t.Fatalf("Download of other bytes = %v, want ErrFileUnavailable", err)
	}
}
