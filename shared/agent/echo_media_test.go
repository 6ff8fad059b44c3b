package agent_test

import (
	"fmt"
	"testing"

	"github.com/parleyhq/parley/shared/message"
)

// The echo agent describes every attachment: what it is, what the platform
// said of it and the start of its digest, or why it has no URL; then the
// caption's echo.
func TestBuiltinEchoDescribesAttachments(t *testing.T) {
	t.Parallel()
	req := turn("what plant is this?")
	req.Event.Attachments = []message.Attachment{
		{Kind: message.AttachImage, MIME: "image/jpeg", Size: 4116, Width: 800, Height: 600, URL: "https://example.com/0", SHA256: "0123456789abcdef0123"},
		{Index: 1, Kind: message.AttachVoice, MIME: "audio/ogg", Size: 2062, Duration: 3, URL: "https://example.com/1", SHA256: "fedcba9876543210fedc"},
		{Index: 2, Kind: message.AttachFile, MIME: "application/pdf", Size: 110, Name: "pass \"B\".pdf", URL: "https://example.com/2", SHA256: "aaaaaaaaaaaaaaaaaaaa"},
		{Index: 3, Kind: message.AttachVideo, MIME: "video/mp4", Name: "big.mp4", Reason: message.ReasonTooLarge},
	}
	reply, err := echoClient(t).Call(t.Context(), req)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	want := []string{
		"image 0: image/jpeg, 4116 bytes, 800x600, sha256 0123456789ab",
		"voice 1: audio/ogg, 2062 bytes, 3 s, sha256 fedcba987654",
		`file 2: application/pdf, 110 bytes, "pass \"B\".pdf", sha256 aaaaaaaaaaaa`,
		"video 3: not stored (too_large)",
		"echo: what plant is this?",
	}
	if got := texts(decodeEnvelope(t, reply.Body)); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("bubbles %q, want %q", got, want)
	}
}
