package runner_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/agent"
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

func mustAtoi(t testing.TB, s string) int {
	t.Helper()
	var n int
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// telegramReaction is a message_reaction update: user chat adds emoji to
// the message messageID.
func telegramReaction(updateID int, chat int64, messageID int64, emoji string) []byte {
	b, _ := json.Marshal(map[string]any{
		"update_id": updateID,
		"message_reaction": map[string]any{
			"chat": map[string]any{"id": chat, "type": "private", "first_name": "Ada"}, "message_id": messageID,
			"user": map[string]any{"id": chat, "is_bot": false, "first_name": "Ada"}, "date": time.Now().Unix(),
			"old_reaction": []any{}, "new_reaction": []any{map[string]any{"type": "emoji", "emoji": emoji}},
		},
	})
	return b
}

// slackReaction is a reaction_added event in a DM.
func slackReaction(eventID, channel, ts, name string) []byte {
	b, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": "T0TEAM0001", "api_app_id": "A0APP00001", "event_id": eventID, "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{"team_id": "T0TEAM0001", "user_id": "U0BOT00001", "is_bot": true}},
		"event": map[string]any{"type": "reaction_added", "user": "U0ADA00001", "reaction": name,
			"item": map[string]any{"type": "message", "channel": channel, "ts": ts}, "event_ts": fmt.Sprintf("%d.000100", time.Now().Unix())},
	})
	return b
}

// TestReactionReachesTheAgentOnce: a 👍 on one of Parley's bubbles, on
// Telegram and on Slack, reaches the agent once (the webhook posted twice),
// as a reaction naming the bubble and its turn; a reaction the deployment
// does not list wakes nobody.
func TestReactionReachesTheAgentOnce(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_HISTORY": "20", "PARLEY_REACTIONS": "👍"}})
	const chat = 5200
	tgThread := "telegram:" + tgBotID + ":5200"
	if code, body := h.postTelegram(telegramUpdate(95200001, chat, "/one hello")); code != http.StatusOK {
		t.Fatalf("message: %d %s", code, body)
	}
	sent := h.waitDelivered(1, 20*time.Second)[0]
	if code, body := h.postSlack(slackDM("D0REACT001", "1764500000.000100", "/one hi")); code != http.StatusOK {
		t.Fatalf("slack message: %d %s", code, body)
	}
	ds := h.waitDelivered(2, 20*time.Second)
	slackSent := ds[1]
	h.quiesce(20 * time.Second)

	for range 2 {
		if code, body := h.postTelegram(telegramReaction(95200002, chat, int64(mustAtoi(t, sent.MessageID)), "👍")); code != http.StatusOK {
			t.Fatalf("reaction: %d %s", code, body)
		}
		if code, body := h.postSlack(slackReaction("Ev0REACT100", "D0REACT001", slackSent.MessageID, "+1")); code != http.StatusOK {
			t.Fatalf("slack reaction: %d %s", code, body)
		}
	}
	if code, body := h.postTelegram(telegramReaction(95200003, chat, int64(mustAtoi(t, sent.MessageID)), "🔥")); code != http.StatusOK || !strings.Contains(body, `"reason":"reaction"`) {
		t.Fatalf("an unlisted reaction: %d %s, want it ignored", code, body)
	}
	h.waitDelivered(4, 20*time.Second)
	h.quiesce(20 * time.Second)

	for thread, first := range map[string]message.Event{
		tgThread:                      {Platform: message.Telegram, Account: tgBotID, EventID: "95200001"},
		"slack:T0TEAM0001:D0REACT001": {Platform: message.Slack, Account: "T0TEAM0001", EventID: "D0REACT001:1764500000.000100"},
	} {
		reqs := h.agent.requests(thread)
		var reactions []agent.TurnRequest
		for _, r := range reqs {
			if r.Event.Kind == message.KindReaction {
				reactions = append(reactions, r)
			}
		}
		if len(reactions) != 1 {
			t.Fatalf("%s: the agent heard %d reactions, want the 👍 once", thread, len(reactions))
		}
		ev := reactions[0].Event
		if ev.Reaction == nil || ev.Reaction.Emoji != "👍" || ev.Quote == nil || ev.Quote.TurnID != intent.IDFor(first.Key()) || !ev.Quote.Parley {
			t.Errorf("%s: reaction %+v, quote %+v; want 👍 naming turn %s", thread, ev.Reaction, ev.Quote, intent.IDFor(first.Key()))
		}
	}
}

// telegramEdit is an edited_message update of a private message.
func telegramEdit(updateID int, chat int64, messageID int64, text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"update_id": updateID,
		"edited_message": map[string]any{
			"message_id": messageID, "date": time.Now().Unix() - 5, "edit_date": time.Now().Unix(), "text": text,
			"from": map[string]any{"id": chat, "is_bot": false, "first_name": "Ada"},
			"chat": map[string]any{"id": chat, "type": "private", "first_name": "Ada"},
		},
	})
	return b
}

// slackDeleted is a message_deleted event in a DM.
func slackDeleted(channel, ts, text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": "T0TEAM0001", "api_app_id": "A0APP00001", "event_id": "EvDEL" + strings.ReplaceAll(ts, ".", ""), "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{"team_id": "T0TEAM0001", "user_id": "U0BOT00001", "is_bot": true}},
		"event": map[string]any{"type": "message", "subtype": "message_deleted", "hidden": true, "channel": channel, "channel_type": "im",
			"ts": fmt.Sprintf("%d.000900", time.Now().Unix()), "deleted_ts": ts,
			"previous_message": map[string]any{"type": "message", "user": "U0ADA00001", "text": text, "ts": ts}},
	})
	return b
}

// TestEditsAndDeletionsReachTheAgentAndHistory: with edits taken, an edit
// on Telegram and a deletion on Slack reach the agent as events, and the
// next turn's history holds the edited text and not the deleted message.
// With edits off the same webhooks are ignored.
func TestEditsAndDeletionsReachTheAgentAndHistory(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_HISTORY": "20", "PARLEY_EDITS": "on"}})
	const chat = 5300
	if code, body := h.postTelegram(telegramUpdate(95300001, chat, "/one book for two")); code != http.StatusOK {
		t.Fatalf("message: %d %s", code, body)
	}
	h.waitDelivered(1, 20*time.Second)
	h.quiesce(20 * time.Second)
	if code, body := h.postTelegram(telegramEdit(95300002, chat, 95300001%1_000_000, "/one book for three")); code != http.StatusOK {
		t.Fatalf("edit: %d %s", code, body)
	}
	h.waitDelivered(2, 20*time.Second)
	h.quiesce(20 * time.Second)
	if code, body := h.postTelegram(telegramUpdate(95300003, chat, "/one and?")); code != http.StatusOK {
		t.Fatalf("third: %d %s", code, body)
	}
	h.waitDelivered(3, 20*time.Second)
	h.quiesce(20 * time.Second)
	reqs := h.agent.requests("telegram:" + tgBotID + ":5300")
	if len(reqs) != 3 || reqs[1].Event.Kind != message.KindEdit || reqs[1].Event.Text != "/one book for three" {
		t.Fatalf("the agent heard %d turns; the second %+v, want the edit", len(reqs), reqs[1].Event)
	}
	// The person's message reads as edited; the bubbles stay as delivered.
	if got := transcript(reqs[2].History); got != "person:/one book for three | agent:book for two | agent:book for three" {
		t.Errorf("history after the edit: %s", got)
	}

	if code, body := h.postSlack(slackDM("D0DEL00001", "1764600000.000100", "/one secret")); code != http.StatusOK {
		t.Fatalf("slack: %d %s", code, body)
	}
	h.waitDelivered(4, 20*time.Second)
	h.quiesce(20 * time.Second)
	if code, body := h.postSlack(slackDeleted("D0DEL00001", "1764600000.000100", "/one secret")); code != http.StatusOK {
		t.Fatalf("deletion: %d %s", code, body)
	}
	h.waitDelivered(6, 20*time.Second) // the echo agent answers an empty text with two bubbles
	h.quiesce(20 * time.Second)
	if code, body := h.postSlack(slackDM("D0DEL00001", "1764600002.000100", "/one after")); code != http.StatusOK {
		t.Fatalf("slack: %d %s", code, body)
	}
	h.waitDelivered(7, 20*time.Second)
	reqs = h.agent.requests("slack:T0TEAM0001:D0DEL00001")
	if len(reqs) != 3 || reqs[1].Event.Kind != message.KindDelete || reqs[1].Event.MessageID != "1764600000.000100" {
		t.Fatalf("the agent heard %d turns; the second %+v, want the deletion", len(reqs), reqs[1].Event)
	}
	if got := transcript(reqs[2].History); strings.Contains(got, "person:/one secret") {
		t.Errorf("the deleted message is still in the history: %s", got)
	}
}

// unitSent matches the receipt of unit i of an intent.
func unitSent(i int) func(any) bool {
	return func(in any) bool {
		u, ok := in.(*dynamodb.UpdateItemInput)
		if !ok || !strings.HasPrefix(pkOf(u.Key), "int#") || !strings.Contains(aws.ToString(u.UpdateExpression), fmt.Sprintf("#units[%d].", i)) {
			return false
		}
		got, _ := value(u.ExpressionAttributeValues, ":to")
		return got == string(message.UnitSent)
	}
}

// TestStatusReactionsAlwaysEndFinal: with status reactions on, a person's
// message shows 👀 while its turn runs and ends 👌 (Telegram's answered)
// when its reply arrived, or 💔 when a bubble failed or the agent refused
// the turn; a turn that crashed before its commit, and a status reaction
// whose receipt was lost, end final all the same. Never left at 👀.
func TestStatusReactionsAlwaysEndFinal(t *testing.T) {
	t.Parallel()
	for i, sc := range []struct {
		name     string
		setup    func(h *harness, chat string) func() int
		want     string
		received bool
	}{
		{name: "Answered", want: "👌", received: true},
		{name: "BubbleFailed", want: "💔", received: true, setup: func(h *harness, chat string) func() int {
			h.fake.Inject(fakeplatform.Fault{Platform: message.Telegram, Chat: chat, Status: http.StatusForbidden, Error: "Forbidden: bot was blocked by the user"})
			return nil
		}},
		{name: "AgentRefused", want: "💔", received: true, setup: func(h *harness, chat string) func() int {
			h.agent.fail = func(agent.TurnRequest) (int, bool) { return http.StatusBadRequest, true }
			return nil
		}},
		{name: "TurnCrashedBeforeItsCommit", want: "👌", received: true, setup: func(h *harness, chat string) func() int {
			return h.faults.Add(awsfault.Fault{Op: "DynamoDB.UpdateItem", Match: turnCommit})
		}},
		{name: "StatusReceiptLost", want: "👌", received: true, setup: func(h *harness, chat string) func() int {
			return h.faults.Add(awsfault.Fault{Op: "DynamoDB.UpdateItem", Match: unitSent(1)})
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, options{env: map[string]string{"PARLEY_STATUS_REACTIONS": "on", "PARLEY_SEND_TIMEOUT": "1s"}})
			chat := int64(5400 + i)
			var fired func() int
			if sc.setup != nil {
				fired = sc.setup(h, strconv.FormatInt(chat, 10))
			}
			update := 95400001 + i
			if code, body := h.postTelegram(telegramUpdate(update, chat, "/one hi")); code != http.StatusOK {
				t.Fatalf("message: %d %s", code, body)
			}
			msgID := strconv.Itoa(update % 1_000_000)
			deadline := time.Now().Add(45 * time.Second)
			var on []string
			for time.Now().Before(deadline) {
				on = h.fake.Recorder().ReactionsOn(message.Telegram, strconv.FormatInt(chat, 10), msgID)
				if len(on) == 1 && on[0] != "👀" {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			h.quiesce(30 * time.Second)
			on = h.fake.Recorder().ReactionsOn(message.Telegram, strconv.FormatInt(chat, 10), msgID)
			if len(on) != 1 || on[0] != sc.want {
				t.Fatalf("the message ends with %v, want %s", on, sc.want)
			}
			if fired != nil && fired() != 1 {
				t.Fatalf("the crash fired %d times: the scenario did not happen", fired())
			}
			log := h.fake.Recorder().Reactions()
			if sc.received && (len(log) < 2 || log[0].Emoji != "👀") {
				t.Errorf("reactions %+v: want 👀 first, while the turn ran", log)
			}
		})
	}
}

// TestAgentReactsToTheMessage: an envelope's "react" reacts to the
// person's message before the bubbles go, on Telegram, Slack and WhatsApp.
func TestAgentReactsToTheMessage(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.answer = func(req agent.TurnRequest) (string, bool) {
		return `{"schema":"openab.turn.v1","react":"👍","messages":[{"id":"b1","text":"noted"}]}`, true
	}
	if code, body := h.postTelegram(telegramUpdate(95500001, 5500, "remember milk")); code != http.StatusOK {
		t.Fatalf("telegram: %d %s", code, body)
	}
	if code, body := h.postSlack(slackDM("D0REACT002", "1764700000.000100", "remember eggs")); code != http.StatusOK {
		t.Fatalf("slack: %d %s", code, body)
	}
	h.waitDelivered(2, 20*time.Second)
	h.quiesce(20 * time.Second)
	if on := h.fake.Recorder().ReactionsOn(message.Telegram, "5500", "500001"); len(on) != 1 || on[0] != "👍" {
		t.Errorf("telegram: the message shows %v, want 👍", on)
	}
	if on := h.fake.Recorder().ReactionsOn(message.Slack, "D0REACT002", "1764700000.000100"); len(on) != 1 || on[0] != "+1" {
		t.Errorf("slack: the message shows %v, want +1", on)
	}
}

// waitRequests waits until the agent got n requests of thread.
func (h *harness) waitRequests(thread string, n int, within time.Duration) []agent.TurnRequest {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if reqs := h.agent.requests(thread); len(reqs) >= n {
			return reqs
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.t.Fatalf("the agent got %d requests of %s, want %d", len(h.agent.requests(thread)), thread, n)
	return nil
}

// TestCollectEndToEnd: with PARLEY_BUSY_POLICY=collect, three messages
// sent while a slow turn runs produce exactly one next turn with all three,
// in order, and every message is answered.
func TestCollectEndToEnd(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_BUSY_POLICY": "collect"}})
	const chat = 5600
	thread := "telegram:" + tgBotID + ":5600"
	h.agent.answer = func(req agent.TurnRequest) (string, bool) {
		if req.Event.Text == "slow" {
			time.Sleep(2 * time.Second)
		}
		return "", false
	}
	if code, body := h.postTelegram(telegramUpdate(95600001, chat, "slow")); code != http.StatusOK {
		t.Fatalf("first: %d %s", code, body)
	}
	h.waitRequests(thread, 1, 20*time.Second)
	for i, text := range []string{"one", "two", "three"} {
		if code, body := h.postTelegram(telegramUpdate(95600002+i, chat, text)); code != http.StatusOK {
			t.Fatalf("%s: %d %s", text, code, body)
		}
	}
	h.waitRequests(thread, 2, 30*time.Second)
	h.quiesce(30 * time.Second)
	reqs := h.agent.requests(thread)
	if len(reqs) != 2 {
		t.Fatalf("the agent got %d turns, want the slow one and one for the three", len(reqs))
	}
	if got := eventTexts(reqs[1].Events); got != "one,two,three" || reqs[1].Event.Text != "three" {
		t.Fatalf("the next turn carries %q (event %q), want the three in order", got, reqs[1].Event.Text)
	}
	if got := texts(h.fake.Delivered()); len(got) != 4 {
		t.Fatalf("delivered %v, want the echo of each turn (two bubbles each)", got)
	}
}

// TestInterruptEndToEnd: with PARLEY_BUSY_POLICY=interrupt, a message that
// arrives while the previous reply's bubbles wait their delay supersedes
// them: they are never sent, the next turn names them and their turn, and
// the next reply arrives in full.
func TestInterruptEndToEnd(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_BUSY_POLICY": "interrupt", "PARLEY_BUBBLE_DELAY": "3s"}})
	const chat = 5700
	thread := "telegram:" + tgBotID + ":5700"
	if code, body := h.postTelegram(telegramUpdate(95700001, chat, "/bubbles a | b | c")); code != http.StatusOK {
		t.Fatalf("first: %d %s", code, body)
	}
	if got := h.waitDelivered(1, 20*time.Second); got[0].Text != "a" {
		t.Fatalf("first delivered %q", got[0].Text)
	}
	if code, body := h.postTelegram(telegramUpdate(95700002, chat, "/one never mind")); code != http.StatusOK {
		t.Fatalf("second: %d %s", code, body)
	}
	h.waitDelivered(2, 30*time.Second)
	h.quiesce(30 * time.Second)
	if got := texts(h.fake.Delivered()); !slices.Equal(got, []string{"a", "never mind"}) {
		t.Fatalf("delivered %v, want a, then the newer reply: b and c superseded", got)
	}
	reqs := h.agent.requests(thread)
	first := intent.IDFor(message.Event{Platform: message.Telegram, Account: tgBotID, EventID: "95700001"}.Key())
	sup := reqs[1].Superseded
	if sup == nil || sup.TurnID != first || len(sup.Bubbles) != 2 || sup.Bubbles[0].Text != "b" || sup.Bubbles[1].Text != "c" {
		t.Fatalf("the newer turn names %+v, want turn %s's b and c", sup, first)
	}
}

func eventTexts(evs []message.Event) string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Text)
	}
	return strings.Join(out, ",")
}

// TestQuotesNameTheBubblesTurn: with history on, a reply to one of
// Parley's bubbles carries its text and turn id where the platform names
// only the quoted message's id: WhatsApp's context, LINE's quotedMessageId
// and a Slack thread started on a bubble of a direct message.
func TestQuotesNameTheBubblesTurn(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_HISTORY": "20"}})
	now := time.Now()
	check := func(thread string, first message.Event, bubble fakeplatform.Delivery) {
		t.Helper()
		reqs := h.agent.requests(thread)
		if len(reqs) != 2 {
			t.Fatalf("%s: %d turns, want 2", thread, len(reqs))
		}
		q := reqs[1].Event.Quote
		if q == nil || q.Text != bubble.Text || !q.Parley || q.TurnID != intent.IDFor(first.Key()) || q.MessageID != bubble.MessageID {
			t.Errorf("%s: the reply quotes %+v, want %q of turn %s", thread, q, bubble.Text, intent.IDFor(first.Key()))
		}
	}
	deliveredTo := func(p message.Platform, n int) fakeplatform.Delivery {
		t.Helper()
		for _, d := range h.waitDelivered(n, 20*time.Second) {
			if d.Platform == p && d.Text == "quote me" {
				return d
			}
		}
		t.Fatalf("no bubble delivered on %s", p)
		return fakeplatform.Delivery{}
	}

	const ada = "15551230042"
	if code, body := h.postWhatsApp(waText("wamid.Q1", ada, "/one quote me", now)); code != http.StatusOK {
		t.Fatalf("whatsapp: %d %s", code, body)
	}
	wb := deliveredTo(message.WhatsApp, 1)
	h.quiesce(20 * time.Second)
	reply := strings.Replace(string(waText("wamid.Q2", ada, "/one about that", now)), `"type":"text"`, `"context":{"from":"15550001234","id":"`+wb.MessageID+`"},"type":"text"`, 1)
	if code, body := h.postWhatsApp([]byte(reply)); code != http.StatusOK {
		t.Fatalf("whatsapp reply: %d %s", code, body)
	}
	h.waitDelivered(2, 20*time.Second)
	h.quiesce(20 * time.Second)
	check("whatsapp:"+waPhone+":"+ada, message.Event{Platform: message.WhatsApp, Account: waPhone, EventID: "wamid.Q1"}, wb)

	const user = "Uada00000000000000000000000000077"
	if code, body := h.postLine(lineText("01KBQUOTE00000000000000001", user, "/one quote me", now)); code != http.StatusOK {
		t.Fatalf("line: %d %s", code, body)
	}
	lb := deliveredTo(message.LINE, 3)
	h.quiesce(20 * time.Second)
	lreply := strings.Replace(string(lineText("01KBQUOTE00000000000000002", user, "/one about that", now)), `"quoteToken"`, `"quotedMessageId":"`+lb.MessageID+`","quoteToken"`, 1)
	if code, body := h.postLine([]byte(lreply)); code != http.StatusOK {
		t.Fatalf("line reply: %d %s", code, body)
	}
	h.waitDelivered(4, 20*time.Second)
	h.quiesce(20 * time.Second)
	check("line:"+lineBot+":"+user, message.Event{Platform: message.LINE, Account: lineBot, EventID: "01KBQUOTE00000000000000001"}, lb)

	if code, body := h.postSlack(slackDM("D0QUOTE001", "1764800000.000100", "/one quote me")); code != http.StatusOK {
		t.Fatalf("slack: %d %s", code, body)
	}
	sb := deliveredTo(message.Slack, 5)
	h.quiesce(20 * time.Second)
	threaded := strings.Replace(string(slackDM("D0QUOTE001", "1764800009.000100", "/one about that")), `"channel_type":"im"`, `"channel_type":"im","thread_ts":"`+sb.MessageID+`"`, 1)
	if code, body := h.postSlack([]byte(threaded)); code != http.StatusOK {
		t.Fatalf("slack thread: %d %s", code, body)
	}
	h.waitDelivered(6, 20*time.Second)
	h.quiesce(20 * time.Second)
	reqs := h.agent.requests("slack:T0TEAM0001:D0QUOTE001:" + sb.MessageID)
	first := message.Event{Platform: message.Slack, Account: "T0TEAM0001", EventID: "D0QUOTE001:1764800000.000100"}
	if len(reqs) != 1 || reqs[0].Event.Quote == nil || reqs[0].Event.Quote.TurnID != intent.IDFor(first.Key()) || reqs[0].Event.Quote.Text != "quote me" {
		t.Errorf("the Slack thread's first message quotes %+v, want the bubble it was started on", reqs)
	}
}
