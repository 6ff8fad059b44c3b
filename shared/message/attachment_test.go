package message

import "testing"

func TestKindOfType(t *testing.T) {
	for mime, want := range map[string]AttachmentKind{
		"image/png": AttachImage, "IMAGE/JPEG": AttachImage, "audio/ogg": AttachAudio,
		"video/mp4": AttachVideo, "application/pdf": AttachFile, "": AttachFile, "imagefile": AttachFile,
	} {
		if got := KindOfType(mime); got != want {
			t.Errorf("KindOfType(%q) = %s, want %s", mime, got, want)
		}
	}
}
