package runner_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/callcount"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/questions"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// askSend is a /send body asking the seat question, with owner when set.
func askSend(thread, key, owner string) []byte {
	m := map[string]any{"thread_key": thread, "idempotency_key": key, "envelope": json.RawMessage(askSeatEnvelope)}
	if owner != "" {
		m["owner"] = owner
	}
	b, _ := json.Marshal(m)
	return b
}

const askSeatEnvelope = `{"schema":"openab.turn.v1","messages":[],"next":{"type":"ask","request":{"message":"Window or aisle?",
 "requestedSchema":{"type":"object","properties":{"seat":{"type":"string","oneOf":[{"const":"12A","title":"Window"},{"const":"12C","title":"Aisle"}]}},"required":["seat"]}}}}`

// TestOwnerlessQuestionInAGroup_Finding7: a question nobody owned, sent into
// a group (by /send, or asked in the turn of a proactive event), could be
// answered by anyone there: "deploy?" approved by whoever pressed first. A
// /send question into a group without an owner is refused 422, with a
// reason, and writes nothing; with an owner only the owner answers; in a
// private chat the person there owns it. A proactive turn's question into a
// group with nobody named is never shown: the agent hears cancel,
// no_owner.
func TestOwnerlessQuestionInAGroup_Finding7(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_SEND_TARGETS": `["telegram:` + tgBotID + `:*"]`}})
	group := message.Thread{Platform: message.Telegram, Account: tgBotID, Chat: "-1001000000077"}
	private := message.Thread{Platform: message.Telegram, Account: tgBotID, Chat: "77"}

	writes := h.calls.Total(callcount.Writes)
	code, body := h.postSend("msg_no_owner", askSend(group.Key(), "q-1", ""))
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "owner") {
		t.Fatalf("an ownerless question into a group: %d %s, want 422 naming owner", code, body)
	}
	if w := h.calls.Total(callcount.Writes); w != writes {
		t.Fatalf("the refused send wrote %d times", w-writes)
	}
	if code, body := h.postSend("msg_owner", askSend(group.Key(), "q-2", "42")); code != http.StatusAccepted {
		t.Fatalf("a question into a group with an owner: %d %s", code, body)
	}
	if code, body := h.postSend("msg_private", askSend(private.Key(), "q-3", "")); code != http.StatusAccepted {
		t.Fatalf("an ownerless question into a private chat: %d %s", code, body)
	}
	h.waitDelivered(2, 30*time.Second)
	h.quiesce(30 * time.Second)
	if q := h.question(group); q.Owner != "42" {
		t.Errorf("the group's question is owned by %q, want 42", q.Owner)
	}
	if q := h.question(private); q.Owner != "77" {
		t.Errorf("the private chat's question is owned by %q, want 77, the person there", q.Owner)
	}

	// A proactive event into another group, whose turn asks: not shown.
	secret, err := standardwebhooks.ParseSecret(eventsSecret)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := json.Marshal(map[string]any{"id": "msg_deploy", "source": "cron", "text": "/ask seat",
		"target": map[string]string{"platform": "telegram", "account": tgBotID, "chat": "-1001000000078"}})
	if status, ack := h.post("/events", events.SignRequest(secret, "msg_deploy", h.clock.Now(), ev), ev); status != http.StatusOK {
		t.Fatalf("events webhook: %d %s", status, ack)
	}
	answers := h.waitAnswers(1)
	if a := answers[len(answers)-1]; a.Action != agent.AnswerCancel {
		t.Fatalf("the agent heard %+v, want cancel", a)
	}
	h.quiesce(30 * time.Second)
	for _, d := range filterChat(h.fake.Delivered(), "-1001000000078") {
		if len(d.Controls) > 0 {
			t.Fatalf("an ownerless question was shown in the group: %+v", d)
		}
	}
	if !strings.Contains(h.logs.String(), `"outcome":"`+questions.ReasonNoOwner+`"`) {
		t.Error("no line says why the question was not asked")
	}
}
