package split

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parleyhq/parley/shared/message"
)

// The shared envelope fixtures are realistic agent text (prose, fences,
// emoji, JSON); the corpus in testdata/fuzz/FuzzText was grown from them.
const fixtureDir = "../../docs/fixtures"

// FuzzText: parts are non-empty, each fits by the platform's counting, cuts
// respect UTF-8 and grapheme clusters, and the parts give back the text but
// for the documented exceptions (dropped whitespace runs, repaired fences).
func FuzzText(f *testing.F) {
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "manifest.json" || e.Name() == "README.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(fixtureDir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), 40, uint8(0))
	}
	f.Add("alpha\nbeta\ngamma", 6, uint8(1))
	f.Add("```go\nfunc main() {\n\tprintln(1)\n}\n```\n", 20, uint8(2))
	f.Add("🇯🇵🇫🇷 👩‍👩‍👧 e\u0301\r\n\r\nx", 5, uint8(1))
	f.Add("abc"+"                    "+"def", 4, uint8(0))
	f.Fuzz(func(t *testing.T, text string, limit int, counting uint8) {
		c := []message.Counting{message.CountRunes, message.CountUTF16, message.CountBytes}[int(counting)%3]
		// A limit below one code point's worth cannot be met; Parley's
		// platforms allow thousands.
		limit = 4 + abs(limit)%300
		checkText(t, text, message.Capabilities{TextLimit: limit, Counting: c})
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // math.MinInt
			return 0
		}
		return -n
	}
	return n
}
