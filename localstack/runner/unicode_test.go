package runner_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestEmojiAndNoncharactersAreAnswered_Finding1: under make run, fauxqs
// refused every character above U+FFFF and SQS refuses U+FFFE and U+FFFF, so
// an emoji message (locally) or a display name holding U+FFFF (anywhere) was
// answered 503 on every retry and lost. Through the whole stack now, each is
// answered, and the agent and the platform see exactly the text that was
// sent.
func TestEmojiAndNoncharactersAreAnswered_Finding1(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	cases := []struct {
		chat       int64
		name, text string
	}{
		{71, "Ada 😀", "/one emoji 😀🎉 and a flag 🇯🇵, music 𝄞"},
		{72, "Ada \uffff", "/one U+FFFF \uffff and U+FFFE \ufffe, the last \U0010ffff"},
	}
	for i, tc := range cases {
		update, _ := json.Marshal(map[string]any{
			"update_id": 7100 + i,
			"message": map[string]any{
				"message_id": 7100 + i, "date": time.Now().Unix(), "text": tc.text,
				"from": map[string]any{"id": tc.chat, "is_bot": false, "first_name": tc.name},
				"chat": map[string]any{"id": tc.chat, "type": "private", "first_name": tc.name},
			},
		})
		if code, body := h.postTelegram(update); code != http.StatusOK {
			t.Fatalf("%q: webhook answered %d %s, want 200", tc.text, code, body)
		}
	}
	got := h.waitDelivered(len(cases), 30*time.Second)
	for _, tc := range cases {
		chat := strconv.FormatInt(tc.chat, 10)
		want := tc.text[len("/one "):]
		if d := filterChat(got, chat); len(d) != 1 || d[0].Text != want {
			t.Errorf("chat %s: delivered %q, want exactly %q", chat, texts(d), want)
		}
		if heard := h.agent.texts("telegram:" + tgBotID + ":" + chat); !slices.Equal(heard, []string{tc.text}) {
			t.Errorf("chat %s: the agent heard %q, want exactly %q", chat, heard, tc.text)
		}
	}
}
