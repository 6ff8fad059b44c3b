package runner_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
)

// telegramFile builds a private-chat update carrying one file under key
// (photo, voice, document), with caption.
func telegramFile(updateID int, chat int64, key string, file map[string]any, caption string) []byte {
	m := map[string]any{
		"message_id": updateID % 1_000_000, "date": time.Now().Unix(),
		"from": map[string]any{"id": chat, "is_bot": false, "first_name": "Ada"},
		"chat": map[string]any{"id": chat, "type": "private", "first_name": "Ada"},
		key:    file,
	}
	if key == "photo" {
		m[key] = []any{map[string]any{"file_id": "thumb", "file_unique_id": "t", "width": 90, "height": 90}, file}
	}
	if caption != "" {
		m["caption"] = caption
	}
	b, _ := json.Marshal(map[string]any{"update_id": updateID, "message": m})
	return b
}

// TestTelegramFilesReachTheAgentAsURLsOfTheirBytes: a photo, a document and a
// voice note sent on Telegram reach the agent as attachments whose URLs
// serve the exact bytes; a redelivered update and a retried turn download
// nothing twice.
func TestTelegramFilesReachTheAgentAsURLsOfTheirBytes(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	handler, _ := h.fake.For(message.Telegram)
	tg := handler.(*faketelegram.API)
	files := map[string][]byte{
		"photo-1": append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), bytes.Repeat([]byte{7}, 3000)...),
		"doc-1":   []byte("%PDF-1.7\n% boarding pass\n%%EOF\n"),
		"voice-1": append([]byte("OggS\x00\x02"), bytes.Repeat([]byte{1}, 900)...),
	}
	for id, b := range files {
		tg.AddFile(id, b)
	}
	// The document's first agent call fails: its turn is retried.
	var failed atomic.Bool
	h.agent.fail = func(req agent.TurnRequest) (int, bool) {
		if len(req.Event.Attachments) > 0 && req.Event.Attachments[0].PlatformID == "doc-1" && !failed.Swap(true) {
			return http.StatusServiceUnavailable, true
		}
		return 0, false
	}
	updates := [][]byte{
		telegramFile(7001, 42, "photo", map[string]any{"file_id": "photo-1", "file_unique_id": "p", "width": 800, "height": 600, "file_size": len(files["photo-1"])}, "what plant is this?"),
		telegramFile(7002, 42, "document", map[string]any{"file_id": "doc-1", "file_unique_id": "d", "file_name": "pass.pdf", "mime_type": "application/pdf"}, ""),
		telegramFile(7003, 42, "voice", map[string]any{"file_id": "voice-1", "file_unique_id": "v", "duration": 3, "mime_type": "audio/ogg"}, ""),
	}
	for _, u := range updates {
		if code, body := h.postTelegram(u); code != http.StatusOK {
			t.Fatalf("webhook: %d %s", code, body)
		}
	}
	got := h.waitDelivered(4, 60*time.Second)
	if code, _ := h.postTelegram(updates[0]); code != http.StatusOK { // Telegram redelivers
		t.Fatalf("redelivered webhook: %d", code)
	}
	h.quiesce(30 * time.Second)

	want := []string{"image 0: image/jpeg", "echo: what plant is this?", "file 0: application/pdf", "voice 0: audio/ogg"}
	if len(got) != len(want) {
		t.Fatalf("delivered %q", texts(got))
	}
	for i, d := range got {
		if !strings.HasPrefix(d.Text, want[i]) {
			t.Fatalf("bubble %d is %q, want it to start %q", i, d.Text, want[i])
		}
	}
	seen := map[string]bool{}
	for _, req := range h.agent.requests("telegram:" + tgBotID + ":42") {
		for _, a := range req.Event.Attachments {
			body := files[a.PlatformID]
			sum := sha256.Sum256(body)
			if a.URL == "" || a.SHA256 != hex.EncodeToString(sum[:]) || a.Size != int64(len(body)) {
				t.Fatalf("attachment %+v: want a URL of the %d bytes sent", a, len(body))
			}
			resp, err := http.Get(a.URL)
			if err != nil {
				t.Fatal(err)
			}
			served, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Equal(served, body) {
				t.Fatalf("%s: the URL serves %d other bytes", a.PlatformID, len(served))
			}
			seen[a.PlatformID] = true
		}
	}
	if len(seen) != 3 || !failed.Load() {
		t.Fatalf("the agent saw %v (the document's first call failed: %v)", seen, failed.Load())
	}
	for id := range files {
		if n := tg.Downloads(id); n != 1 {
			t.Errorf("%s downloaded %d times, want once", id, n)
		}
	}
}

// TestSlackFilesReachTheAgentAsURLsOfTheirBytes: a file shared in a Slack DM
// reaches the agent as a URL of its exact bytes, downloaded with the bot
// token through files.info.
func TestSlackFilesReachTheAgentAsURLsOfTheirBytes(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	handler, _ := h.fake.For(message.Slack)
	api := handler.(*fakeslack.API)
	pdf := []byte("%PDF-1.7\n% itinerary\n%%EOF\n")
	api.AddFile("F0PDF00001", pdf)
	var ev map[string]any
	_ = json.Unmarshal(slackDM("D0ADA00001", "1764432000.000100", ""), &ev)
	ev["event"].(map[string]any)["subtype"] = "file_share"
	ev["event"].(map[string]any)["files"] = []any{map[string]any{"id": "F0PDF00001", "name": "itinerary.pdf", "mimetype": "application/pdf", "mode": "hosted"}}
	body, _ := json.Marshal(ev)
	if code, resp := h.postSlack(body); code != http.StatusOK {
		t.Fatalf("webhook: %d %s", code, resp)
	}
	got := h.waitDelivered(1, 30*time.Second)
	if !strings.HasPrefix(got[0].Text, "file 0: application/pdf, "+strconv.Itoa(len(pdf))+" bytes") {
		t.Fatalf("delivered %q", got[0].Text)
	}
	reqs := h.agent.requests("slack:T0TEAM0001:D0ADA00001")
	if len(reqs) != 1 || len(reqs[0].Event.Attachments) != 1 {
		t.Fatalf("agent requests %+v", reqs)
	}
	resp, err := http.Get(reqs[0].Event.Attachments[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	served, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(served, pdf) || api.Downloads("F0PDF00001") != 1 {
		t.Fatalf("the URL serves %q (%d downloads)", served, api.Downloads("F0PDF00001"))
	}
}
