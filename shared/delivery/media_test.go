package delivery_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/delivery"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

func mediaUnit(id string, m message.Media) intent.Unit {
	return intent.Unit{ID: id, Content: message.Content{Media: &m}, State: message.UnitPending}
}

// TestMediaWithoutNativeSendGoesAsALink: a platform without a MediaSender
// gets the caption and the agent's URL as text, in order with the text
// bubbles, once.
func TestMediaWithoutNativeSendGoesAsALink(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{})
	in := s.create(thread, pending("a#1"),
		mediaUnit("chart#1", message.Media{Kind: message.MediaImage, URL: "https://example.com/chart.png", Caption: "the chart"}),
		pending("b#1"))
	for _, id := range []string{"a#1", "chart#1", "b#1"} {
		if err := s.handle(in, id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if got, want := s.sender.texts(), []string{"text a#1", "the chart\nhttps://example.com/chart.png", "text b#1"}; !slices.Equal(got, want) {
		t.Fatalf("sent %q, want %q", got, want)
	}
	if u := s.get(in).Units[1]; u.State != message.UnitSent || !slices.Equal(u.Receipt, []string{"pm-2"}) {
		t.Fatalf("media unit = %+v", u)
	}
}

// TestMediaLinkSplitsALongCaption: where caption and link do not fit one
// message, the caption goes first, then the link alone; the receipt keeps
// both ids.
func TestMediaLinkSplitsALongCaption(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{})
	ch := s.p.Channels[message.Telegram]
	ch.Capabilities.TextLimit = 40
	s.p.Channels[message.Telegram] = ch
	caption := strings.Repeat("word ", 6)
	in := s.create(thread, mediaUnit("f#1", message.Media{Kind: message.MediaFile, URL: "https://example.com/report.pdf", Caption: caption}))
	if err := s.handle(in, "f#1"); err != nil {
		t.Fatal(err)
	}
	if got := s.sender.texts(); len(got) != 2 || got[1] != "https://example.com/report.pdf" {
		t.Fatalf("sent %q, want the caption then the link", got)
	}
	if u := s.get(in).Units[0]; u.State != message.UnitSent || !slices.Equal(u.Receipt, []string{"pm-1", "pm-2"}) {
		t.Fatalf("unit = %+v, want both ids in its receipt", u)
	}
}

// TestMediaUploadWithoutBucketFails: an upload_id where no media bucket is
// configured fails the unit with the reason, and the thread goes on.
func TestMediaUploadWithoutBucketFails(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{})
	in := s.create(thread, mediaUnit("v#1", message.Media{Kind: message.MediaVoice, UploadID: "0123456789abcdef0123456789abcdef"}), pending("b#1"))
	for _, id := range []string{"v#1", "b#1"} {
		if err := s.handle(in, id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	got := s.get(in)
	if u := got.Units[0]; u.State != message.UnitFailed || u.FailureClass != message.FailInvalidPayload || !strings.Contains(u.FailureReason, "media_off") {
		t.Fatalf("upload unit = %+v", u)
	}
	if got.Units[1].State != message.UnitSent || len(s.sender.texts()) != 1 {
		t.Fatalf("the next bubble = %+v, sent %q", got.Units[1], s.sender.texts())
	}
}

// mediaSender is a sender with native media up to limit bytes of images.
type mediaSender struct {
	*sender
	limit int64
	files []platform.MediaFile
}

func (m *mediaSender) MediaLimit(k message.MediaKind) int64 {
	if k == message.MediaImage {
		return m.limit
	}
	return 0
}

func (m *mediaSender) SendMedia(_ context.Context, _ message.Outgoing, f platform.MediaFile) (message.Receipt, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files = append(m.files, f)
	return message.Receipt{MessageIDs: []string{"file-" + f.Name}}, nil
}

// uploads are Files whose uploads have a size and a presigned link.
type uploads map[string]int64

func (u uploads) Open(_ context.Context, m message.Media) (platform.MediaFile, error) {
	size, ok := u[m.UploadID]
	if !ok {
		return platform.MediaFile{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "upload_not_found"}
	}
	return platform.MediaFile{Kind: m.Kind, Name: m.Name, Caption: m.Caption, URL: "https://bucket.example/out/" + m.UploadID, Upload: true, Size: size}, nil
}

// TestMediaNativeWithinTheSendersLimitsElseALink: a kind the sender sends,
// at a size it takes, goes natively; over its size, or a kind it cannot
// send, goes as a link to the upload.
func TestMediaNativeWithinTheSendersLimitsElseALink(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{})
	ms := &mediaSender{sender: s.sender, limit: 100}
	small, big := strings.Repeat("a", 32), strings.Repeat("b", 32)
	s.p.Channels[message.Telegram] = delivery.Channel{Sender: ms, Capabilities: s.sender.caps, Files: uploads{small: 100, big: 101}}
	in := s.create(thread,
		mediaUnit("small#1", message.Media{Kind: message.MediaImage, UploadID: small, Name: "s.png"}),
		mediaUnit("big#1", message.Media{Kind: message.MediaImage, UploadID: big, Name: "b.png"}),
		mediaUnit("clip#1", message.Media{Kind: message.MediaVideo, UploadID: small, Caption: "clip"}))
	for _, id := range []string{"small#1", "big#1", "clip#1"} {
		if err := s.handle(in, id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if len(ms.files) != 1 || ms.files[0].Name != "s.png" {
		t.Fatalf("native sends %+v, want the small image alone", ms.files)
	}
	want := []string{"https://bucket.example/out/" + big, "clip\nhttps://bucket.example/out/" + small}
	if got := s.sender.texts(); !slices.Equal(got, want) {
		t.Fatalf("links %q, want %q", got, want)
	}
	if u := s.get(in).Units[0]; u.State != message.UnitSent || !slices.Equal(u.Receipt, []string{"file-s.png"}) {
		t.Fatalf("native unit = %+v", u)
	}
}

// lookupSender is a media sender whose first file send has an unknown
// outcome, and that can look text up on the platform but not files (as
// Slack: a file message carries no metadata).
type lookupSender struct {
	*mediaSender
	lookups int
}

func (l *lookupSender) SendMedia(ctx context.Context, m message.Outgoing, f platform.MediaFile) (message.Receipt, error) {
	if len(l.files) == 0 {
		_, _ = l.mediaSender.SendMedia(ctx, m, f)
		return message.Receipt{}, &message.SendError{Class: message.FailUnknown, Reason: "no answer after the request was sent"}
	}
	return l.mediaSender.SendMedia(ctx, m, f)
}

func (l *lookupSender) Reconcile(_ context.Context, m message.Outgoing) (message.Receipt, bool, error) {
	l.lookups++
	if m.Content.Media != nil {
		return message.Receipt{}, false, platform.ErrNotReconcilable
	}
	return message.Receipt{}, false, nil
}

// TestUnknownMediaThatCannotBeLookedUpFollowsThePolicy: a file whose send
// may have arrived, on a platform that reconciles text but cannot find a
// file again, is not taken for "not found" (which would resend it): it is
// held under the default policy, the thread going on, and resent only
// under resend.
func TestUnknownMediaThatCannotBeLookedUpFollowsThePolicy(t *testing.T) {
	t.Parallel()
	for _, policy := range []delivery.UnknownPolicy{delivery.UnknownHold, delivery.UnknownResend} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			s := newSetup(t, delivery.Config{Unknown: policy})
			ls := &lookupSender{mediaSender: &mediaSender{sender: s.sender, limit: 100}}
			caps := s.sender.caps
			caps.Reconcile = true
			s.p.Channels[message.Telegram] = delivery.Channel{Sender: ls, Capabilities: caps}
			in := s.create(thread, mediaUnit("pic#1", message.Media{Kind: message.MediaImage, URL: "https://example.com/a.png", Name: "a.png"}), pending("b#1"))
			for range 3 { // the first send, then the unit's returns
				if err := s.handle(in, "pic#1"); err != nil {
					if _, ok := retryAfter(err); !ok {
						t.Fatal(err)
					}
				}
			}
			if err := s.handle(in, "b#1"); err != nil {
				t.Fatal(err)
			}
			got := s.get(in)
			want, sends := message.UnitUnknown, 1
			if policy == delivery.UnknownResend {
				want, sends = message.UnitSent, 2
			}
			if u := got.Units[0]; u.State != want || len(ls.files) != sends || ls.lookups == 0 {
				t.Fatalf("media unit = %s after %d sends and %d lookups, want %s after %d", u.State, len(ls.files), ls.lookups, want, sends)
			}
			if got.Units[1].State != message.UnitSent {
				t.Fatalf("the next bubble = %s, want sent", got.Units[1].State)
			}
		})
	}
}

// TestNativeMediaGetsTheBubbleSplitter: a native sender splits a caption
// too long for its file's message as delivery splits a bubble, within the
// platform's text limit.
func TestNativeMediaGetsTheBubbleSplitter(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{})
	ms := &mediaSender{sender: s.sender, limit: 100}
	caps := s.sender.caps
	caps.TextLimit = 40
	s.p.Channels[message.Telegram] = delivery.Channel{Sender: ms, Capabilities: caps}
	caption := strings.Repeat("word ", 20)
	in := s.create(thread, mediaUnit("pic#1", message.Media{Kind: message.MediaImage, URL: "https://example.com/a.png", Name: "a.png", Caption: caption}))
	if err := s.handle(in, "pic#1"); err != nil {
		t.Fatal(err)
	}
	parts := ms.files[0].CaptionTexts()
	if len(parts) < 3 || strings.Join(strings.Fields(strings.Join(parts, " ")), " ") != strings.TrimSpace(caption) {
		t.Fatalf("caption parts %q, want the caption split within 40", parts)
	}
	for _, p := range parts {
		if len(p) > 40 {
			t.Fatalf("part %q over the limit", p)
		}
	}
}

// declining is a media sender that takes images by their limit but, once it
// has looked at one, declines to send it natively (platform.ErrNotNative),
// as LINE does an audio without its duration.
type declining struct{ *mediaSender }

func (d declining) SendMedia(context.Context, message.Outgoing, platform.MediaFile) (message.Receipt, error) {
	return message.Receipt{}, fmt.Errorf("line send media: %w", platform.ErrNotNative)
}

// TestMediaDeclinedByTheSenderGoesAsALink: a file the sender declines to
// send natively goes as a link exactly as for a platform without native
// media: a caption too long to share a message with the link is split as
// a bubble is, then the link; the receipt keeps every id.
func TestMediaDeclinedByTheSenderGoesAsALink(t *testing.T) {
	t.Parallel()
	s := newSetup(t, delivery.Config{})
	caps := s.sender.caps
	caps.TextLimit = 40
	s.p.Channels[message.Telegram] = delivery.Channel{Sender: declining{&mediaSender{sender: s.sender, limit: 100}}, Capabilities: caps}
	caption := strings.Repeat("word ", 12)
	in := s.create(thread, mediaUnit("a#1", message.Media{Kind: message.MediaImage, URL: "https://example.com/a.png", Caption: caption}))
	if err := s.handle(in, "a#1"); err != nil {
		t.Fatal(err)
	}
	got := s.sender.texts()
	if len(got) != 3 || got[2] != "https://example.com/a.png" || strings.TrimSpace(strings.Join(got[:2], "")) != strings.TrimSpace(caption) {
		t.Fatalf("sent %q, want the caption in two parts, then the link", got)
	}
	if u := s.get(in).Units[0]; u.State != message.UnitSent || len(u.Receipt) != 3 {
		t.Fatalf("unit = %+v, want sent with three ids", u)
	}
}
