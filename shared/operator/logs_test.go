package operator_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/parleyhq/parley/shared/operator"
)

// TestInsightsQueryNamesOneMessage: the documented "what happened to this
// message" query selects on the one field every line of a message carries,
// with the value quoted as a string, whatever it holds.
func TestInsightsQueryNamesOneMessage(t *testing.T) {
	t.Parallel()
	got := operator.InsightsQuery(operator.Query{Field: "event_key", Value: `evt#slack#T1#C1:1.2"|x`})
	want := "fields @timestamp, @log, @message\n| filter event_key = \"evt#slack#T1#C1:1.2\\\"|x\"\n| sort @timestamp asc\n| limit 10000"
	if got != want {
		t.Fatalf("query:\n%s\nwant:\n%s", got, want)
	}
}

// TestInsightsSearchSpeaksCloudWatchLogs: a search starts one Logs
// Insights query over every log group, waits for it, and reads each
// result's @message as a function's JSON line, naming the function by its
// log group when the line does not. The service is an httptest server
// speaking CloudWatch Logs' JSON protocol.
func TestInsightsSearchSpeaksCloudWatchLogs(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var started map[string]any
	polls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch r.Header.Get("X-Amz-Target") {
		case "Logs_20140328.StartQuery":
			_ = json.Unmarshal(body, &started)
			_, _ = io.WriteString(w, `{"queryId":"q1"}`)
		case "Logs_20140328.GetQueryResults":
			if polls++; polls == 1 {
				_, _ = io.WriteString(w, `{"status":"Running","results":[]}`)
				return
			}
			line := `{"time":"2026-11-29T16:00:01Z","level":"INFO","msg":"agent answered","event_key":"evt#telegram#1#2","agent_ms":42}`
			res, _ := json.Marshal(map[string]any{"status": "Complete", "results": [][]map[string]string{{
				{"field": "@timestamp", "value": "2026-11-29 16:00:01.000"},
				{"field": "@log", "value": "123456789012:/aws/lambda/Parley-Turn"},
				{"field": "@message", "value": line},
			}}})
			_, _ = w.Write(res)
		default:
			http.Error(w, "unknown target", http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	client := cloudwatchlogs.New(cloudwatchlogs.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: aws.AnonymousCredentials{}})
	in := operator.Insights{Client: client, Groups: map[string]string{"/aws/lambda/Parley-Turn": "turn", "/aws/lambda/Parley-Delivery": "delivery"},
		Poll: time.Millisecond}
	lines, err := in.Search(context.Background(), operator.Query{Field: "event_key", Value: "evt#telegram#1#2", Since: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].Msg != "agent answered" || lines[0].Function != "turn" || lines[0].Field("agent_ms") != "42" {
		t.Fatalf("lines %+v", lines)
	}
	groups, _ := started["logGroupNames"].([]any)
	if len(groups) != 2 || !strings.Contains(started["queryString"].(string), `filter event_key = "evt#telegram#1#2"`) {
		t.Errorf("StartQuery %v: want both log groups and the message's filter", started)
	}
	if _, err := in.Search(context.Background(), operator.Query{Field: "text", Value: "x"}); err == nil {
		t.Error("a query on a field no line of a message is found by: want it refused")
	}
}
