package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/metrics"
)

func TestCountIsOneLineThatIsValidEMF(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil)).With("platform", "events")
	ts := time.Date(2026, 11, 29, 22, 30, 0, 0, time.UTC)
	log.LogAttrs(context.Background(), slog.LevelInfo, "event suppressed",
		metrics.Count(ts, metrics.TriageDecision,
			metrics.Dim{Name: metrics.DimDecision, Value: "suppressed"},
			metrics.Dim{Name: metrics.DimReason, Value: "quiet_hours"})...)

	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 1 {
		t.Fatalf("want one line, got %d: %s", len(lines), buf.String())
	}
	points, err := metrics.Decode(lines[0])
	if err != nil {
		t.Fatalf("Decode(%s): %v", lines[0], err)
	}
	if len(points) != 1 {
		t.Fatalf("points = %+v", points)
	}
	p := points[0]
	if p.Namespace != "Parley" || p.Name != "TriageDecision" || p.Unit != "Count" || p.Value != 1 || !p.Time.Equal(ts) {
		t.Fatalf("point = %+v", p)
	}
	if len(p.Dims) != 1 || p.Dims[0]["decision"] != "suppressed" || p.Dims[0]["reason"] != "quiet_hours" || len(p.Dims[0]) != 2 {
		t.Fatalf("dims = %+v", p.Dims)
	}
	// The dimensions are the line's own stable fields, written once.
	if n := bytes.Count(lines[0], []byte(`"decision":`)); n != 1 {
		t.Fatalf("decision written %d times: %s", n, lines[0])
	}
}

func TestDecodeRefusesWhatCloudWatchWouldDrop(t *testing.T) {
	for name, line := range map[string]string{
		"not json":          `nope`,
		"no _aws":           `{"TriageDecision":1}`,
		"no timestamp":      `{"_aws":{"CloudWatchMetrics":[{"Namespace":"P","Dimensions":[],"Metrics":[{"Name":"M"}]}]},"M":1}`,
		"no directives":     `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[]},"M":1}`,
		"no namespace":      `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Dimensions":[],"Metrics":[{"Name":"M"}]}]},"M":1}`,
		"metric missing":    `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"P","Dimensions":[],"Metrics":[{"Name":"M"}]}]}}`,
		"metric not number": `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"P","Dimensions":[],"Metrics":[{"Name":"M"}]}]},"M":"1"}`,
		"dimension missing": `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"P","Dimensions":[["d"]],"Metrics":[{"Name":"M"}]}]},"M":1}`,
		"dimension number":  `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"P","Dimensions":[["d"]],"Metrics":[{"Name":"M"}]}]},"M":1,"d":2}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := metrics.Decode([]byte(line)); !errors.Is(err, metrics.ErrNotEMF) {
				t.Fatalf("Decode = %v, want ErrNotEMF", err)
			}
		})
	}
	ok := `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"P","Dimensions":[["d"]],"Metrics":[{"Name":"M"}]}]},"M":[2,3],"d":"x"}`
	if p, err := metrics.Decode([]byte(ok)); err != nil || p[0].Value != 2 || p[0].Dims[0]["d"] != "x" {
		t.Fatalf("Decode(valid) = %+v, %v", p, err)
	}
}
