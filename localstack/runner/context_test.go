package runner_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// transcript is a request's history as role:text lines.
func transcript(es []history.Entry) string {
	var out []string
	for _, e := range es {
		out = append(out, string(e.Role)+":"+e.Text)
	}
	return strings.Join(out, " | ")
}

// telegramReply is a private message that replies to the message replyTo
// (sent by the bot when fromBot), as Telegram's reply_to_message holds it.
func telegramReply(updateID int, chat int64, text string, replyTo int64, replyText string, fromBot bool) []byte {
	from := map[string]any{"id": chat, "is_bot": false, "first_name": "Ada"}
	if fromBot {
		from = map[string]any{"id": 7000000001, "is_bot": true, "first_name": "Parley", "username": "parley_fake_bot"}
	}
	b, _ := json.Marshal(map[string]any{
		"update_id": updateID,
		"message": map[string]any{
			"message_id": updateID % 1_000_000, "date": time.Now().Unix(), "text": text,
			"from": map[string]any{"id": chat, "is_bot": false, "first_name": "Ada"},
			"chat": map[string]any{"id": chat, "type": "private", "first_name": "Ada"},
			"reply_to_message": map[string]any{
				"message_id": replyTo, "date": time.Now().Unix(), "text": replyText, "from": from,
				"chat": map[string]any{"id": chat, "type": "private", "first_name": "Ada"},
			},
		},
	})
	return b
}

// eraseHistory posts the agent's signed erase of a thread's history.
func (h *harness) eraseHistory(threadKey string) {
	h.t.Helper()
	secret, err := standardwebhooks.ParseSecret(agentSecret)
	if err != nil {
		h.t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"thread_key": threadKey})
	hdr := http.Header{}
	standardwebhooks.SetHeaders(hdr, secret, "msg_erase_"+threadKey, h.clock.Now(), body)
	if code, answer := h.post("/history/erase", hdr, body); code != http.StatusOK {
		h.t.Fatalf("erase: %d %s", code, answer)
	}
}

// TestHistoryEndToEnd: with history on, the third turn of a conversation
// carries the first two exchanges exactly as delivered (a bubble whose send
// failed is absent); a reply to one of Parley's bubbles carries its text
// and turn id; erasing the thread's history removes it from the next turn.
func TestHistoryEndToEnd(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_HISTORY": "20"}})
	const chat = 5100
	thread := "telegram:" + tgBotID + ":5100"
	// The platform refuses the first bubble of the first reply.
	h.fake.Inject(fakeplatform.Fault{Platform: message.Telegram, Chat: "5100", Status: http.StatusBadRequest, Error: "Bad Request: message is too long"})
	if code, body := h.postTelegram(telegramUpdate(95100001, chat, "/bubbles a | b")); code != http.StatusOK {
		t.Fatalf("first message: %d %s", code, body)
	}
	first := h.waitDelivered(1, 20*time.Second)
	h.quiesce(20 * time.Second)
	if code, body := h.postTelegram(telegramUpdate(95100002, chat, "/bubbles c | d")); code != http.StatusOK {
		t.Fatalf("second message: %d %s", code, body)
	}
	h.waitDelivered(3, 20*time.Second)
	h.quiesce(20 * time.Second)
	b := first[0]
	if b.Text != "b" {
		t.Fatalf("the first reply delivered %q, want only its second bubble", b.Text)
	}
	bID := int64(mustAtoi(t, b.MessageID))
	if code, body := h.postTelegram(telegramReply(95100003, chat, "three", bID, "b", true)); code != http.StatusOK {
		t.Fatalf("third message: %d %s", code, body)
	}
	h.waitDelivered(5, 20*time.Second)
	h.quiesce(20 * time.Second)

	reqs := h.agent.requests(thread)
	if len(reqs) != 3 {
		t.Fatalf("the agent got %d turns, want 3", len(reqs))
	}
	if got, want := transcript(reqs[2].History), "person:/bubbles a | b | agent:b | person:/bubbles c | d | agent:c | agent:d"; got != want {
		t.Errorf("the third turn's history:\n got %s\nwant %s", got, want)
	}
	q := reqs[2].Event.Quote
	firstTurn := intent.IDFor(message.Event{Platform: message.Telegram, Account: tgBotID, EventID: "95100001"}.Key())
	if q == nil || q.Text != "b" || !q.Parley || q.TurnID != firstTurn {
		t.Errorf("the reply to the first reply's bubble carries %+v, want its text, Parley and turn %s", q, firstTurn)
	}

	h.eraseHistory(thread)
	if code, body := h.postTelegram(telegramUpdate(95100004, chat, "four")); code != http.StatusOK {
		t.Fatalf("fourth message: %d %s", code, body)
	}
	h.waitDelivered(7, 20*time.Second)
	reqs = h.agent.requests(thread)
	if got := transcript(reqs[len(reqs)-1].History); got != "" {
		t.Errorf("after the erase the next turn carries %s", got)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}
