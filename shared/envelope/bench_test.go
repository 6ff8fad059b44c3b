package envelope

import (
	"encoding/json"
	"strings"
	"testing"
)

// Benchmarks come in pairs: Build on a body, and the baseline of decoding
// the same body with json.Unmarshal into map[string]any, in the same run.
// Compare ns/op and allocs/op of each pair (docs/envelope.md has figures).

var benchEnvelope = []byte(`{"schema":"openab.turn.v1","messages":[` +
	`{"id":"bubble_1","text":"on it"},` +
	`{"id":"bubble_2","text":"your flight moved to 8pm\ngate B12"},` +
	`{"id":"bubble_3","text":"I've added the new time to your calendar and set a reminder 2 hours before."}],` +
	`"next":{"type":"stop"}}`)

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

func BenchmarkBuildEnvelope(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		p, err := Build(Reply{Body: benchEnvelope, ContentType: "application/json"}, Config{}, telegram)
		if err != nil || len(p.Units) != 3 {
			b.Fatal(err)
		}
	}
}

func BenchmarkBaselineEnvelope(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(benchEnvelope, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuildText20KB(b *testing.B) {
	body := []byte(bench20KB)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := Build(Reply{Body: body, ContentType: "text/plain"}, Config{}, telegram)
		if err != nil || len(p.Units) < 5 {
			b.Fatal(err, len(p.Units))
		}
	}
}

// The text is not JSON; its baseline decodes the same text as a JSON
// string member, the smallest JSON that carries it.
func BenchmarkBaselineText20KB(b *testing.B) {
	body, _ := json.Marshal(map[string]string{"text": bench20KB})
	b.SetBytes(int64(len(bench20KB)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			b.Fatal(err)
		}
	}
}
