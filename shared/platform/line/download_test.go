package line

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Download fetches a message's content from the content API root with the
// channel access token: the exact bytes once, and a reason for what LINE
// will not serve.
func TestDownloadFetchesTheContentAPI(t *testing.T) {
	t.Parallel()
	api := fakeline.New(fakeline.Options{Token: "line-token"})
	srv := httptest.NewServer(api)
	defer srv.Close()
	c := &Client{Token: "line-token", BaseURL: "http://127.0.0.1:9", DataBaseURL: srv.URL}
	api.AddContent("600000000000000001", fakefiles.SampleVoice)
	api.AddContent("600000000000000002", fakefiles.File{Body: fakefiles.SampleVoice.Body, Truncate: true})
	got, err := c.Download(t.Context(), message.Attachment{PlatformID: "600000000000000001"}, 1<<20)
	if err != nil || !bytes.Equal(got, fakefiles.SampleVoice.Body) || api.ContentDownloads("600000000000000001") != 1 {
		t.Fatalf("Download = %d bytes, %v (%d downloads)", len(got), err, api.ContentDownloads("600000000000000001"))
	}
	wrong := &Client{Token: "other", DataBaseURL: srv.URL}
	for _, tc := range []struct {
		name string
		c    *Client
		a    message.Attachment
		max  int64
		want error
	}{
		{"Expired", c, message.Attachment{PlatformID: "600000000000000009"}, 1 << 20, platform.ErrFileUnavailable},
		{"BrokeOff", c, message.Attachment{PlatformID: "600000000000000002"}, 1 << 20, platform.ErrFileUnavailable},
		{"NoID", c, message.Attachment{}, 1 << 20, platform.ErrFileUnavailable},
		{"NotAnID", c, message.Attachment{PlatformID: "../reply"}, 1 << 20, platform.ErrFileUnavailable},
		{"OverTheBound", c, message.Attachment{PlatformID: "600000000000000001"}, 100, platform.ErrFileTooLarge},
		{"DeclaredOverTheBound", c, message.Attachment{PlatformID: "600000000000000001", Size: 101}, 100, platform.ErrFileTooLarge},
		{"WrongToken", wrong, message.Attachment{PlatformID: "600000000000000001"}, 1 << 20, platform.ErrFileUnavailable},
	} {
		if _, err := tc.c.Download(t.Context(), tc.a, tc.max); !errors.Is(err, tc.want) {
			t.Errorf("%s: Download = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// A video LINE is still preparing (202) is an error the turn does not wait
// out, never bytes.
func TestDownloadOfContentNotReadyIsAnError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	c := &Client{Token: "t", DataBaseURL: srv.URL}
	if b, err := c.Download(t.Context(), message.Attachment{PlatformID: "1"}, 1<<20); err == nil || b != nil {
		t.Fatalf("Download = %d bytes, %v; want an error", len(b), err)
	}
}
