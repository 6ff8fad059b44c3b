package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/localtest"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/queue"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// stack is make run's stack, for the CLI.
type stack struct {
	*localtest.Stack
	t *testing.T
}

func startStack(t *testing.T) *stack {
	return &stack{Stack: localtest.Start(t, localtest.Options{}), t: t}
}

// parley runs the CLI on the local stack and returns its status and output.
func (s *stack) parley(args ...string) (int, string, string) {
	s.t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "--local", "--local-state", s.State)
	code := cli(context.Background(), &out, &errOut, func(string) string { return "" }, args)
	return code, out.String(), errOut.String()
}

// say posts a person's Telegram message in chat 42.
func (s *stack) say(seq int64, text string) string {
	s.t.Helper()
	w, err := s.Signer.Say(fakeplatform.Said{Platform: message.Telegram, ChatType: fakeplatform.ChatPrivate, Text: text, At: time.Now(), Seq: seq})
	if err != nil {
		s.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/telegram", bytes.NewReader(w.Body))
	req.Header = w.Header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("webhook: %s %s", resp.Status, body)
	}
	return fmt.Sprintf("evt#telegram#7000000001#%d", seq)
}

// until waits for cond.
func (s *stack) until(what string, cond func() bool) {
	s.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if cond() {
			return
		}
	}
	s.t.Fatalf("timed out waiting for %s", what)
}

// TestOperatorFindsInspectsResendsAbandonsAndRedrives: an operator on make
// run's stack finds a unit held for them with parley attention, reads its
// message's timeline with parley message, resends it (which asks for --yes
// on Telegram, where a copy may show) and abandons another; each decision
// run twice changes nothing more; and parley dlq redrive refuses, moving
// nothing, a dead-letter queue that holds a message older than --max-age.
func TestOperatorFindsInspectsResendsAbandonsAndRedrives(t *testing.T) {
	s := startStack(t)

	// Two messages whose first bubble's answer is lost: held for an
	// operator (Telegram's unknown-outcome policy is hold).
	s.Fake.Inject(fakeplatform.Fault{Platform: message.Telegram, DropResponseAfterCommit: true, Times: 2})
	first := s.say(28001, "/one first reply")
	s.until("the first held unit", func() bool {
		code, out, _ := s.parley("attention")
		return code == 0 && strings.Contains(out, "held_unit")
	})
	second := s.say(28002, "/one second reply")
	var items struct {
		Items []struct {
			Kind, Key     string
			CorrelationID string `json:"correlation_id"`
		}
	}
	s.until("two held units", func() bool {
		code, out, _ := s.parley("attention", "--json")
		if code != 0 || json.Unmarshal([]byte(out), &items) != nil {
			return false
		}
		return len(items.Items) == 2
	})
	if items.Items[0].CorrelationID != first || items.Items[1].CorrelationID != second || items.Items[0].Kind != "held_unit" {
		t.Fatalf("attention %+v: want the first message's unit, then the second's, oldest first", items.Items)
	}
	heldUnit, abandonUnit := items.Items[0].Key, items.Items[1].Key
	if id, _, _ := intent.ParseUnitKey(heldUnit); id != intent.IDFor(first) {
		t.Fatalf("unit %s is not the first message's", heldUnit)
	}

	code, out, errOut := s.parley("message", first)
	if code != 0 || !strings.Contains(out, "correlation id  "+first) || !strings.Contains(out, "unknown_after_send") || !strings.Contains(out, "agent_called") ||
		!strings.Contains(out, "log:turn") || !strings.Contains(out, "parley resend|abandon "+heldUnit) {
		t.Fatalf("parley message: %d\n%s%s", code, out, errOut)
	}

	code, _, errOut = s.parley("resend", heldUnit)
	if code != exitNeedsYes || !strings.Contains(errOut, "twice") || !strings.Contains(errOut, "--yes") {
		t.Fatalf("resend without --yes: %d %s; want it to say what it risks and ask", code, errOut)
	}
	code, out, errOut = s.parley("resend", heldUnit, "--yes")
	if code != 0 || !strings.HasPrefix(out, "resent: unit "+heldUnit) {
		t.Fatalf("resend --yes: %d\n%s%s", code, out, errOut)
	}
	s.until("the resent bubble", func() bool {
		n := 0
		for _, d := range s.Fake.Delivered() {
			if d.Text == "first reply" {
				n++
			}
		}
		return n == 2 // the send whose answer was lost, and the resend
	})
	s.until("the resent unit sent", func() bool {
		code, out, _ := s.parley("resend", heldUnit, "--yes")
		return code == 0 && strings.HasPrefix(out, "already_sent")
	})

	code, out, errOut = s.parley("abandon", abandonUnit)
	if code != 0 || !strings.HasPrefix(out, "abandoned: unit "+abandonUnit) {
		t.Fatalf("abandon: %d\n%s%s", code, out, errOut)
	}
	if code, out, _ = s.parley("abandon", abandonUnit); code != 0 || !strings.HasPrefix(out, "already_abandoned") {
		t.Fatalf("abandon again: %d %s", code, out)
	}
	if code, out, _ = s.parley("attention"); code != 0 || !strings.Contains(out, "nothing needs a person") {
		t.Fatalf("attention after the decisions: %d\n%s", code, out)
	}

	// A turn dead-lettered 15 hours after its message came in.
	old := message.Event{Platform: message.Telegram, Account: "7000000001", EventID: "28003", Kind: message.KindMessage,
		Thread: message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"}, Text: "stale"}
	body, _ := intent.EncodeInbound(intent.Inbound{Event: old, ReceivedAt: time.Now().Add(-15 * time.Hour)})
	if err := queue.New(s.Env.SQS, s.Env.Resources.InboundDLQURL).Send(context.Background(), queue.Message{Group: old.Thread.Key(), Dedup: "dlq#x", Body: body}); err != nil {
		t.Fatal(err)
	}
	if code, out, _ = s.parley("dlq", "list", "inbound"); code != 0 || !strings.Contains(out, old.Key()) || !strings.Contains(out, "15h0") {
		t.Fatalf("dlq list: %d\n%s", code, out)
	}
	code, out, errOut = s.parley("dlq", "redrive", "inbound", "--max-age", "1h")
	if code != exitFailed || !strings.HasPrefix(out, "refused:") || !strings.Contains(out, old.Key()) {
		t.Fatalf("redrive of a 15-hour-old message: %d\n%s%s", code, out, errOut)
	}
	attrs, err := s.Env.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(s.Env.Resources.InboundDLQURL), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil || attrs.Attributes["ApproximateNumberOfMessages"] != "1" {
		t.Fatalf("dead-letter queue after the refusal: %v %v; want the message still there", attrs, err)
	}
	if code, _, errOut = s.parley("dlq", "redrive", "inbound"); code != exitUsage || !strings.Contains(errOut, "--max-age") {
		t.Fatalf("redrive without --max-age: %d %s", code, errOut)
	}

	code, out, _ = s.parley("status")
	if code != 0 || !strings.Contains(out, "not available locally") || !strings.Contains(out, "inbound") {
		t.Fatalf("status: %d\n%s", code, out)
	}
	code, out, _ = s.parley("thread", "telegram:7000000001:42")
	if code != 0 || !strings.Contains(out, first) || !strings.Contains(out, second) {
		t.Fatalf("thread: %d\n%s", code, out)
	}
}

// TestEveryCommandAnswersHelpAndRefusesAmbiguousInput: -h prints a
// command's usage and does nothing else; a key of the wrong kind, a
// missing argument or two stacks at once are refused, exit status 2.
func TestEveryCommandAnswersHelpAndRefusesAmbiguousInput(t *testing.T) {
	t.Parallel()
	noenv := func(string) string { return "" }
	for _, c := range commands {
		var out, errOut bytes.Buffer
		if code := cli(context.Background(), &out, &errOut, noenv, []string{c.name, "-h"}); code != 0 || !strings.Contains(out.String(), "usage: parley "+c.name) {
			t.Errorf("%s -h: %d %q %q", c.name, code, out.String(), errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := cli(context.Background(), &out, &errOut, noenv, []string{"-h"}); code != 0 || !strings.Contains(out.String(), "dlq list|redrive") {
		t.Errorf("parley -h: %d %q", code, out.String())
	}
	for _, args := range [][]string{
		{"message"}, {"message", "a", "b"}, {"attention", "--local", "--stack", "Parley"}, {"attention"}, {"nonsense"},
		{"message", "900001", "--table", "t", "--inbound-url", "u"},
	} {
		var out, errOut bytes.Buffer
		if code := cli(context.Background(), &out, &errOut, noenv, args); code != exitUsage || errOut.Len() == 0 {
			t.Errorf("parley %q: %d %q, want refused with a message", args, code, errOut.String())
		}
	}
}
