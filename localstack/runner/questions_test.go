package runner_test

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// Questions end to end (issue: questions): the echo agent's /ask, answered
// by presses and replies, through every function, on DynamoDB Local and
// fauxqs, for Telegram and Slack.

var updateIDs atomic.Int64

func init() { updateIDs.Store(800_000_000) }

const ada, grace = int64(42), int64(43)

// askTelegram posts "/ask form" in Ada's private chat and returns the
// question message as the fake platform got it.
func (h *harness) askTelegram(form string) fakeplatform.Delivery {
	h.t.Helper()
	before := len(h.fake.Delivered())
	if code, body := h.postTelegram(telegramUpdate(int(updateIDs.Add(1)), ada, "/ask "+form)); code != http.StatusOK {
		h.t.Fatalf("/ask: %d %s", code, body)
	}
	got := h.waitDelivered(before+2, 20*time.Second)
	q := got[before+1]
	if len(q.Controls) == 0 && form != "note" {
		h.t.Fatalf("the question went without controls: %+v", q)
	}
	return q
}

// pressTelegram presses the control labelled label on the question message
// q, as user, and returns the webhook's status.
func (h *harness) pressTelegram(q fakeplatform.Delivery, label string, user int64) int {
	h.t.Helper()
	data := ""
	for _, c := range h.controls(q) {
		if strings.TrimPrefix(c.Label, "✓ ") == label {
			data = c.Data
		}
	}
	if data == "" {
		h.t.Fatalf("no control %q on %+v", label, h.controls(q))
	}
	return h.pressTelegramData(q, data, user)
}

// pressTelegramData sends a press of data on q, whatever q shows now (a
// stale button on a client that has not redrawn the message).
func (h *harness) pressTelegramData(q fakeplatform.Delivery, data string, user int64) int {
	h.t.Helper()
	chat, _ := strconv.ParseInt(q.Chat, 10, 64)
	msg, _ := strconv.ParseInt(q.MessageID, 10, 64)
	id := updateIDs.Add(1)
	tg, _ := h.fake.For(message.Telegram)
	code, body := h.postTelegram(tg.(*faketelegram.API).Press(id, id*10, chat, user, msg, data))
	if code != http.StatusOK {
		h.t.Fatalf("press: %d %s", code, body)
	}
	return code
}

// controls are the question message's controls as they are now: its last
// edit's, else its own.
func (h *harness) controls(q fakeplatform.Delivery) []fakeapi.Control {
	ctl := q.Controls
	for _, e := range h.fake.Recorder().Edits() {
		if e.Chat == q.Chat && e.MessageID == q.MessageID {
			ctl = e.Controls
		}
	}
	return ctl
}

// waitAnswers waits until the agent got n answers.
func (h *harness) waitAnswers(n int) []agent.Answer {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if got := h.agent.gotAnswers(); len(got) >= n {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.t.Fatalf("the agent got %d answers, want %d: %+v", len(h.agent.gotAnswers()), n, h.agent.gotAnswers())
	return nil
}

// lastReply is the text of the last message Parley sent in reply to the
// question message q: a press's notice, on Telegram.
func (h *harness) lastReply(q fakeplatform.Delivery) string {
	h.t.Helper()
	var last string
	for _, d := range h.fake.Delivered() {
		if d.Chat == q.Chat && d.ReplyTo == q.MessageID {
			last = d.Text
		}
	}
	return last
}

func (h *harness) lastEdit(q fakeplatform.Delivery) fakeapi.Edit {
	h.t.Helper()
	var last fakeapi.Edit
	for _, e := range h.fake.Recorder().Edits() {
		if e.Chat == q.Chat && e.MessageID == q.MessageID {
			last = e
		}
	}
	return last
}

func (h *harness) question(th message.Thread) store.Question {
	h.t.Helper()
	q, err := h.store.GetQuestion(context.Background(), store.QuestionKey(th))
	if err != nil {
		h.t.Fatal(err)
	}
	return q
}

var adaChat = message.Thread{Platform: message.Telegram, Account: tgBotID, Chat: "42"}

// TestQuestionAnsweredByTheOwner: the owner's press reaches the agent
// exactly once, as accept with the agent's key and value; another person's
// press reaches no agent and gets a notice; a second press is no second
// answer; the question message is edited to its outcome.
func TestQuestionAnsweredByTheOwner(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	q := h.askTelegram("seat")
	if !strings.HasPrefix(q.Text, "Your flight to Lisbon") || len(q.Controls) != 2 {
		t.Fatalf("question %q controls %+v", q.Text, q.Controls)
	}
	for _, c := range q.Controls {
		if len(c.Data) > 64 || strings.Contains(c.Data, "12A") || strings.Contains(c.Data, "seat") {
			t.Fatalf("control data %q carries the agent's words or is too long", c.Data)
		}
	}
	// While it is open, a message is a turn like any other, and the
	// question stays open.
	before := len(h.fake.Delivered())
	h.postTelegram(telegramUpdate(int(updateIDs.Add(1)), ada, "hello"))
	if d := h.waitDelivered(before+2, 20*time.Second); d[before].Text != "echo: hello" {
		t.Fatalf("a message while the question is open: %q", d[before].Text)
	}
	if q := h.question(adaChat); q.State != store.QuestionOpen {
		t.Fatalf("the question closed on a message: %+v", q)
	}
	calls := h.agent.calls()
	h.pressTelegram(q, "Aisle", grace)
	h.quiesce(20 * time.Second)
	if n := h.agent.calls(); n != calls {
		t.Fatalf("another person's press reached the agent (%d calls)", n-calls)
	}
	// The press was answered by its webhook; the notice is a message
	// replying to the question (Telegram shows one person nothing else).
	if n := h.fake.Recorder().Notices(); len(n) != 1 || n[0].Text != "" || h.lastReply(q) != "Only the person who was asked can answer." {
		t.Fatalf("notices %+v, reply %q", n, h.lastReply(q))
	}
	h.pressTelegram(q, "Aisle", ada)
	got := h.waitAnswers(1)
	want := agent.Answer{QuestionID: h.question(adaChat).ID, Action: agent.AnswerAccept, Content: map[string]any{"seat": "12C"}}
	if !reflect.DeepEqual(got[0], want) {
		t.Fatalf("answer %+v, want %+v", got[0], want)
	}
	h.pressTelegramData(q, q.Controls[0].Data, ada) // a double click on Window, after Aisle won
	h.quiesce(20 * time.Second)
	if n := len(h.agent.gotAnswers()); n != 1 {
		t.Fatalf("%d answers reached the agent", n)
	}
	if e := h.lastEdit(q); !strings.Contains(e.Text, "✓ Aisle") || len(e.Controls) != 0 {
		t.Fatalf("the question message is %q with %+v", e.Text, e.Controls)
	}
	if !slices.ContainsFunc(h.fake.Delivered(), func(d fakeplatform.Delivery) bool {
		return strings.HasPrefix(d.Text, "answer accept to "+want.QuestionID+`: {"seat":"12C"}`)
	}) {
		t.Fatalf("no reply of the agent to the answer: %q", texts(h.fake.Delivered()))
	}
	notices := h.fake.Recorder().Notices()
	if len(notices) != 3 || notices[1].Text != "" || notices[2].Text != "" || h.lastReply(q) != "This question is closed." {
		t.Fatalf("every press is acknowledged: %+v, the last notice %q", notices, h.lastReply(q))
	}
}

// TestQuestionFreeTextAndMultiSelect: the three-field form, one field at a
// time in one edited message: a press, toggles with their marks and a cap,
// Done, an invalid reply re-prompted and a valid one accepted.
func TestQuestionFreeTextAndMultiSelect(t *testing.T) {
	t.Parallel()
	testQuestionFreeTextAndMultiSelect(t, false)
}

func testQuestionFreeTextAndMultiSelect(t *testing.T, lost bool) *harness {
	h := start(t, options{lostAnswers: lost})
	q := h.askTelegram("")
	h.pressTelegram(q, "Window", ada)
	h.quiesce(20 * time.Second)
	if e := h.lastEdit(q); !strings.Contains(e.Text, "(2/3) Extras") {
		t.Fatalf("after the seat, the message shows %q", e.Text)
	}
	h.pressTelegram(q, "Meal", ada)
	h.quiesce(20 * time.Second)
	h.pressTelegram(q, "Wi-Fi", ada)
	h.quiesce(20 * time.Second)
	if ctl := h.controls(q); !slices.ContainsFunc(ctl, func(c fakeapi.Control) bool { return c.Label == "✓ Meal" }) {
		t.Fatalf("no mark on a chosen option: %+v", ctl)
	}
	h.pressTelegram(q, "Extra bag", ada)
	h.quiesce(20 * time.Second)
	if r := h.lastReply(q); r != "Choose at most 2." {
		t.Fatalf("a third extra: %q", r)
	}
	h.pressTelegram(q, "Done", ada)
	h.quiesce(20 * time.Second)
	before := len(h.fake.Delivered())
	h.postTelegram(telegramUpdate(int(updateIDs.Add(1)), ada, strings.Repeat("x", 201)))
	re := h.waitDelivered(before+1, 20*time.Second)[before]
	if re.Text != "Please reply with 1 to 200 characters." {
		t.Fatalf("an invalid note got %q", re.Text)
	}
	if n := len(h.agent.gotAnswers()); n != 0 {
		t.Fatalf("an invalid answer reached the agent")
	}
	h.postTelegram(telegramUpdate(int(updateIDs.Add(1)), ada, "aisle side please"))
	got := h.waitAnswers(1)
	want := map[string]any{"seat": "12A", "extras": []any{"meal", "wifi"}, "note": "aisle side please"}
	if got[0].Action != agent.AnswerAccept || !reflect.DeepEqual(got[0].Content, want) {
		t.Fatalf("answer %+v", got[0])
	}
	// The invalid reply never reached the agent; the valid one only as the
	// answer's turn.
	if texts := h.agent.texts(adaChat.Key()); slices.Contains(texts, strings.Repeat("x", 201)) || texts[len(texts)-1] != "aisle side please" {
		t.Fatalf("agent texts %q", texts)
	}
	return h
}

// TestQuestionSkipSupersedeAndExpiry: an optional question skipped is a
// decline; a newer question cancels the open one (the agent hears cancel,
// the old message says so); one left unanswered past its TTL is cancelled
// by the sweeper.
func TestQuestionSkipSupersedeAndExpiry(t *testing.T) {
	t.Parallel()
	testQuestionSkipSupersedeAndExpiry(t, false)
}

func testQuestionSkipSupersedeAndExpiry(t *testing.T, lost bool) *harness {
	// The TTL is far beyond what a loaded machine takes between an ask
	// and its press (the clock is real time plus an offset); the test
	// moves the clock past it to expire the question.
	h := start(t, options{lostAnswers: lost, env: map[string]string{"PARLEY_QUESTION_TTL": "10m"}})
	q := h.askTelegram("optional")
	h.pressTelegram(q, "Skip", ada)
	if got := h.waitAnswers(1); got[0].Action != agent.AnswerDecline || got[0].Content != nil {
		t.Fatalf("skip: %+v", got[0])
	}
	h.quiesce(20 * time.Second)

	first := h.askTelegram("seat")
	firstID := h.question(adaChat).ID
	h.askTelegram("extras")
	got := h.waitAnswers(2)
	if !reflect.DeepEqual(got[1], agent.Answer{QuestionID: firstID, Action: agent.AnswerCancel}) {
		t.Fatalf("the superseded question's answer: %+v", got[1])
	}
	h.quiesce(20 * time.Second)
	if e := h.lastEdit(first); !strings.Contains(e.Text, "A newer question replaced this one.") || len(e.Controls) != 0 {
		t.Fatalf("the superseded message: %+v", e)
	}

	// The second question expires: the clock moves past its 10-minute
	// TTL, the sweeper runs every few seconds.
	// The sweeper's first try to enqueue the cancel fails (a crash after
	// the record): the next run enqueues it, and the agent hears it once.
	second := h.question(adaChat)
	var failed atomic.Bool
	h.faults.Add(awsfault.Fault{Op: "SQS.SendMessage", Match: func(any) bool { return failed.CompareAndSwap(false, true) }})
	h.clock.Advance(11 * time.Minute)
	got = h.waitAnswers(3)
	if !reflect.DeepEqual(got[2], agent.Answer{QuestionID: second.ID, Action: agent.AnswerCancel}) {
		t.Fatalf("the expired question's answer: %+v", got[2])
	}
	// The sweeper takes the record off its list after the cancel is
	// enqueued: the agent may hear the cancel first.
	expired := h.question(adaChat)
	for deadline := time.Now().Add(20 * time.Second); expired.Sweep && time.Now().Before(deadline); expired = h.question(adaChat) {
		time.Sleep(100 * time.Millisecond)
	}
	if expired.State != store.QuestionCancelled || expired.Reason != "expired" || expired.Sweep {
		t.Fatalf("expired record %+v", expired)
	}
	h.quiesce(20 * time.Second)
	if n := len(h.agent.gotAnswers()); n != 3 || !failed.Load() {
		t.Fatalf("%d answers (the fault fired: %v)", n, failed.Load())
	}
	return h
}

// TestQuestionAnswerSurvivesCrashes: a crash after the answer is recorded
// (the agent's reply cannot be committed) loses and doubles nothing: the redelivered press
// carries on, the agent's answer is delivered once.
func TestQuestionAnswerSurvivesCrashes(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	q := h.askTelegram("seat")
	// The reply's intent write fails once: after the record, before the
	// enqueue.
	var armed atomic.Bool
	armed.Store(true)
	h.faults.Add(awsfault.Fault{Op: "DynamoDB.UpdateItem", Match: func(in any) bool {
		return armed.Load() && turnCommit(in) && armed.CompareAndSwap(true, false)
	}})
	h.pressTelegram(q, "Window", ada)
	h.waitAnswers(1)
	h.quiesce(40 * time.Second)
	ds := h.fake.Delivered()
	n := 0
	for _, d := range ds {
		if strings.HasPrefix(d.Text, "answer accept to ") {
			n++
		}
	}
	if n != 1 || armed.Load() {
		t.Fatalf("%d replies to the answer delivered (fault fired: %v)", n, !armed.Load())
	}
	if q := h.question(adaChat); q.State != store.QuestionAnswered {
		t.Fatalf("record %+v", q)
	}
}

// TestSlackQuestion: Block Kit buttons and checkboxes, answered through
// the Interactivity request Slack signs like every other; another person
// gets an ephemeral notice; a forged press is refused and writes nothing.
func TestSlackQuestion(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	before := len(h.fake.Delivered())
	ts := "1764432100.000100"
	h.postSlack(slackDM("D0DM000001", ts, "/ask extras"))
	q := h.waitDelivered(before+2, 20*time.Second)[before+1]
	if len(q.Controls) != 4 { // three checkboxes and Done
		t.Fatalf("controls %+v", q.Controls)
	}
	sel := strings.TrimSuffix(q.Controls[0].Data, ":0") + ":s"
	press := func(user, actionTS, data string, values ...string) int {
		body := fakeslack.BlockActions("T0TEAM0001", "D0DM000001", user, q.MessageID, actionTS, data, values...)
		code, _ := h.post("/slack", fakeplatform.SignSlack(slackSecret, h.clock.Now(), body), body)
		return code
	}
	if code, _ := h.post("/slack", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, fakeslack.BlockActions("T0TEAM0001", "D0DM000001", "U0ADA00001", q.MessageID, "1764432200.000001", sel)); code != http.StatusUnauthorized {
		t.Fatalf("an unsigned press: %d", code)
	}
	if code := press("U0GRACE001", "1764432200.000002", sel, q.Controls[0].Data); code != http.StatusOK {
		t.Fatalf("press: %d", code)
	}
	h.quiesce(20 * time.Second)
	if n := h.fake.Recorder().Notices(); len(n) != 1 || n[0].User != "U0GRACE001" {
		t.Fatalf("notices %+v", n)
	}
	press("U0ADA00001", "1764432200.000003", sel, q.Controls[0].Data, q.Controls[2].Data)
	h.quiesce(20 * time.Second)
	press("U0ADA00001", "1764432200.000004", q.Controls[3].Data)
	got := h.waitAnswers(1)
	if got[0].Action != agent.AnswerAccept || !reflect.DeepEqual(got[0].Content, map[string]any{"extras": []any{"meal", "wifi"}}) {
		t.Fatalf("answer %+v", got[0])
	}
	h.quiesce(20 * time.Second)
	if e := h.lastEdit(q); !strings.Contains(e.Text, "✓ Meal, Wi-Fi") || len(e.Controls) != 0 {
		t.Fatalf("edited to %+v", e)
	}
}

// TestQuestionsOff: under PARLEY_QUESTIONS=off an ask renders nothing and
// its agent hears cancel at once.
func TestQuestionsOff(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_QUESTIONS": "off"}})
	h.postTelegram(telegramUpdate(int(updateIDs.Add(1)), ada, "/ask seat"))
	got := h.waitAnswers(1)
	if got[0].Action != agent.AnswerCancel {
		t.Fatalf("answer %+v", got[0])
	}
	h.quiesce(20 * time.Second)
	for _, d := range h.fake.Delivered() {
		if len(d.Controls) > 0 || strings.HasPrefix(d.Text, "Your flight") {
			t.Fatalf("a question was rendered: %+v", d)
		}
	}
}

// TestPressIsAnsweredAtIngress_Finding9 (issue 23, finding 9): the press's
// answerCallbackQuery was sent by its turn, behind the thread's other
// turns, and Telegram refuses to answer a query a few seconds old: a press
// in a busy thread left the button spinning. The webhook now answers the
// press itself (a Bot API method as the webhook's answer, which Telegram
// calls for the bot), once the press is durable, while the press still
// waits its turn in order: here behind a turn that waits for its agent's
// reply.
func TestPressIsAnsweredAtIngress_Finding9(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	q := h.askTelegram("seat")
	h.agent.fail = later
	id := int(updateIDs.Add(1))
	if code, _ := h.postTelegram(telegramUpdate(id, ada, "later, please")); code != http.StatusOK {
		t.Fatal("the message before the press")
	}
	h.waitAwait(intent.IDFor("evt#telegram#" + tgBotID + "#" + strconv.Itoa(id)))

	before := len(h.fake.Recorder().Notices())
	pressed := time.Now()
	h.pressTelegram(q, "Aisle", ada)
	notices := h.fake.Recorder().Notices()
	if len(notices) != before+1 || notices[before].Text != "" || notices[before].At.Sub(pressed) > faketelegram.QueryLife {
		t.Fatalf("the press was not answered when its webhook was: %+v", notices[before:])
	}
	// The press itself waits behind the turn: the question is still open,
	// and the agent has heard no answer.
	time.Sleep(2 * time.Second)
	if st := h.question(adaChat).State; st != store.QuestionOpen || len(h.agent.gotAnswers()) != 0 {
		t.Fatalf("the press jumped the thread's queue: question %s, answers %+v", st, h.agent.gotAnswers())
	}
	// Its turn answers nothing a second time (Telegram would refuse it).
	turnReply := replyBody(intent.IDFor("evt#telegram#"+tgBotID+"#"+strconv.Itoa(id)), "done")
	if code, body := h.postReply("msg_finding9", turnReply); code != http.StatusOK {
		t.Fatalf("reply: %d %s", code, body)
	}
	if got := h.waitAnswers(1); got[0].Action != agent.AnswerAccept {
		t.Fatalf("answers %+v", got)
	}
	h.quiesce(10 * time.Second)
	if n := len(h.fake.Recorder().Notices()); n != before+1 {
		t.Fatalf("the press was answered %d times", n-before)
	}
}
