package telegram

import (
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkReceiver(b *testing.B) {
	r := newTestReceiver(b)
	body, err := os.ReadFile(filepath.Join(eventsDir, "topic-message.json"))
	if err != nil {
		b.Fatal(err)
	}
	req := request(body, testSecret)
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Verify(req); err != nil {
			b.Fatal(err)
		}
		if _, err := r.Parse(req); err != nil {
			b.Fatal(err)
		}
	}
}
