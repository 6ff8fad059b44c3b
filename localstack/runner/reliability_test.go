package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/platform/events"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/turn"
)

// TestLongTimeoutsStillRunTurns (finding 8.5): PARLEY_AGENT_TIMEOUT=60s made
// the turn's minimum start time exceed its function's budget, so every batch
// went back untouched until it reached the DLQ; PARLEY_SEND_TIMEOUT=26s did the
// same to delivery. With both set, a message is answered as usual.
func TestLongTimeoutsStillRunTurns(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_AGENT_TIMEOUT": "60s", "PARLEY_SEND_TIMEOUT": "26s"}})
	if status, body := h.postTelegram(telegramUpdate(8501, 851, "/bubbles one | two")); status != http.StatusOK {
		t.Fatalf("webhook: %d %s", status, body)
	}
	if got := texts(h.waitDelivered(2, 30*time.Second)); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("delivered %q", got)
	}
}

// TestSweeperRedrivesUnitsDeletedByHand: the outbound messages of a reply are
// deleted before delivery sees them (by hand, or dead-lettered). Nothing is
// lost: the sweeper finds the open intent past its grace and re-drives it,
// and every bubble goes out once, in order.
func TestSweeperRedrivesUnitsDeletedByHand(t *testing.T) {
	t.Parallel()
	testSweeperRedrivesUnitsDeletedByHand(t, false)
}

func testSweeperRedrivesUnitsDeletedByHand(t *testing.T, lost bool) *harness {
	h := start(t, options{lostAnswers: lost, holdDelivery: true})
	if status, body := h.postTelegram(telegramUpdate(8701, 871, "/bubbles first | second | third")); status != http.StatusOK {
		t.Fatalf("webhook: %d %s", status, body)
	}
	deleted := 0
	for deadline := time.Now().Add(20 * time.Second); deleted < 3 && time.Now().Before(deadline); {
		out, err := h.env.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(h.env.Resources.OutboundURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			if _, err := h.env.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(h.env.Resources.OutboundURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
			deleted++
		}
	}
	if deleted != 3 {
		t.Fatalf("deleted %d outbound messages, want the reply's 3", deleted)
	}
	h.release()
	// The intent is due on the sweeper's list where its turn's claim was:
	// the claim's lease end, plus the grace.
	h.clock.Advance(turn.Config{}.WithDefaults().ClaimLease + intent.SweepGrace + time.Second)
	got := h.waitDelivered(3, 30*time.Second)
	if !slices.Equal(texts(got), []string{"first", "second", "third"}) {
		t.Fatalf("delivered %q, want all three, in order", texts(got))
	}
	h.quiesce(20 * time.Second)
	if n := len(h.fake.Delivered()); n != 3 {
		t.Fatalf("%d deliveries after settling, want 3", n)
	}
	if len(h.logs.lines("finding", "redriven")) == 0 {
		t.Fatal("no redriven finding logged")
	}
	return h
}

// TestFourteenHourDeferralIsDeliveredAtItsTime: a proactive event in quiet
// hours that end 14 hours later (defer mode) is held, then delivered when
// they end, on its thread's own group.
func TestFourteenHourDeferralIsDeliveredAtItsTime(t *testing.T) {
	t.Parallel()
	testFourteenHourDeferralIsDeliveredAtItsTime(t, false)
}

func testFourteenHourDeferralIsDeliveredAtItsTime(t *testing.T, lost bool) *harness {
	now := time.Now().UTC()
	from, to := now.Add(-time.Hour), now.Add(14*time.Hour)
	quiet := fmt.Sprintf(`{"quiet_hours":"%02d:%02d-%02d:%02d","quiet_mode":"defer","daily_cap":5}`, from.Hour(), from.Minute(), to.Hour(), to.Minute())
	h := start(t, options{lostAnswers: lost, env: map[string]string{"PARLEY_TRIAGE": quiet}})
	secret, err := standardwebhooks.ParseSecret(eventsSecret)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"id": "msg_defer_14h", "source": "cron",
		"target": map[string]string{"platform": "telegram", "account": tgBotID, "chat": "-1001000000001"}, "text": "morning digest"})
	status, ack := h.post("/events", events.SignRequest(secret, "msg_defer_14h", h.clock.Now(), body), body)
	if status != http.StatusOK || !json.Valid([]byte(ack)) || !strings.Contains(ack, `"deferred"`) {
		t.Fatalf("events webhook: %d %s, want it deferred", status, ack)
	}
	time.Sleep(4 * time.Second) // a sweep or two: nothing is due yet
	if n := len(h.fake.Delivered()); n != 0 {
		t.Fatalf("%d deliveries before quiet hours end", n)
	}
	h.clock.Advance(14 * time.Hour)
	got := h.waitDelivered(2, 30*time.Second)
	if got[0].Chat != "-1001000000001" || got[0].Text != "echo: morning digest" {
		t.Fatalf("delivered %+v", got[0])
	}
	return h
}

// TestAgentTextIsInertOnSlack (finding 9.3): an agent's reply holding Slack
// control sequences reached the API verbatim, so <!channel> pinged a whole
// channel and <url|label> disguised a link. It reaches Slack escaped.
func TestAgentTextIsInertOnSlack(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	if status, body := h.postSlack(slackDM("D0DM000093", "1764432200.000100", "/one <!channel> <@U1> <https://x|y>")); status != http.StatusOK {
		t.Fatalf("webhook: %d %s", status, body)
	}
	got := h.waitDelivered(1, 30*time.Second)
	if want := "&lt;!channel&gt; &lt;@U1&gt; &lt;https://x|y&gt;"; got[0].Text != want {
		t.Fatalf("Slack received %q, want %q", got[0].Text, want)
	}
}
