package slack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/split"
)

var (
	pngBytes  = append([]byte("\x89PNG\r\n\x1a\n"), strings.Repeat("p", 500)...)
	fileTeam  = message.Thread{Platform: message.Slack, Account: "T0TEAM0001", Chat: "C0CHAN0001", Thread: "1764432000.000100"}
	mediaTest = "xoxb-media-test"
)

// fakeFiles is a client at a fake Web API, with the fake; wrap, when set,
// stands between them (a fault of the upload URL).
func fakeFiles(t *testing.T, wrap func(http.Handler) http.Handler) (*Client, *fakeslack.API) {
	t.Helper()
	api := fakeslack.New(fakeslack.Options{Token: mediaTest, Recorder: fakeapi.New(fakeapi.Options{})})
	h := http.Handler(api)
	if wrap != nil {
		h = wrap(api)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &Client{Token: mediaTest, TeamID: "T0TEAM0001", BaseURL: srv.URL + "/api"}, api
}

func fileOf(kind message.MediaKind, name, caption, mime string, b []byte) platform.MediaFile {
	return platform.MediaFile{Kind: kind, Name: name, Caption: caption, URL: "https://example.com/" + name,
		Fetch: func(_ context.Context, max int64) (platform.Fetched, error) {
			if int64(len(b)) > max {
				return platform.Fetched{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "too_large"}
			}
			return platform.Fetched{Bytes: b, MIME: mime}, nil
		},
		Split: func(s string) []string { return split.Text(s, Adapter.Capabilities()) }}
}

func arg(d fakeapi.Delivery, k string) string { return fakeapi.Str(d.Args, k) }

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestSendMediaSharesTheFileInItsThread: the bytes reach Slack by the
// external upload, named, and are shared into the conversation's thread
// with the caption, inert, as the message's text; the receipt holds the
// message's ts and the file's id.
func TestSendMediaSharesTheFileInItsThread(t *testing.T) {
	t.Parallel()
	c, api := fakeFiles(t, nil)
	m := message.Outgoing{Thread: fileTeam, IdempotencyKey: "int#u1"}
	rc, err := c.SendMedia(t.Context(), m, fileOf(message.MediaImage, "chart.png", "<!channel> the *chart*", "image/png", pngBytes))
	if err != nil {
		t.Fatal(err)
	}
	ds := api.Recorder().Delivered()
	if len(ds) != 1 {
		t.Fatalf("%d deliveries, want 1", len(ds))
	}
	d := ds[0]
	if d.Chat != fileTeam.Chat || d.Thread != fileTeam.Thread || d.Text != "&lt;!channel&gt; the *chart*" {
		t.Errorf("shared into %s/%s with %q, want the thread and the caption inert", d.Chat, d.Thread, d.Text)
	}
	if arg(d, fakeapi.ArgSHA256) != hexSHA(pngBytes) || arg(d, fakeapi.ArgFileName) != "chart.png" {
		t.Errorf("file %s %s, want the exact bytes named chart.png", arg(d, fakeapi.ArgSHA256), arg(d, fakeapi.ArgFileName))
	}
	if want := []string{d.MessageID, arg(d, fakeslack.ArgFileID)}; !slices.Equal(rc.MessageIDs, want) {
		t.Errorf("receipt %v, want %v", rc.MessageIDs, want)
	}
}

// TestSendMediaLongCaptionFollowsTheFile: a caption over TextLimit is no
// initial_comment; it follows the file as text messages, split as a bubble
// is, each its own key, and the receipt holds every message.
func TestSendMediaLongCaptionFollowsTheFile(t *testing.T) {
	t.Parallel()
	c, api := fakeFiles(t, nil)
	caption := strings.Repeat("a long caption ", 300) // 4500 runes
	m := message.Outgoing{Thread: fileTeam, IdempotencyKey: "int#u2"}
	rc, err := c.SendMedia(t.Context(), m, fileOf(message.MediaFile, "report.pdf", caption, "application/pdf", []byte("%PDF-1.7")))
	if err != nil {
		t.Fatal(err)
	}
	ds := api.Recorder().Delivered()
	if len(ds) != 3 || ds[0].Text != "" || strings.Join(strings.Fields(ds[1].Text+" "+ds[2].Text), " ") != strings.TrimSpace(caption) {
		t.Fatalf("%d deliveries, want the file alone, then its caption in two parts", len(ds))
	}
	var keys []string
	for _, d := range ds[1:] {
		var md SlackMetadata
		_ = json.Unmarshal(d.Args["metadata"], &md)
		keys = append(keys, md.EventPayload.Unit)
	}
	if !slices.Equal(keys, []string{"int#u2#1", "int#u2#2"}) || len(rc.MessageIDs) != 4 {
		t.Fatalf("caption keys %q, receipt %v: want their own keys, and all four ids", keys, rc.MessageIDs)
	}
}

// TestSendMediaVoiceIsAnAudioFile: Slack has no voice message for a bot:
// a voice note is an audio file; bytes that are not audio are refused
// before anything reaches Slack.
func TestSendMediaVoiceIsAnAudioFile(t *testing.T) {
	t.Parallel()
	c, api := fakeFiles(t, nil)
	m := message.Outgoing{Thread: fileTeam}
	if _, err := c.SendMedia(t.Context(), m, fileOf(message.MediaVoice, "", "", "audio/ogg", []byte("OggS\x00\x02voice"))); err != nil {
		t.Fatal(err)
	}
	if d := api.Recorder().Delivered(); len(d) != 1 || arg(d[0], fakeapi.ArgFileName) != "voice.ogg" {
		t.Fatalf("the voice note went as %v", d)
	}
	_, err := c.SendMedia(t.Context(), m, fileOf(message.MediaVoice, "v", "", "image/png", pngBytes))
	if se := sendErr(t, err); se.Class != message.FailInvalidPayload || !strings.Contains(se.Reason, "voice_not_audio") {
		t.Fatalf("a picture as a voice note: %v", err)
	}
	if n := api.Recorder().Calls(); n != 1 {
		t.Fatalf("%d sends reached the fake, want the refused one never", n)
	}
}

// TestSendMediaFailures: only files.completeUploadExternal shows anything,
// so a failure before it is transient whatever it looks like, and only its
// own lost answer is unknown; Slack's refusals keep their classes.
func TestSendMediaFailures(t *testing.T) {
	t.Parallel()
	// cut closes the connection of every upload of the bytes, after
	// reading them: the request was written, and no answer came.
	cut := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/upload/") {
				_, _ = io.Copy(io.Discard, r.Body)
				fakeapi.DropConnection(w)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	// refuse answers every upload of the bytes with status, as an upload
	// URL that expired or was never issued would.
	refuse := func(status int) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.Contains(r.URL.Path, "/upload/") {
					_, _ = io.Copy(io.Discard, r.Body)
					w.WriteHeader(status)
					return
				}
				next.ServeHTTP(w, r)
			})
		}
	}
	for _, tc := range []struct {
		name  string
		wrap  func(http.Handler) http.Handler
		fault fakeapi.Fault
		want  message.FailureClass
	}{
		{"UploadCutOff", cut, fakeapi.Fault{}, message.FailTransient},
		{"UploadURLNotFound", refuse(http.StatusNotFound), fakeapi.Fault{}, message.FailTransient},
		{"UploadURLForbidden", refuse(http.StatusForbidden), fakeapi.Fault{}, message.FailTransient},
		{"UploadTooLarge", refuse(http.StatusRequestEntityTooLarge), fakeapi.Fault{}, message.FailInvalidPayload},
		{"CompleteAnswerLost", nil, fakeapi.Fault{DropResponseAfterCommit: true}, message.FailUnknown},
		{"CompleteEdge5xx", nil, fakeapi.Fault{Status: 502}, message.FailUnknown},
		{"CompleteInternalError", nil, fakeapi.Fault{Error: "internal_error"}, message.FailUnknown},
		{"UploadsDisabled", nil, fakeapi.Fault{Error: "file_uploads_disabled"}, message.FailPermission},
		{"RateLimited", nil, fakeapi.Fault{Status: 429}, message.FailRateLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, api := fakeFiles(t, tc.wrap)
			if tc.fault != (fakeapi.Fault{}) {
				api.Recorder().Inject(tc.fault)
			}
			_, err := c.SendMedia(t.Context(), message.Outgoing{Thread: fileTeam}, fileOf(message.MediaImage, "a.png", "", "image/png", pngBytes))
			if se := sendErr(t, err); se.Class != tc.want {
				t.Fatalf("class %s (%v), want %s", se.Class, err, tc.want)
			}
		})
	}
}

// TestSendMediaRefusesWithoutCalling: another workspace's thread, and a
// file over MaxUpload, reach no Slack method.
func TestSendMediaRefusesWithoutCalling(t *testing.T) {
	t.Parallel()
	c, api := fakeFiles(t, nil)
	other := fileTeam
	other.Account = "T0OTHER001"
	if _, err := c.SendMedia(t.Context(), message.Outgoing{Thread: other}, fileOf(message.MediaImage, "a.png", "", "image/png", pngBytes)); message.ClassOf(err) != message.FailInvalidPayload {
		t.Errorf("another workspace's thread: %v", err)
	}
	big := make([]byte, MaxUpload+1)
	if _, err := c.SendMedia(t.Context(), message.Outgoing{Thread: fileTeam}, fileOf(message.MediaFile, "big.bin", "", "", big)); message.ClassOf(err) != message.FailInvalidPayload {
		t.Errorf("a file over MaxUpload: %v", err)
	}
	if api.Recorder().Calls() != 0 {
		t.Fatal("a refused file reached Slack")
	}
}

// TestUploadURLElsewhereGetsNoBytes: an upload_url on any host but Slack's
// files host (or the configured API's own) gets nothing.
func TestUploadURLElsewhereGetsNoBytes(t *testing.T) {
	t.Parallel()
	var hit bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit = true }))
	defer elsewhere.Close()
	web := newWebAPI(t)
	web.set(200, nil, `{"ok":true,"file_id":"F1","upload_url":"`+elsewhere.URL+`/upload/v1/F1"}`)
	c := web.client()
	_, err := c.SendMedia(t.Context(), message.Outgoing{Thread: message.Thread{Platform: message.Slack, Account: "T1", Chat: "C1"}}, fileOf(message.MediaImage, "a.png", "", "image/png", pngBytes))
	if message.ClassOf(err) != message.FailTransient || hit || len(web.all()) != 1 {
		t.Fatalf("SendMedia = %v (elsewhere hit %v, %d calls), want transient and nothing uploaded", err, hit, len(web.all()))
	}
}

// TestMediaIsNotReconcilable: a file message carries no metadata, so an
// unknown file send cannot be looked up: ErrNotReconcilable, without a
// call, and the unknown-outcome policy decides.
func TestMediaIsNotReconcilable(t *testing.T) {
	t.Parallel()
	web := newWebAPI(t)
	m := message.Outgoing{Thread: message.Thread{Platform: message.Slack, Account: "T1", Chat: "C1"}, IdempotencyKey: "int#pic",
		Content: message.Content{Media: &message.Media{Kind: message.MediaImage, URL: "https://example.com/a.png"}}}
	_, found, err := web.client().Reconcile(t.Context(), m)
	if !errors.Is(err, platform.ErrNotReconcilable) || found || len(web.all()) != 0 {
		t.Fatalf("Reconcile of a file = %v, %v (%d calls), want ErrNotReconcilable without a call", found, err, len(web.all()))
	}
}
