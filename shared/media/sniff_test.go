package media

import "testing"

// m4a is the start of an MP4 audio file (major brand M4A, compatible mp42),
// as LINE records voice notes.
const m4a = "\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00M4A mp42isom\x00\x00\x00\x08free"

func TestSniffTakesAudioInAVideoContainer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		declared, body, want string
		ok                   bool
	}{
		{"audio/mp4", m4a, "audio/mp4", true},
		{"audio/x-m4a", m4a, "audio/x-m4a", true},
		{"", m4a, "video/mp4", true},
		{"image/jpeg", m4a, "image/jpeg", false},
		{"audio/ogg", "OggS\x00\x02", "audio/ogg", true},
	} {
		got, ok := sniff(tc.declared, []byte(tc.body))
		if got != tc.want || ok != tc.ok {
			t.Errorf("sniff(%q, %q) = %q, %v; want %q, %v", tc.declared, tc.body, got, ok, tc.want, tc.ok)
		}
	}
}
