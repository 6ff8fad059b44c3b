package teams

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// TestSendImageAsAttachment: an image goes as an activity with one
// attachment of its type and URL, replying where the bubble replies, and
// its caption as a plain text activity after it; the receipt holds both
// ids. The fake refuses a picture whose contentUrl is not https, as Teams
// does.
func TestSendImageAsAttachment(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	f := platform.MediaFile{Kind: message.MediaImage, URL: "https://example.com/charts/week.PNG?v=2", Name: "week.png", Caption: "*the* chart"}
	rc, err := rig.c.SendMedia(t.Context(), message.Outgoing{Thread: personal, ReplyTo: "1764432060456"}, f)
	if err != nil {
		t.Fatal(err)
	}
	got := rig.rec.Delivered()
	if len(got) != 2 || len(rc.MessageIDs) != 2 || rc.MessageIDs[0] != got[0].MessageID || rc.MessageIDs[1] != got[1].MessageID {
		t.Fatalf("receipt %v, delivered %d", rc, len(got))
	}
	var atts []TeamsAttachment
	_ = json.Unmarshal(got[0].Args["attachments"], &atts)
	if len(atts) != 1 || atts[0].ContentType != "image/png" || atts[0].ContentURL != f.URL || atts[0].Name != "week.png" || got[0].ReplyTo != "1764432060456" {
		t.Fatalf("image activity %s, want one image/png attachment by URL, replying", got[0].Args["attachments"])
	}
	if got[0].Text != faketeams.ImageText(f.URL) || got[1].Text != "*the* chart" || string(got[1].Args["textFormat"]) != `"plain"` {
		t.Fatalf("delivered %q then %q (%s), want the image, then the caption as plain text", got[0].Text, got[1].Text, got[1].Args["textFormat"])
	}

	plain := platform.MediaFile{Kind: message.MediaImage, URL: "http://example.com/a.png"}
	if _, err := rig.c.SendMedia(t.Context(), message.Outgoing{Thread: personal}, plain); message.ClassOf(err) != message.FailInvalidPayload {
		t.Fatalf("an http picture: %v, want the connector's 400", err)
	}
}

// TestSendMediaAsLinkOnTeams: what Teams does not show as a picture is
// declined with platform.ErrNotNative before any call (delivery sends it
// as a link): an image whose type Teams does not show (a WebP upload, a
// URL without a known extension), and every other kind, whose limit is 0.
func TestSendMediaAsLinkOnTeams(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	for _, f := range []platform.MediaFile{
		{Kind: message.MediaImage, URL: "https://bucket.example/out/x?sig=1", Upload: true, MIME: "image/webp"},
		{Kind: message.MediaImage, URL: "https://example.com/render?id=7"},
		{Kind: message.MediaFile, URL: "https://example.com/r.pdf"},
		{Kind: message.MediaVoice, URL: "https://example.com/n.ogg"},
	} {
		f.Caption = "see"
		if _, err := rig.c.SendMedia(t.Context(), message.Outgoing{Thread: personal}, f); !errors.Is(err, platform.ErrNotNative) {
			t.Fatalf("%s %s: %v, want ErrNotNative", f.Kind, f.URL, err)
		}
	}
	if n := len(rig.rec.Delivered()); n != 0 {
		t.Fatalf("%d activities posted for files Teams declined", n)
	}
	for _, k := range message.MediaKinds {
		if want := map[message.MediaKind]int64{message.MediaImage: MaxImage}[k]; rig.c.MediaLimit(k) != want {
			t.Errorf("MediaLimit(%s) = %d, want %d", k, rig.c.MediaLimit(k), want)
		}
	}
}

// failNth answers 502 to the nth activity post, before it reaches the
// connector.
type failNth struct {
	n, seen atomic.Int32
	next    http.RoundTripper
}

func (f *failNth) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/activities") && f.seen.Add(1) == f.n.Load() {
		return &http.Response{StatusCode: http.StatusBadGateway, Status: "502 Bad Gateway", Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	return f.next.RoundTrip(r)
}

// TestCaptionFailingAfterTheImageIsUnknown: the image was posted and its
// caption failed: the unit cannot be both sent and retried, so the outcome
// is unknown (Teams has no idempotency key), with the image's id kept.
func TestCaptionFailingAfterTheImageIsUnknown(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	ft := &failNth{next: rig.srv.Client().Transport}
	ft.n.Store(2)
	rig.c = NewClient(testApp, testPassword, TokenURL(rig.srv.URL+faketeams.LoginPath, testTenant), rig.srv.URL, &http.Client{Transport: ft})
	rc, err := rig.c.SendMedia(t.Context(), message.Outgoing{Thread: personal}, platform.MediaFile{Kind: message.MediaImage, URL: "https://example.com/a.jpg", Caption: "the caption"})
	if message.ClassOf(err) != message.FailUnknown || len(rc.MessageIDs) != 1 || len(rig.rec.Delivered()) != 1 {
		t.Fatalf("SendMedia = %v, %v with %d delivered; want unknown after the image", rc, err, len(rig.rec.Delivered()))
	}
}
