package runner_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/shared/message"
)

// postDiscord posts an interaction, signed now with the test key.
func (h *harness) postDiscord(body []byte) (int, string) {
	return h.post("/discord", fakediscord.Sign(fakediscord.TestKey(), h.clock.Now(), body), body)
}

// askSeat posts sample, a slash command, as "/ask seat" made at at.
func (h *harness) askSeat(sample []byte, at time.Time) {
	h.t.Helper()
	var in map[string]any
	_ = json.Unmarshal(sample, &in)
	in["data"].(map[string]any)["options"].([]any)[0].(map[string]any)["value"] = "/ask seat"
	raw, _ := json.Marshal(in)
	body, _ := fakediscord.Interaction(raw, at)
	if code, answer := h.postDiscord(body); code != http.StatusOK || answer != `{"type":5}` {
		h.t.Fatalf("/ask seat: %d %s", code, answer)
	}
}

// pressClosesQuestion has Ada press question q's first control at at, and
// checks the agent hears her answer and the question is closed.
func (h *harness) pressClosesQuestion(q fakeplatform.Delivery, at time.Time) {
	h.t.Helper()
	press := fakediscord.Press("1309000000000000100", q.Chat, "1309000000000000042", q.MessageID, fakediscord.PressData(q, q.Controls[0]), at)
	if code, answer := h.postDiscord(press); code != http.StatusOK || answer != `{"type":6}` {
		h.t.Fatalf("press: %d %s", code, answer)
	}
	if got := h.waitAnswers(1); got[0].QuestionID == "" {
		h.t.Fatalf("answers %+v", got)
	}
	h.quiesce(20 * time.Second)
	if e := h.lastEdit(q); e.MessageID != q.MessageID || len(e.Controls) != 0 {
		h.t.Fatalf("the question was not closed: %+v (edits %+v)", e, h.fake.Recorder().Edits())
	}
}

// TestDiscordCommandReply: /ask in a guild channel is answered with the
// deferred response once durable; the reply's first bubble replaces it
// (@original), the second is a follow-up; a question's press is an answer
// and closes the question with an edit.
func TestDiscordCommandReply(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	sample, err := os.ReadFile("../../events/discord/command-guild.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := fakediscord.Interaction(sample, h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	code, answer := h.postDiscord(body)
	if code != http.StatusOK || answer != `{"type":5}` {
		t.Fatalf("/ask: %d %s", code, answer)
	}
	// Redelivered: the same interaction id, deduplicated, answered alike.
	if code, answer := h.postDiscord(body); code != http.StatusOK || answer != `{"type":5}` {
		t.Fatalf("again: %d %s", code, answer)
	}
	d := h.waitDelivered(2, 20*time.Second)
	if !strings.HasPrefix(d[0].Text, "echo: what") || d[0].Chat != "1309000000000000200" || !strings.Contains(d[1].Text, "via discord") {
		t.Fatalf("delivered %+v", d)
	}
	h.quiesce(20 * time.Second)
	if n := len(h.fake.Delivered()); n != 2 {
		t.Fatalf("%d deliveries", n)
	}

	// A question, then a press of its first button.
	h.askSeat(sample, h.clock.Now().Add(time.Millisecond))
	d = h.waitDelivered(4, 20*time.Second)
	q := d[3]
	if len(q.Controls) == 0 {
		t.Fatalf("the question has no controls: %+v", d[2:])
	}
	// Grace is not the owner: her press is acknowledged and changes nothing.
	other := fakediscord.Press("1309000000000000100", q.Chat, "1309000000000000043", q.MessageID, fakediscord.PressData(q, q.Controls[0]), h.clock.Now().Add(time.Millisecond))
	if code, answer := h.postDiscord(other); code != http.StatusOK || answer != `{"type":6}` {
		t.Fatalf("Grace's press: %d %s", code, answer)
	}
	h.quiesce(20 * time.Second)
	if n := len(h.agent.gotAnswers()); n != 0 {
		t.Fatalf("a press by someone else reached the agent %d times", n)
	}
	h.pressClosesQuestion(q, h.clock.Now().Add(2*time.Millisecond))
	t.Logf("deliveries %+v", texts(h.fake.Delivered()))
}

// TestDiscordAfterTheTokensLife: a reply to an interaction older than its
// token's 15 minutes goes out as channel messages, each with a nonce that
// Discord enforces.
func TestDiscordAfterTheTokensLife(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	sample, err := os.ReadFile("../../events/discord/command-guild.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := fakediscord.Interaction(sample, h.clock.Now().Add(-16*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if code, answer := h.postDiscord(body); code != http.StatusOK || answer != `{"type":5}` {
		t.Fatalf("/ask: %d %s", code, answer)
	}
	d := h.waitDelivered(2, 20*time.Second)
	nonces := map[string]bool{}
	for _, m := range d {
		var nonce string
		var enforce bool
		_ = json.Unmarshal(m.Args["nonce"], &nonce)
		_ = json.Unmarshal(m.Args["enforce_nonce"], &enforce)
		if nonce == "" || !enforce || len(nonce) > 25 {
			t.Fatalf("a channel message without an enforced nonce: %s", m.Args)
		}
		nonces[nonce] = true
	}
	if len(nonces) != 2 {
		t.Fatalf("nonces %v: want one per bubble", nonces)
	}
}

// TestDiscordQuestionWhereTheBotIsNoMember: an app installed for a person is
// no member of the channels it is used in, so the bot token reaches none of
// them. The reply goes through the interaction's token, and the question is
// closed through the press's own token (its @original is the pressed
// message).
func TestDiscordQuestionWhereTheBotIsNoMember(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	fake, ok := h.fake.For(message.Discord)
	if !ok {
		t.Fatal("no fake Discord")
	}
	const channel = "1309000000000000200"
	fake.(*fakediscord.API).WithoutBot(channel)
	sample, err := os.ReadFile("../../events/discord/command-guild.json")
	if err != nil {
		t.Fatal(err)
	}
	h.askSeat(sample, h.clock.Now())
	d := h.waitDelivered(2, 20*time.Second)
	q := d[1]
	if len(q.Controls) == 0 || q.Chat != channel {
		t.Fatalf("the question: %+v", d)
	}
	h.pressClosesQuestion(q, h.clock.Now().Add(time.Millisecond))
}
