package operator

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	cwltypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
)

// Line is one of the functions' JSON log lines.
type Line struct {
	Time  time.Time `json:"time"`
	Level string    `json:"level"`
	Msg   string    `json:"msg"`
	// Function is the function that wrote it (its "function" field, or
	// its log group's function).
	Function string `json:"function,omitempty"`
	// Fields are the line's other fields.
	Fields map[string]any `json:"fields,omitempty"`
}

// Field is the line's field name as text ("" when absent).
func (l Line) Field(name string) string {
	v, ok := l.Fields[name]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// Query selects lines: those whose field Field equals Value, written since
// Since, at most Limit (oldest first).
type Query struct {
	Field, Value string
	Since        time.Time
	Limit        int
}

// Fields a query may select on: the correlation id and what derives from
// it, the thread, and a sweeper's finding.
var queryFields = []string{"event_key", "intent_id", "thread_key", "finding", "claim_key"}

func (q Query) check() error {
	if !slices.Contains(queryFields, q.Field) {
		return fmt.Errorf("log query on field %q: want one of %s", q.Field, strings.Join(queryFields, ", "))
	}
	if q.Value == "" {
		return errors.New("log query: empty value")
	}
	return nil
}

// Logs finds the functions' log lines.
type Logs interface {
	Search(ctx context.Context, q Query) ([]Line, error)
}

// parseLine reads one JSON log line as slog writes it.
func parseLine(b []byte) (Line, bool) {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return Line{}, false
	}
	var l Line
	ts, _ := m["time"].(string)
	l.Time, _ = time.Parse(time.RFC3339Nano, ts)
	l.Level, _ = m["level"].(string)
	l.Msg, _ = m["msg"].(string)
	l.Function, _ = m["function"].(string)
	for _, k := range []string{"time", "level", "msg", "function"} {
		delete(m, k)
	}
	l.Fields = m
	return l, l.Msg != ""
}

// FileLogs reads make run's JSON log file (.parley/parley-local.log).
type FileLogs struct{ Path string }

// Search scans the whole file: a local run's log is small.
func (f FileLogs) Search(ctx context.Context, q Query) ([]Line, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	file, err := os.Open(f.Path)
	if err != nil {
		return nil, fmt.Errorf("read the local log: %w", err)
	}
	defer file.Close()
	var out []Line
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Cheap first: the value must be in the line's text.
		if !strings.Contains(sc.Text(), strings.Trim(mustJSON(q.Value), `"`)) {
			continue
		}
		l, ok := parseLine(sc.Bytes())
		if !ok || l.Field(q.Field) != q.Value || (!q.Since.IsZero() && l.Time.Before(q.Since)) {
			continue
		}
		out = append(out, l)
		if q.Limit > 0 && len(out) >= q.Limit {
			break
		}
	}
	return out, sc.Err()
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Counts counts the file's lines at level ERROR, by function: what make
// run has in place of CloudWatch's function errors. An ingress line counts
// for its platform's function (they all log as ingress).
func (f FileLogs) Counts(ctx context.Context, since time.Time) (map[string]int, error) {
	file, err := os.Open(f.Path)
	if err != nil {
		return nil, fmt.Errorf("read the local log: %w", err)
	}
	defer file.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), `"level":"ERROR"`) {
			continue
		}
		if l, ok := parseLine(sc.Bytes()); ok && !l.Time.Before(since) {
			fn := l.Function
			if fn == "ingress" && l.Field("platform") != "" {
				fn = l.Field("platform")
			}
			out[fn]++
		}
	}
	return out, sc.Err()
}

// InsightsAPI is CloudWatch Logs as Insights uses it (*cloudwatchlogs.Client).
type InsightsAPI interface {
	StartQuery(ctx context.Context, in *cloudwatchlogs.StartQueryInput, opts ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.StartQueryOutput, error)
	GetQueryResults(ctx context.Context, in *cloudwatchlogs.GetQueryResultsInput, opts ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.GetQueryResultsOutput, error)
}

// Insights searches a deployed stack's log groups with CloudWatch Logs
// Insights, the query docs/operations.md documents for "what happened to
// this message".
type Insights struct {
	Client InsightsAPI
	// Groups maps each log group to its function.
	Groups map[string]string
	// Poll is how often a running query is looked at. Defaults to 1 second.
	Poll time.Duration
	Now  func() time.Time
}

// InsightsQuery is the Logs Insights query for q: every line whose field
// equals the value, oldest first.
func InsightsQuery(q Query) string {
	limit := q.Limit
	if limit <= 0 || limit > 10000 {
		limit = 10000
	}
	return fmt.Sprintf("fields @timestamp, @log, @message\n| filter %s = %s\n| sort @timestamp asc\n| limit %d", q.Field, mustJSON(q.Value), limit)
}

// Search runs q over every log group and waits for its result.
func (in Insights) Search(ctx context.Context, q Query) ([]Line, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	if len(in.Groups) == 0 {
		return nil, errors.New("no log groups to search")
	}
	now := time.Now
	if in.Now != nil {
		now = in.Now
	}
	groups := make([]string, 0, len(in.Groups))
	for g := range in.Groups {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	since := q.Since
	if since.IsZero() {
		since = now().Add(-24 * time.Hour)
	}
	started, err := in.Client.StartQuery(ctx, &cloudwatchlogs.StartQueryInput{
		LogGroupNames: groups, QueryString: aws.String(InsightsQuery(q)),
		StartTime: aws.Int64(since.Unix()), EndTime: aws.Int64(now().Add(time.Minute).Unix()),
	})
	if err != nil {
		return nil, fmt.Errorf("start a Logs Insights query: %w", err)
	}
	poll := in.Poll
	if poll == 0 {
		poll = time.Second
	}
	for {
		res, err := in.Client.GetQueryResults(ctx, &cloudwatchlogs.GetQueryResultsInput{QueryId: started.QueryId})
		if err != nil {
			return nil, fmt.Errorf("read a Logs Insights query: %w", err)
		}
		switch res.Status {
		case cwltypes.QueryStatusComplete:
			return in.lines(res.Results), nil
		case cwltypes.QueryStatusFailed, cwltypes.QueryStatusCancelled, cwltypes.QueryStatusTimeout:
			return nil, fmt.Errorf("the Logs Insights query ended %s", res.Status)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

func (in Insights) lines(rows [][]cwltypes.ResultField) []Line {
	var out []Line
	for _, row := range rows {
		var msg, group string
		for _, f := range row {
			switch aws.ToString(f.Field) {
			case "@message":
				msg = aws.ToString(f.Value)
			case "@log":
				group = aws.ToString(f.Value)
			}
		}
		l, ok := parseLine([]byte(msg))
		if !ok {
			continue
		}
		if l.Function == "" {
			// @log is "<account>:<group>".
			_, name, _ := strings.Cut(group, ":")
			l.Function = in.Groups[name]
		}
		out = append(out, l)
	}
	return out
}

// Each calls keep with every line of the file that holds the text has (all
// lines when has is empty), in order, until keep returns false.
func (f FileLogs) Each(ctx context.Context, has string, keep func(Line) bool) error {
	file, err := os.Open(f.Path)
	if err != nil {
		return fmt.Errorf("read the local log: %w", err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if has != "" && !strings.Contains(sc.Text(), has) {
			continue
		}
		if l, ok := parseLine(sc.Bytes()); ok && !keep(l) {
			break
		}
	}
	return sc.Err()
}
