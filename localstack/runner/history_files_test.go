package runner_test

import (
	"bytes"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/message"
)

// TestHistoryKeepsFiles: a person's photo and the agent's image bubble
// stay in the thread's transcript as described files (kind, name, type;
// never a URL, which would have expired), their captions as the text.
func TestHistoryKeepsFiles(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_HISTORY": "20"}})
	h.agent.mu.Lock() // the agent's handler reads echo after taking mu
	h.agent.echo.Media = h.url + "/media"
	h.agent.mu.Unlock()
	handler, _ := h.fake.For(message.Telegram)
	handler.(*faketelegram.API).AddFile("photo-h", append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), bytes.Repeat([]byte{7}, 500)...))
	const chat = 5200
	thread := "telegram:" + tgBotID + ":5200"
	steps := [][]byte{
		telegramFile(95200001, chat, "photo", map[string]any{"file_id": "photo-h", "file_unique_id": "h", "width": 80, "height": 60}, "my gate?"),
		telegramUpdate(95200002, chat, "/image a card"),
		telegramUpdate(95200003, chat, "thanks"),
	}
	for i, u := range steps {
		if code, body := h.postTelegram(u); code != http.StatusOK {
			t.Fatalf("message %d: %d %s", i, code, body)
		}
		h.waitDelivered(i+1, 60*time.Second)
		h.quiesce(20 * time.Second)
	}
	reqs := h.agent.requests(thread)
	if len(reqs) != 3 {
		t.Fatalf("the agent got %d turns, want 3", len(reqs))
	}
	hist := reqs[2].History
	if got, want := transcript(hist), "person:my gate? | agent:image 0: image/jpeg, 511 bytes, 80x60, sha256 cb99ae9e513e | agent:echo: my gate? | person:/image a card | agent:a card"; got != want {
		t.Fatalf("the third turn's history:\n got %s\nwant %s", got, want)
	}
	if want := []history.File{{Kind: "image", MIME: "image/jpeg"}}; !slices.Equal(hist[0].Files, want) {
		t.Errorf("the photo's entry holds %+v, want %+v", hist[0].Files, want)
	}
	for _, i := range []int{1, 2, 3} {
		if len(hist[i].Files) != 0 {
			t.Errorf("text entry %d holds files: %+v", i, hist[i].Files)
		}
	}
	if len(hist[4].Files) != 1 || hist[4].Files[0].Kind != string(message.MediaImage) {
		t.Errorf("the image bubble's entry holds %+v, want one image", hist[4].Files)
	}
}
