package runner_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReplaysPastTheDedupeWindowAreIgnored_Finding11 (issue 23, finding
// 11): LINE and WhatsApp sign only the body and Telegram signs nothing, so
// a request captured and posted again after the dedupe window (8 days)
// found no key and reached the agent a second time. An event whose own
// timestamp is older than the window (less a margin) is now ignored with
// the reason "stale", alone: the request is still answered 200 (a 4xx
// would be retried for days), and the fresh events of its batch go on. An
// event inside the window (a WhatsApp retry of 7 days) is taken.
func TestReplaysPastTheDedupeWindowAreIgnored_Finding11(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	now := time.Now()
	stale, retry := now.Add(-9*24*time.Hour), now.Add(-7*24*time.Hour)

	results := func(name string, code int, body string) map[string]string {
		t.Helper()
		var ack sendAck
		if err := json.Unmarshal([]byte(body), &ack); err != nil || code != http.StatusOK {
			t.Fatalf("%s: %d %s", name, code, body)
		}
		out := map[string]string{}
		for _, e := range ack.Events {
			out[e.EventID] = e.Result + "/" + e.Reason
		}
		return out
	}

	// LINE: a batch of a replayed event and a new one.
	var line struct {
		Destination string            `json:"destination"`
		Events      []json.RawMessage `json:"events"`
	}
	for _, b := range [][]byte{
		lineText("01KREPLAY00000000000000001", lineAda, "replayed line", stale),
		lineText("01KREPLAY00000000000000002", "Uada00000000000000000000000000043", "fresh line", now),
	} {
		var one struct {
			Destination string            `json:"destination"`
			Events      []json.RawMessage `json:"events"`
		}
		_ = json.Unmarshal(b, &one)
		line.Destination = one.Destination
		line.Events = append(line.Events, one.Events...)
	}
	lineBody, _ := json.Marshal(line)
	code, resp := h.postLine(lineBody)
	got := results("line", code, resp)
	if got["01KREPLAY00000000000000001"] != "ignored/stale" || got["01KREPLAY00000000000000002"] != "enqueued/" {
		t.Errorf("LINE batch: %v", got)
	}

	// WhatsApp: a replayed message, a 7-day retry and a new one in one
	// body.
	wa := waText("wamid.REPLAYED", waAda, "replayed whatsapp", stale)
	for _, m := range []struct {
		id, from, text string
		at             time.Time
	}{{"wamid.RETRY7D", "15551230002", "retried whatsapp", retry}, {"wamid.FRESH", "15551230003", "fresh whatsapp", now}} {
		more := waText(m.id, m.from, m.text, m.at)
		var a, b map[string]any
		_ = json.Unmarshal(wa, &a)
		_ = json.Unmarshal(more, &b)
		a["entry"] = append(a["entry"].([]any), b["entry"].([]any)...)
		wa, _ = json.Marshal(a)
	}
	code, resp = h.postWhatsApp(wa)
	got = results("whatsapp", code, resp)
	if got["wamid.REPLAYED"] != "ignored/stale" || got["wamid.RETRY7D"] != "enqueued/" || got["wamid.FRESH"] != "enqueued/" {
		t.Errorf("WhatsApp batch: %v", got)
	}

	// Telegram: an update dated 9 days ago.
	var tg map[string]any
	_ = json.Unmarshal(telegramUpdate(7301, 46, "replayed telegram"), &tg)
	tg["message"].(map[string]any)["date"] = stale.Unix()
	tgBody, _ := json.Marshal(tg)
	code, resp = h.postTelegram(tgBody)
	got = results("telegram", code, resp)
	if got["7301"] != "ignored/stale" {
		t.Errorf("Telegram: %v", got)
	}

	// The 7-day retry is taken and reaches the agent; its reply cannot
	// go free-form, since the person's 24-hour window closed six days
	// ago (ADR 0018), so it fails window_closed before any call.
	h.waitDelivered(4, 60*time.Second)
	h.quiesce(10 * time.Second)
	delivered := texts(h.fake.Delivered())
	for _, d := range delivered {
		if strings.Contains(d, "replayed") {
			t.Errorf("a replay reached the agent: %q", delivered)
			break
		}
	}
	for _, want := range []string{"echo: fresh line", "echo: fresh whatsapp"} {
		if !slices.Contains(delivered, want) {
			t.Errorf("%q not delivered: %q", want, delivered)
		}
	}
	if heard := h.agent.texts("whatsapp:" + waPhone + ":15551230002"); !slices.Equal(heard, []string{"retried whatsapp"}) {
		t.Errorf("the agent heard %q in the retried message's thread, want the retry once", heard)
	}
	if n := len(h.logs.lines("outcome", "failed", "thread_key", "whatsapp:"+waPhone+":15551230002")); n == 0 {
		t.Error("the retry's reply, outside its window, did not fail")
	}
}
