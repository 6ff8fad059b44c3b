package platform_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// TestFit: a text that fits is kept; one that does not keeps its start,
// whole characters and clusters, and ends in "…", within the limit in
// every counting.
func TestFit(t *testing.T) {
	t.Parallel()
	for _, c := range []message.Counting{message.CountRunes, message.CountUTF16, message.CountBytes} {
		if got := platform.Fit("short enough", 20, c); got != "short enough" {
			t.Errorf("%s: a text that fits became %q", c, got)
		}
		for _, long := range []string{
			"Which seat?\n\n✓ Window 🦜🦜🦜 and a long answer",
			"Which seat?\n\n✓ e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301",
			"Which seat?\n\n👩\u200D👩\u200D👧 👍🏽👍🏽👍🏽",
		} {
			got := platform.Fit(long, 20, c)
			kept := strings.TrimSuffix(got, "…")
			if c.Len(got) > 20 || kept == got || !strings.HasPrefix(long, kept) {
				t.Errorf("%s: Fit(%q) = %q (%d)", c, long, got, c.Len(got))
			}
			if rest := strings.TrimPrefix(long, kept); rest != "" && (platform.Joins([]rune(rest)[0]) || strings.HasSuffix(kept, "\u200D")) {
				t.Errorf("%s: Fit(%q) = %q parts a cluster", c, long, got)
			}
		}
	}
}
