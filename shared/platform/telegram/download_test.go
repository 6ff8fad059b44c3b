package telegram

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

func downloadClient(t *testing.T) (*Client, *faketelegram.API) {
	t.Helper()
	api := faketelegram.New(faketelegram.Options{Token: testToken, Recorder: fakeapi.New(fakeapi.Options{})})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &Client{Token: testToken, BotID: "7000000001", BaseURL: srv.URL}, api
}

func TestDownloadFetchesTheFileGetFileNames(t *testing.T) {
	t.Parallel()
	c, api := downloadClient(t)
	body := bytes.Repeat([]byte("OggS voice"), 500)
	api.AddFile("voice-1", body)
	got, err := c.Download(t.Context(), message.Attachment{Kind: message.AttachVoice, PlatformID: "voice-1"}, 1<<20)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("Download = %d bytes, %v; want the %d bytes added", len(got), err, len(body))
	}
	if n := api.Downloads("voice-1"); n != 1 {
		t.Fatalf("%d downloads, want 1", n)
	}
}

func TestDownloadRefusals(t *testing.T) {
	t.Parallel()
	c, api := downloadClient(t)
	api.AddFile("small", make([]byte, 100))
	api.AddFile("huge", make([]byte, faketelegram.MaxDownload+1))
	for _, tc := range []struct {
		name string
		a    message.Attachment
		max  int64
		want error
	}{
		{"OverTheCallersBound", message.Attachment{PlatformID: "small"}, 99, platform.ErrFileTooLarge},
		{"DeclaredOverTheBotAPIsBound", message.Attachment{PlatformID: "huge", Size: faketelegram.MaxDownload + 1}, 1 << 30, platform.ErrFileTooLarge},
		// Without a declared size, getFile's 400 says only in its text that
		// the file is too big, and Parley reads no error texts.
		{"RefusedByGetFile", message.Attachment{PlatformID: "huge"}, 1 << 30, platform.ErrFileUnavailable},
		{"UnknownFileID", message.Attachment{PlatformID: "nope"}, 1 << 20, platform.ErrFileUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.Download(t.Context(), tc.a, tc.max); !errors.Is(err, tc.want) {
				t.Fatalf("Download = %v, want %v", err, tc.want)
			}
		})
	}
}

// A file that breaks off mid-download is unavailable, never data; no error
// shows the token, which Telegram puts in the file's path.
func TestDownloadTruncatedAndTokenFree(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/getFile") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"ok":true,"result":{"file_id":"f","file_size":100,"file_path":"photos/f.jpg"}}`))
			return
		}
		conn, buf, _ := w.(http.Hijacker).Hijack()
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
		_ = buf.Flush()
	}))
	defer srv.Close()
	c := &Client{Token: testToken, BaseURL: srv.URL}
	_, err := c.Download(t.Context(), message.Attachment{PlatformID: "f"}, 1<<20)
	if !errors.Is(err, platform.ErrFileUnavailable) {
		t.Fatalf("Download = %v, want ErrFileUnavailable", err)
	}
	srv.Close()
	_, err = c.Download(t.Context(), message.Attachment{PlatformID: "f"}, 1<<20)
	if err == nil || strings.Contains(err.Error(), testToken) {
		t.Fatalf("Download from a closed server = %v: want an error without the token", err)
	}
}
