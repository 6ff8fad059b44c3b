package slack

import (
	"testing"
)

func BenchmarkReceiver(b *testing.B) {
	r := &Receiver{SigningSecret: testSecret}
	req := signed(readSample(b, "app-mention.json"), sampleNow, sampleNow)
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
