package delivery_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/delivery"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
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
