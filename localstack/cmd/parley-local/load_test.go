package main

import (
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
)

// TestLoadRun: make load drives the real local stack and passes.
func TestLoadRun(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	getenv := func(k string) string {
		if k == "PARLEY_LOCAL_LOG" {
			return t.TempDir() + "/parley-local.log"
		}
		return ""
	}
	if err := load(t.Context(), &out, getenv, []string{"-threads", "3", "-messages", "3", "-redeliver", "0.5"}); err != nil {
		t.Fatalf("load: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "exactly once, in order") || !strings.Contains(out.String(), "p99") {
		t.Fatalf("output:\n%s", out.String())
	}
}

// TestLoadReportFindsViolations: the checker fails a missing, a doubled and
// an out-of-order reply.
func TestLoadReportFindsViolations(t *testing.T) {
	t.Parallel()
	at := time.Now()
	d := func(chat, text string) fakeplatform.Delivery {
		return fakeplatform.Delivery{Chat: chat, Text: text, At: at}
	}
	sent := map[string]time.Time{"t0 m0": at, "t0 m1": at, "t1 m0": at, "t1 m1": at}
	ok := []fakeplatform.Delivery{d("5000000", "t0 m0"), d("5000001", "t1 m0"), d("5000000", "t0 m1"), d("5000001", "t1 m1")}
	if r := report(ok, sent, 2, 2, 0, time.Second); len(r.Problems) != 0 {
		t.Fatalf("a clean run reported %q", r.Problems)
	}
	for name, ds := range map[string][]fakeplatform.Delivery{
		"missing":      ok[:3],
		"doubled":      append(append([]fakeplatform.Delivery{}, ok...), d("5000000", "t0 m1")),
		"out of order": {d("5000000", "t0 m1"), d("5000001", "t1 m0"), d("5000000", "t0 m0"), d("5000001", "t1 m1")},
	} {
		if r := report(ds, sent, 2, 2, 0, time.Second); len(r.Problems) == 0 {
			t.Errorf("%s: no problem reported", name)
		}
	}
}
