package line

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

func mediaOut(key string, seq int, rc *message.ReplyContext) message.Outgoing {
	return message.Outgoing{Thread: chat(ada), IdempotencyKey: key, Sequence: seq, ReplyContext: rc}
}

// sentMessages are the message objects of the rig's last call.
func (r *rig) sentMessages(t *testing.T) []map[string]any {
	t.Helper()
	var msgs []map[string]any
	if err := json.Unmarshal(r.last().Body["messages"], &msgs); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// TestSendMediaNatively: an audio with its duration and a video with its
// preview image go as LINE's audio and video messages by URL, the caption
// a text message in the same call: a reply's first bubble with its reply
// token (free), every other pushed with the unit's retry key. A voice note
// is an audio message. The fake holds each to LINE's rules, so a missing
// duration or preview would be a 400.
func TestSendMediaNatively(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	rc := &message.ReplyContext{Token: r.api.IssueReplyToken(ada), Until: t0.Add(50 * time.Second)}

	voice := platform.MediaFile{Kind: message.MediaVoice, URL: "https://example.com/n.m4a", DurationMS: 4200, Caption: "listen"}
	rcpt, err := r.c.SendMedia(t.Context(), mediaOut("in1#u0", 0, rc), voice)
	if err != nil {
		t.Fatalf("voice: %v", err)
	}
	if c := r.last(); c.Path != replyPath || c.RetryKey != "" {
		t.Fatalf("the first bubble went %s with retry key %q", c.Path, c.RetryKey)
	}
	msgs := r.sentMessages(t)
	if len(msgs) != 2 || msgs[0]["type"] != "audio" || msgs[0]["duration"] != 4200.0 || msgs[0]["originalContentUrl"] != voice.URL || msgs[1]["text"] != "listen" {
		t.Fatalf("messages %v, want the audio with its duration, then the caption", msgs)
	}
	if len(rcpt.MessageIDs) != 2 {
		t.Fatalf("receipt %v, want the audio's and the caption's ids", rcpt)
	}

	video := platform.MediaFile{Kind: message.MediaVideo, URL: "https://example.com/v.mp4", PreviewURL: "https://example.com/v.jpg"}
	if _, err := r.c.SendMedia(t.Context(), mediaOut("in1#u1", 1, rc), video); err != nil {
		t.Fatalf("video: %v", err)
	}
	if c := r.last(); c.Path != pushPath || c.RetryKey != RetryKey("in1#u1") {
		t.Fatalf("the second bubble went %s with retry key %q", c.Path, c.RetryKey)
	}
	if msgs := r.sentMessages(t); len(msgs) != 1 || msgs[0]["type"] != "video" || msgs[0]["previewImageUrl"] != video.PreviewURL {
		t.Fatalf("messages %v, want the video with its preview", msgs)
	}
	got := r.rec.Delivered()
	if len(got) != 2 || got[0].Text != fakeline.AudioText(voice.URL)+"\n\nlisten" || got[1].Text != fakeline.VideoText(video.URL) {
		t.Fatalf("delivered %q", []string{got[0].Text, got[1].Text})
	}
}

// TestSendMediaAsLinkWhereLINECannot: what LINE cannot take natively is
// declined with platform.ErrNotNative before any call (delivery sends it
// as a link): an audio without its duration, a video without a preview
// image, an upload of a type LINE does not play (OGG audio, WebM video, a
// GIF). A file has no native message at all.
func TestSendMediaAsLinkWhereLINECannot(t *testing.T) {
	t.Parallel()
	cases := []platform.MediaFile{
		{Kind: message.MediaAudio, URL: "https://example.com/a.m4a"},
		{Kind: message.MediaVoice, URL: "https://example.com/n.ogg", Upload: true, MIME: "audio/ogg", DurationMS: 3000},
		{Kind: message.MediaVideo, URL: "https://example.com/v.mp4", DurationMS: 3000},
		{Kind: message.MediaVideo, URL: "https://example.com/v.webm", Upload: true, MIME: "video/webm", PreviewURL: "https://example.com/v.jpg"},
		{Kind: message.MediaImage, URL: "https://example.com/i.gif", Upload: true, MIME: "image/gif"},
	}
	r := setup(t, fakeline.Options{})
	for i, f := range cases {
		f.Caption = "caption"
		if _, err := r.c.SendMedia(t.Context(), mediaOut("in2#u"+string(rune('0'+i)), i+1, nil), f); !errors.Is(err, platform.ErrNotNative) {
			t.Fatalf("%s %s: %v, want ErrNotNative", f.Kind, f.URL, err)
		}
	}
	if n := len(r.rec.Delivered()); n != 0 {
		t.Fatalf("%d messages sent for files LINE declined", n)
	}
	if r.c.MediaLimit(message.MediaFile) != 0 || r.c.MediaLimit(message.MediaVoice) != MaxAudio || r.c.MediaLimit(message.MediaVideo) != MaxVideo {
		t.Fatal("MediaLimit: want no file message, audio and video up to 200 MB")
	}
}

// TestFakeLINERefusesMediaLINERefuses: the fake answers 400 naming the
// property for an audio without a duration, a video without a preview
// image and a URL that is not HTTPS, as the Messaging API does, so a
// native send that LINE would refuse fails the tests too.
func TestFakeLINERefusesMediaLINERefuses(t *testing.T) {
	t.Parallel()
	r := setup(t, fakeline.Options{})
	for _, c := range []struct{ msg, property string }{
		{`{"type":"audio","originalContentUrl":"https://example.com/a.m4a"}`, "messages[0].duration"},
		{`{"type":"audio","originalContentUrl":"https://example.com/a.m4a","duration":0}`, "messages[0].duration"},
		{`{"type":"video","originalContentUrl":"https://example.com/v.mp4"}`, "messages[0].previewImageUrl"},
		{`{"type":"video","originalContentUrl":"http://example.com/v.mp4","previewImageUrl":"https://example.com/v.jpg"}`, "messages[0].originalContentUrl"},
		{`{"type":"image","originalContentUrl":"https://example.com/i.png","previewImageUrl":"ftp://example.com/i.png"}`, "messages[0].previewImageUrl"},
	} {
		body := `{"to":"` + ada + `","messages":[` + c.msg + `]}`
		req, _ := http.NewRequest(http.MethodPost, r.c.BaseURL+pushPath, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := r.c.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(answer), `"`+c.property+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", c.msg, resp.StatusCode, answer, c.property)
		}
	}
	if n := len(r.rec.Delivered()); n != 0 {
		t.Fatalf("%d delivered, want none", n)
	}
}
