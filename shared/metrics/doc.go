// Package metrics turns a structured log line into a CloudWatch metric with
// the Embedded Metric Format (EMF), so counting a decision costs no API call:
// CloudWatch Logs extracts the metric from the line Lambda already ships.
//
// One line is both the slog record and the EMF document. Count returns the
// attributes to add to a log call: the dimensions as top-level fields (they
// double as the line's own stable fields, such as decision and reason), the
// metric's value, and the "_aws" metadata that names them:
//
//	log.LogAttrs(ctx, slog.LevelInfo, "event suppressed",
//		metrics.Count(now, metrics.TriageDecision,
//			metrics.Dim{Name: "decision", Value: "suppressed"},
//			metrics.Dim{Name: "reason", Value: "cooldown"})...)
//
// writes (with slog's JSON handler)
//
//	{"time":"…","level":"INFO","msg":"event suppressed","decision":"suppressed","reason":"cooldown",
//	 "TriageDecision":1,"_aws":{"Timestamp":1764432000000,"CloudWatchMetrics":[{"Namespace":"Parley",
//	 "Dimensions":[["decision","reason"]],"Metrics":[{"Name":"TriageDecision","Unit":"Count"}]}]}}
//
// The attributes must stay at the top level of the line: do not log them
// through a logger made with WithGroup. Decode checks a line against the EMF
// specification (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html)
// and returns its data points; tests use it to prove what a line counts.
package metrics
