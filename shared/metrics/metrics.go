package metrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Namespace is the CloudWatch namespace of every Parley metric.
const Namespace = "Parley"

// Metric names.
const (
	// TriageDecision counts one decision on a proactive event, with the
	// dimensions decision (accepted|suppressed) and, when suppressed,
	// reason (duplicate|quiet_hours|cooldown|daily_cap).
	TriageDecision = "TriageDecision"
	// Sweep counts one thing the sweeper found, with the dimension finding
	// (redriven|stuck_claim|held_unknown|undeferred).
	Sweep = "Sweep"
	// Question counts one step of a question, with the dimension outcome
	// (asked|answered|declined|expired|superseded|off|no_owner).
	Question = "Question"
)

// Dimension names used with TriageDecision: the log line's own fields.
const (
	DimDecision = "decision"
	DimReason   = "reason"
	// DimFinding is Sweep's dimension.
	DimFinding = "finding"
	// DimOutcome is Question's dimension.
	DimOutcome = "outcome"
)

// UnitCount is the CloudWatch unit of a count.
const UnitCount = "Count"

// Dim is one dimension: a top-level field of the line and its value.
type Dim struct {
	Name  string
	Value string
}

// Document is the "_aws" member of an EMF line.
type Document struct {
	// Timestamp is the metric's time in Unix milliseconds.
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []Directive `json:"CloudWatchMetrics"`
}

// Directive tells CloudWatch which top-level members are metrics and which
// are their dimensions.
type Directive struct {
	Namespace  string       `json:"Namespace"`
	Dimensions [][]string   `json:"Dimensions"`
	Metrics    []Definition `json:"Metrics"`
}

// Definition names one metric member of the line.
type Definition struct {
	Name string `json:"Name"`
	Unit string `json:"Unit,omitempty"`
}

// Count returns the attributes that make one log line an EMF record counting
// 1 of metric at ts, in Namespace, with dims as its one dimension set. Each
// dimension becomes a top-level string field of the line: do not log a field
// of the same name again.
func Count(ts time.Time, metric string, dims ...Dim) []slog.Attr {
	names := make([]string, len(dims))
	attrs := make([]slog.Attr, 0, len(dims)+2)
	for i, d := range dims {
		names[i] = d.Name
		attrs = append(attrs, slog.String(d.Name, d.Value))
	}
	doc := Document{
		Timestamp: ts.UnixMilli(),
		CloudWatchMetrics: []Directive{{
			Namespace:  Namespace,
			Dimensions: [][]string{names},
			Metrics:    []Definition{{Name: metric, Unit: UnitCount}},
		}},
	}
	return append(attrs, slog.Int(metric, 1), slog.Any("_aws", doc))
}

// Point is one metric value a line records.
type Point struct {
	Namespace string
	Name      string
	Unit      string
	Value     float64
	Time      time.Time
	// Dims are the dimension values of each dimension set, by name.
	Dims []map[string]string
}

// ErrNotEMF is returned by Decode for a line that is not a valid EMF record.
var ErrNotEMF = errors.New("not an EMF record")

// Decode checks one log line against the EMF specification and returns the
// data points it records: a JSON object whose "_aws" member has a Timestamp
// and at least one CloudWatchMetrics directive; every metric named there is a
// top-level number (or array of numbers: the first is returned), every
// dimension a top-level string, at most 30 dimensions per set.
func Decode(line []byte) ([]Point, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(line, &root); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrNotEMF)
	}
	raw, ok := root["_aws"]
	if !ok {
		return nil, fmt.Errorf("%w: no _aws member", ErrNotEMF)
	}
	var doc struct {
		Timestamp         *int64      `json:"Timestamp"`
		CloudWatchMetrics []Directive `json:"CloudWatchMetrics"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%w: _aws: %v", ErrNotEMF, err)
	}
	if doc.Timestamp == nil || *doc.Timestamp <= 0 {
		return nil, fmt.Errorf("%w: _aws.Timestamp missing", ErrNotEMF)
	}
	if len(doc.CloudWatchMetrics) == 0 {
		return nil, fmt.Errorf("%w: _aws.CloudWatchMetrics empty", ErrNotEMF)
	}
	var points []Point
	for _, dir := range doc.CloudWatchMetrics {
		if dir.Namespace == "" || len(dir.Metrics) == 0 || len(dir.Metrics) > 100 {
			return nil, fmt.Errorf("%w: a directive needs a Namespace and 1-100 Metrics", ErrNotEMF)
		}
		var dims []map[string]string
		for _, set := range dir.Dimensions {
			if len(set) > 30 {
				return nil, fmt.Errorf("%w: more than 30 dimensions in a set", ErrNotEMF)
			}
			vals := map[string]string{}
			for _, name := range set {
				var v string
				if err := json.Unmarshal(root[name], &v); err != nil || root[name] == nil {
					return nil, fmt.Errorf("%w: dimension %q is not a top-level string", ErrNotEMF, name)
				}
				vals[name] = v
			}
			dims = append(dims, vals)
		}
		for _, m := range dir.Metrics {
			v, err := metricValue(root[m.Name])
			if m.Name == "" || err != nil {
				return nil, fmt.Errorf("%w: metric %q is not a top-level number", ErrNotEMF, m.Name)
			}
			points = append(points, Point{
				Namespace: dir.Namespace, Name: m.Name, Unit: m.Unit, Value: v,
				Time: time.UnixMilli(*doc.Timestamp).UTC(), Dims: dims,
			})
		}
	}
	return points, nil
}

func metricValue(raw json.RawMessage) (float64, error) {
	if raw == nil {
		return 0, errors.New("absent")
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err == nil {
		return v, nil
	}
	var vs []float64
	if err := json.Unmarshal(raw, &vs); err != nil || len(vs) == 0 {
		return 0, errors.New("not a number")
	}
	return vs[0], nil
}
