package split

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
)

// bench20KB is 20 KB of prose in paragraphs, with a little non-ASCII.
var bench20KB = func() string {
	para := "Your itinerary changed overnight: the airline moved the 18:05 departure to 20:00, and the gate is now B12. " +
		"Boarding starts forty minutes before departure — café vouchers are at the desk. "
	var sb strings.Builder
	for sb.Len() < 20*1024 {
		sb.WriteString(para)
		sb.WriteString(para)
		sb.WriteString("\n\n")
	}
	return sb.String()
}()

// Splitting alone, on Discord's 2000 code points, for the splitter's cost.
func BenchmarkText20KB(b *testing.B) {
	caps := message.Capabilities{TextLimit: 2000, Counting: message.CountRunes}
	b.SetBytes(int64(len(bench20KB)))
	b.ReportAllocs()
	for b.Loop() {
		if len(Text(bench20KB, caps)) < 10 {
			b.Fatal("too few parts")
		}
	}
}
