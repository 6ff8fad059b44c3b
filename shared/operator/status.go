package operator

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/resources"
)

// functions are the stack's functions' names: Operator.Functions, else the
// core's.
func (o *Operator) functions() []string {
	if len(o.Functions) > 0 {
		return o.Functions
	}
	var names []string
	for _, f := range resources.FunctionsWith(nil) {
		names = append(names, f.Name)
	}
	return names
}

// NotLocal says a figure only CloudWatch has, on make run's stack.
const NotLocal = "not available locally"

// QueueStatus is a queue's state.
type QueueStatus struct {
	Name string `json:"name"`
	// Visible waits to be received; InFlight is received and not deleted
	// (being worked on, or parked: a rate-limited unit, a turn waiting for
	// its agent's post); Delayed is not visible yet.
	Visible  int `json:"visible"`
	InFlight int `json:"in_flight"`
	Delayed  int `json:"delayed"`
	// OldestAge is the age of the oldest message (CloudWatch's
	// ApproximateAgeOfOldestMessage, its latest minute); OldestAgeNote
	// says why it is missing.
	OldestAge     *time.Duration `json:"oldest_age_ns,omitempty"`
	OldestAgeNote string         `json:"oldest_age_note,omitempty"`
	// DeadLetters is the count of its dead-letter queue.
	DeadLetters int `json:"dead_letters"`
}

// FunctionStatus is a function's errors over the status's window.
type FunctionStatus struct {
	Name string `json:"name"`
	// Errors is CloudWatch's Errors metric (invocations that failed or
	// timed out); LogErrors counts ERROR lines in make run's log instead.
	Errors    *int   `json:"errors,omitempty"`
	LogErrors *int   `json:"log_errors,omitempty"`
	Note      string `json:"note,omitempty"`
}

// Status is the stack at a glance.
type Status struct {
	At     time.Time     `json:"at"`
	Window time.Duration `json:"window_ns"`
	Queues []QueueStatus `json:"queues"`
	// HeldUnits and FailedUnits are on the attention list now.
	HeldUnits   int              `json:"held_units"`
	FailedUnits int              `json:"failed_units"`
	Functions   []FunctionStatus `json:"functions"`
	Notes       []string         `json:"notes,omitempty"`
}

// StatusWindow is how far back a status counts function errors.
const StatusWindow = time.Hour

// Status reads queue depths, oldest message ages, dead-letter counts, the
// units on the attention list and each function's errors over the last
// StatusWindow: CloudWatch's where deployed; on make run's stack, what the
// emulators and the log file hold, and NotLocal for the rest.
func (o *Operator) Status(ctx context.Context) (Status, error) {
	now := o.now()
	st := Status{At: now, Window: StatusWindow}
	for _, q := range o.Target.Queues {
		qs := QueueStatus{Name: q.Name}
		out, err := o.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.URL), AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed,
		}})
		if err != nil {
			return Status{}, fmt.Errorf("read %s: %w", q.Name, err)
		}
		qs.Visible, _ = strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
		qs.InFlight, _ = strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
		qs.Delayed, _ = strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed)])
		if qs.DeadLetters, err = o.count(ctx, q.DLQURL); err != nil {
			return Status{}, err
		}
		st.Queues = append(st.Queues, qs)
	}
	entries, err := o.Store.Attention(ctx, 1000)
	if err != nil {
		return Status{}, fmt.Errorf("read the attention index: %w", err)
	}
	for _, e := range entries {
		in, err := o.Store.GetIntent(ctx, e.IntentID)
		if err != nil {
			continue
		}
		for _, u := range in.Units {
			switch {
			case !u.NeedsOperator():
			case u.State == message.UnitUnknown:
				st.HeldUnits++
			default:
				st.FailedUnits++
			}
		}
	}
	if o.Metrics == nil {
		o.localFigures(ctx, &st)
		return st, nil
	}
	return st, o.cloudWatch(ctx, &st)
}

func (o *Operator) localFigures(ctx context.Context, st *Status) {
	for i := range st.Queues {
		st.Queues[i].OldestAgeNote = NotLocal + " (fauxqs publishes no CloudWatch metrics)"
	}
	var counts map[string]int
	if fl, ok := o.Logs.(FileLogs); ok {
		counts, _ = fl.Counts(ctx, st.At.Add(-st.Window))
	}
	for _, fn := range o.functions() {
		fs := FunctionStatus{Name: fn, Note: NotLocal + " (no Lambda metrics)"}
		if counts != nil {
			n := counts[fn]
			fs.LogErrors = &n
			fs.Note += "; ERROR lines in the local log instead"
		}
		st.Functions = append(st.Functions, fs)
	}
}

// cloudWatch fills what only CloudWatch knows, in one GetMetricData call.
func (o *Operator) cloudWatch(ctx context.Context, st *Status) error {
	var queries []cwtypes.MetricDataQuery
	stat := func(id, ns, metric, dim, value, statistic string, period int32) {
		queries = append(queries, cwtypes.MetricDataQuery{Id: aws.String(id), MetricStat: &cwtypes.MetricStat{
			Metric: &cwtypes.Metric{Namespace: aws.String(ns), MetricName: aws.String(metric),
				Dimensions: []cwtypes.Dimension{{Name: aws.String(dim), Value: aws.String(value)}}},
			Period: aws.Int32(period), Stat: aws.String(statistic),
		}})
	}
	for i, q := range o.Target.Queues {
		stat(fmt.Sprintf("age%d", i), "AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", queueName(q.URL), "Maximum", 60)
	}
	names := o.functions()
	for i, fn := range names {
		if phys := o.Target.Functions[fn]; phys != "" {
			stat(fmt.Sprintf("err%d", i), "AWS/Lambda", "Errors", "FunctionName", phys, "Sum", int32(st.Window/time.Second))
		}
	}
	out, err := o.Metrics.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{
		MetricDataQueries: queries, StartTime: aws.Time(st.At.Add(-st.Window)), EndTime: aws.Time(st.At),
		ScanBy: cwtypes.ScanByTimestampDescending,
	})
	if err != nil {
		return fmt.Errorf("read CloudWatch metrics: %w", err)
	}
	byID := map[string][]float64{}
	for _, r := range out.MetricDataResults {
		byID[aws.ToString(r.Id)] = r.Values
	}
	for i := range st.Queues {
		if v := byID[fmt.Sprintf("age%d", i)]; len(v) > 0 {
			d := time.Duration(v[0]) * time.Second
			st.Queues[i].OldestAge = &d
		} else {
			st.Queues[i].OldestAgeNote = "no data in the last hour (an idle queue publishes none)"
		}
	}
	for i, fn := range names {
		fs := FunctionStatus{Name: fn}
		switch v, ok := byID[fmt.Sprintf("err%d", i)]; {
		case o.Target.Functions[fn] == "":
			fs.Note = "not in the stack's outputs"
		case ok:
			n := 0
			for _, x := range v {
				n += int(x)
			}
			fs.Errors = &n
		}
		st.Functions = append(st.Functions, fs)
	}
	return nil
}

// queueName is the name in a queue URL (its last path segment).
func queueName(url string) string {
	for i := len(url) - 1; i >= 0; i-- {
		if url[i] == '/' {
			return url[i+1:]
		}
	}
	return url
}
