package envelope

import (
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
)

func mediaEnvelope(media string) []byte {
	return []byte(`{"schema":"openab.turn.v1","messages":[{"id":"m","media":` + media + `}]}`)
}

// TestMediaRefusals: every rule of a media bubble refuses with bad_media
// (or the generic reason of its kind) at the member's path, never a panic.
func TestMediaRefusals(t *testing.T) {
	t.Parallel()
	long := `"https://example.com/` + strings.Repeat("a", message.MaxMediaURL) + `"`
	cases := []struct {
		media, reason, path string
	}{
		{`{"kind":"image"}`, "bad_media", "messages[0].media"},
		{`{"kind":"sticker","url":"https://example.com/a"}`, "bad_media", "messages[0].media.kind"},
		{`{"url":"https://example.com/a"}`, "missing_field", "messages[0].media.kind"},
		{`{"kind":"image","url":"ftp://example.com/a"}`, "bad_media", "messages[0].media.url"},
		{`{"kind":"image","url":"https://user:pw@example.com/a"}`, "bad_media", "messages[0].media.url"},
		{`{"kind":"image","url":"/relative.png"}`, "bad_media", "messages[0].media.url"},
		{`{"kind":"image","url":` + long + `}`, "bad_media", "messages[0].media.url"},
		{`{"kind":"image","url":7}`, "wrong_type", "messages[0].media.url"},
		{`{"kind":"file","upload_id":"../../etc/passwd"}`, "bad_media", "messages[0].media.upload_id"},
		{`{"kind":"file","upload_id":"0123456789ABCDEF0123456789ABCDEF"}`, "bad_media", "messages[0].media.upload_id"},
		{`{"kind":"file","url":"https://example.com/a","name":"../a.pdf"}`, "bad_media", "messages[0].media.name"},
		{`{"kind":"file","url":"https://example.com/a","name":" "}`, "bad_media", "messages[0].media.name"},
		{`{"kind":"file","url":"https://example.com/a","caption":"  "}`, "blank_text", "messages[0].media.caption"},
		{`{"kind":"file","url":"https://example.com/a","size":3}`, "unknown_field", "messages[0].media.size"},
		{`"https://example.com/a"`, "wrong_type", "messages[0].media"},
		{`{"kind":"audio","url":"https://example.com/a.m4a","duration_ms":0}`, "bad_media", "messages[0].media.duration_ms"},
		{`{"kind":"audio","url":"https://example.com/a.m4a","duration_ms":1.5}`, "bad_media", "messages[0].media.duration_ms"},
		{`{"kind":"audio","url":"https://example.com/a.m4a","duration_ms":86400001}`, "bad_media", "messages[0].media.duration_ms"},
		{`{"kind":"audio","url":"https://example.com/a.m4a","duration_ms":"3000"}`, "wrong_type", "messages[0].media.duration_ms"},
		{`{"kind":"image","url":"https://example.com/a.png","duration_ms":3000}`, "bad_media", "messages[0].media.duration_ms"},
		{`{"kind":"video","url":"https://example.com/a.mp4","preview_url":"http://example.com/a.jpg"}`, "bad_media", "messages[0].media.preview_url"},
		{`{"kind":"video","url":"https://example.com/a.mp4","preview_url":7}`, "wrong_type", "messages[0].media.preview_url"},
		{`{"kind":"voice","url":"https://example.com/a.m4a","preview_url":"https://example.com/a.jpg"}`, "bad_media", "messages[0].media.preview_url"},
	}
	for _, c := range cases {
		_, err := Parse(mediaEnvelope(c.media))
		var pe *ParseError
		if !errors.As(err, &pe) || string(pe.Reason) != c.reason || pe.Path != c.path {
			t.Errorf("%s: got %v, want %s at %s", c.media, err, c.reason, c.path)
		}
	}
}

// TestMediaCaptionCountsAgainstTheBubbleLimit: a caption is text people
// read, held to max_bubble_chars like a bubble's; the unit is never split.
func TestMediaCaptionCountsAgainstTheBubbleLimit(t *testing.T) {
	t.Parallel()
	body := mediaEnvelope(`{"kind":"image","url":"https://example.com/a.png","caption":"` + strings.Repeat("é", 30) + `"}`)
	_, err := Build(Reply{Body: body}, Config{MaxBubbleChars: 29}, message.Capabilities{TextLimit: 10, Counting: message.CountRunes})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitMaxBubbleChars || le.BubbleID != "m" || le.Got != 30 {
		t.Fatalf("Build = %v, want max_bubble_chars on m (30)", err)
	}
	plan, err := Build(Reply{Body: body}, Config{}, message.Capabilities{TextLimit: 10, Counting: message.CountRunes})
	if err != nil || len(plan.Units) != 1 {
		t.Fatalf("Build = %+v, %v; want one unit", plan, err)
	}
	c := plan.Units[0].Content()
	if c.Kind() != message.ContentMedia || c.Media.Caption != strings.Repeat("é", 30) || c.Media.URL != "https://example.com/a.png" {
		t.Fatalf("content = %+v", c.Media)
	}
}

// TestMediaDurationAndPreview: the members LINE needs for native audio and
// video are read onto the unit's media, and kept through its content.
func TestMediaDurationAndPreview(t *testing.T) {
	t.Parallel()
	env := []byte(`{"schema":"openab.turn.v1","messages":[` +
		`{"id":"a","media":{"kind":"voice","url":"https://example.com/n.m4a","duration_ms":4200}},` +
		`{"id":"v","media":{"kind":"video","upload_id":"0123456789abcdef0123456789abcdef","duration_ms":6e4,"preview_url":"https://example.com/v.jpg"}}]}`)
	plan, err := Build(Reply{Body: env}, Config{}, message.Capabilities{TextLimit: 100})
	if err != nil || len(plan.Units) != 2 {
		t.Fatalf("Build = %+v, %v", plan, err)
	}
	a, v := plan.Units[0].Content().Media, plan.Units[1].Content().Media
	if a.DurationMS != 4200 || a.PreviewURL != "" || v.DurationMS != 60000 || v.PreviewURL != "https://example.com/v.jpg" {
		t.Fatalf("media = %+v, %+v", a, v)
	}
}
