package operator_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/operator"
)

// TestTargetFromOutputs: a deployed stack is found by its outputs; one
// deployed before the outputs existed is refused, naming them.
func TestTargetFromOutputs(t *testing.T) {
	t.Parallel()
	out := map[string]string{
		"TableName": "Parley-State", "InboundQueueUrl": "https://sqs/1/in.fifo", "InboundDlqQueueUrl": "https://sqs/1/in-dlq.fifo",
		"OutboundQueueUrl": "https://sqs/1/out.fifo", "OutboundDlqQueueUrl": "https://sqs/1/out-dlq.fifo",
		"FunctionNames": "turn=Parley-Turn-1,delivery=Parley-Delivery-1", "LogGroupNames": "turn=/aws/lambda/t,delivery=/aws/lambda/d",
	}
	tg, err := operator.TargetFromOutputs(out)
	if err != nil {
		t.Fatal(err)
	}
	if q, ok := tg.Queue("inbound-dlq"); !ok || q.DLQURL != "https://sqs/1/in-dlq.fifo" || tg.Functions["turn"] != "Parley-Turn-1" || tg.LogGroups["delivery"] != "/aws/lambda/d" || tg.Local() {
		t.Fatalf("target %+v", tg)
	}
	delete(out, "LogGroupNames")
	if _, err := operator.TargetFromOutputs(out); err == nil || !strings.Contains(err.Error(), "LogGroupNames") {
		t.Errorf("outputs without LogGroupNames: %v, want it named", err)
	}
	out["LogGroupNames"] = "turn"
	if _, err := operator.TargetFromOutputs(out); err == nil {
		t.Error("a malformed list: want it refused")
	}
}

// FuzzFileLogs: any bytes in the log file are read without a panic, and
// a line found matches the query.
func FuzzFileLogs(f *testing.F) {
	f.Add([]byte(`{"time":"2026-11-29T16:00:01Z","level":"INFO","msg":"event accepted","event_key":"evt#t#1#2"}` + "\n"))
	f.Add([]byte("not json\n{\"msg\":1}\n"))
	f.Add([]byte(`{"time":"x","msg":"m","event_key":7}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "log")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		lines, err := operator.FileLogs{Path: path}.Search(context.Background(), operator.Query{Field: "event_key", Value: "evt#t#1#2"})
		if err != nil && !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "token too long") {
			t.Fatalf("search: %v", err)
		}
		for _, l := range lines {
			if l.Field("event_key") != "evt#t#1#2" {
				t.Fatalf("line %+v does not match", l)
			}
		}
	})
}
