package slack

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

func TestDownloadFetchesWhatFilesInfoNames(t *testing.T) {
	t.Parallel()
	api := fakeslack.New(fakeslack.Options{Token: "xoxb-test", Recorder: fakeapi.New(fakeapi.Options{})})
	srv := httptest.NewServer(api)
	defer srv.Close()
	c := &Client{Token: "xoxb-test", BaseURL: srv.URL + "/api"}
	body := bytes.Repeat([]byte("%PDF"), 300)
	api.AddFile("F1", body)
	got, err := c.Download(t.Context(), message.Attachment{PlatformID: "F1"}, 1<<20)
	if err != nil || !bytes.Equal(got, body) || api.Downloads("F1") != 1 {
		t.Fatalf("Download = %d bytes, %v (%d downloads); want the %d bytes, once", len(got), err, api.Downloads("F1"), len(body))
	}
	for _, tc := range []struct {
		name string
		a    message.Attachment
		max  int64
		want error
	}{
		{"Unknown", message.Attachment{PlatformID: "F404"}, 1 << 20, platform.ErrFileUnavailable},
		{"OverTheBound", message.Attachment{PlatformID: "F1"}, 100, platform.ErrFileTooLarge},
		{"DeclaredOverTheBound", message.Attachment{PlatformID: "F1", Size: 101}, 100, platform.ErrFileTooLarge},
	} {
		if _, err := c.Download(t.Context(), tc.a, tc.max); !errors.Is(err, tc.want) {
			t.Errorf("%s: Download = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// The bot token goes only to Slack's files host (or the configured API's
// own): files.info naming any other host gets no token.
func TestDownloadSendsTheTokenNowhereElse(t *testing.T) {
	t.Parallel()
	var leaked bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = leaked || r.Header.Get("Authorization") != ""
	}))
	defer elsewhere.Close()
	apiSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true,"file":{"id":"F1","url_private_download":"` + elsewhere.URL + `/steal"}}`))
	}))
	defer apiSrv.Close()
	c := &Client{Token: "xoxb-test", BaseURL: strings.Replace(apiSrv.URL, "127.0.0.1", "localhost", 1)}
	_, err := c.Download(t.Context(), message.Attachment{PlatformID: "F1"}, 1<<20)
	if !errors.Is(err, platform.ErrFileUnavailable) || leaked {
		t.Fatalf("Download = %v, token sent elsewhere: %v", err, leaked)
	}
}
