package operator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/parleyhq/parley/shared/operator"
)

// TestStatusOnTheEmulatorsSaysWhatIsNotLocal: queue depths and
// dead-letter counts come from the queues, held and failed units from the
// attention index; what only CloudWatch knows is said to be not available
// locally, and function errors are counted from the log file instead.
func TestStatusOnTheEmulatorsSaysWhatIsNotLocal(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	s.op.Functions = []string{"telegram", "turn", "delivery"}
	s.message("970001", s.now.Add(-time.Minute), []string{"a"}, held)
	s.deadLetter("970002", s.now.Add(-time.Minute))
	s.line(s.now.Add(-time.Minute), "ERROR", "unit outcome unknown: held for an operator", "delivery")
	s.line(s.now.Add(-time.Minute), "ERROR", "event not acknowledged", "ingress", "platform", "telegram")
	s.line(s.now.Add(-2*time.Hour), "ERROR", "an hour before the window", "delivery")

	st, err := s.op.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Queues) != 2 || st.Queues[0].Name != "inbound" || st.Queues[0].DeadLetters != 1 || !strings.Contains(st.Queues[0].OldestAgeNote, operator.NotLocal) {
		t.Errorf("queues %+v", st.Queues)
	}
	if st.HeldUnits != 1 || st.FailedUnits != 0 {
		t.Errorf("held %d failed %d, want 1 and 0", st.HeldUnits, st.FailedUnits)
	}
	errs := map[string]int{}
	for _, f := range st.Functions {
		if f.LogErrors == nil || !strings.Contains(f.Note, operator.NotLocal) {
			t.Errorf("function %+v: want log errors and a not-local note", f)
			continue
		}
		errs[f.Name] = *f.LogErrors
	}
	if errs["delivery"] != 1 || errs["telegram"] != 1 || errs["turn"] != 0 {
		t.Errorf("errors by function %v", errs)
	}
}

// metrics is CloudWatch's GetMetricData for the queries it is asked: one
// value per query id it knows.
type metrics struct {
	values map[string]float64
	asked  *cloudwatch.GetMetricDataInput
}

func (m *metrics) GetMetricData(_ context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	m.asked = in
	out := &cloudwatch.GetMetricDataOutput{}
	for _, q := range in.MetricDataQueries {
		if v, ok := m.values[aws.ToString(q.Id)]; ok {
			out.MetricDataResults = append(out.MetricDataResults, cwtypes.MetricDataResult{Id: q.Id, Values: []float64{v}})
		}
	}
	return out, nil
}

// TestStatusReadsCloudWatchWhereDeployed: with CloudWatch, each queue's
// oldest message age and each function's errors come from its metrics,
// named by the stack's outputs.
func TestStatusReadsCloudWatchWhereDeployed(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	s.op.Functions = []string{"turn", "delivery"}
	s.op.Target.Functions = map[string]string{"turn": "Parley-Turn-1", "delivery": "Parley-Delivery-1"}
	m := &metrics{values: map[string]float64{"age0": 125, "err0": 3}}
	s.op.Metrics = m
	st, err := s.op.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if a := st.Queues[0].OldestAge; a == nil || *a != 125*time.Second {
		t.Errorf("inbound oldest age %v, want 125s", a)
	}
	if st.Queues[1].OldestAge != nil || st.Queues[1].OldestAgeNote == "" {
		t.Errorf("outbound %+v: want no age and a note", st.Queues[1])
	}
	if e := st.Functions[0].Errors; e == nil || *e != 3 || st.Functions[1].Errors != nil {
		t.Errorf("functions %+v", st.Functions)
	}
	var dims []string
	for _, q := range m.asked.MetricDataQueries {
		dims = append(dims, aws.ToString(q.MetricStat.Metric.Dimensions[0].Value))
	}
	if !strings.Contains(strings.Join(dims, " "), "Parley-Turn-1") || !strings.Contains(strings.Join(dims, " "), "-inbound.fifo") {
		t.Errorf("asked for %v: want the functions' and queues' physical names", dims)
	}
}
