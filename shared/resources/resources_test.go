package resources_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/resources"
)

// TestQueuesFitTheirConsumers checks the design's queue rules against the
// declared consumers: visibility ≥ 6 × the consumer's timeout, at least 5
// receives before the DLQ, FIFO batches of at most 10.
// testPlatforms are two chat platforms as the registry describes them.
var testPlatforms = []resources.PlatformSpec{
	{Name: "chat", ReceiveSecrets: []string{"CHAT_SIGNING"}, SendSecrets: []string{"CHAT_TOKEN"}},
	{Name: "other", ReceiveSecrets: []string{"OTHER_TOKEN"}, SendSecrets: []string{"OTHER_TOKEN"}},
}

// TestFunctionsWithPlatforms: each platform gets its ingress with its
// receive secrets, and the consumers get every send secret; the core
// functions keep theirs.
func TestFunctionsWithPlatforms(t *testing.T) {
	byName := map[string]resources.FunctionSpec{}
	var names []string
	for _, f := range resources.FunctionsWith(testPlatforms) {
		byName[f.Name] = f
		names = append(names, f.Name)
	}
	if want := []string{"chat", "other", "events", "reply", "turn", "delivery", "sweeper"}; !slices.Equal(names, want) {
		t.Fatalf("functions %v, want %v", names, want)
	}
	checks := map[string][]string{
		"chat": {"CHAT_SIGNING"}, "other": {"OTHER_TOKEN"},
		"events":   {resources.SecretEventsSecrets, resources.SecretGitHubWebhookSecret},
		"reply":    {resources.SecretAgentSecret, "CHAT_TOKEN", "OTHER_TOKEN"},
		"turn":     {resources.SecretAgentSecret, "CHAT_TOKEN", "OTHER_TOKEN"},
		"delivery": {"CHAT_TOKEN", "OTHER_TOKEN"},
		"sweeper":  {"CHAT_TOKEN", "OTHER_TOKEN"},
	}
	for name, want := range checks {
		if got := byName[name].Secrets; !slices.Equal(got, want) {
			t.Errorf("%s reads %v, want %v", name, got, want)
		}
	}
	if f := byName["chat"]; f.Kind != resources.Ingress || len(f.SendsTo) != 1 || f.SendsTo[0].Name != resources.Inbound.Name {
		t.Errorf("chat ingress = %+v", f)
	}
	// The declared core functions are not changed by it.
	if len(resources.Turn.Secrets) != 1 || len(resources.Delivery.Secrets) != 0 {
		t.Errorf("FunctionsWith changed the declarations: turn %v, delivery %v", resources.Turn.Secrets, resources.Delivery.Secrets)
	}
}

func TestQueuesFitTheirConsumers(t *testing.T) {
	for _, f := range resources.FunctionsWith(testPlatforms) {
		switch f.Kind {
		case resources.Consumer:
			q := f.Consumes
			if q == nil {
				t.Fatalf("%s: a consumer without a queue", f.Name)
			}
			if q.VisibilityTimeout < 6*f.Timeout {
				t.Errorf("%s: visibility %s < 6 × timeout %s", q.Name, q.VisibilityTimeout, f.Timeout)
			}
			if q.MaxReceiveCount < 5 {
				t.Errorf("%s: maxReceiveCount %d < 5", q.Name, q.MaxReceiveCount)
			}
			if f.BatchSize < 1 || f.BatchSize > 10 {
				t.Errorf("%s: batch size %d outside 1..10", f.Name, f.BatchSize)
			}
			if f.MaxConcurrency < 2 {
				t.Errorf("%s: maximum concurrency %d < 2 (the event source mapping's minimum)", f.Name, f.MaxConcurrency)
			}
		case resources.Ingress:
			// Webhooks and /send enqueue on inbound; only the reply
			// function (sequential posts) also reaches outbound, and wakes
			// a message on inbound. None consumes.
			sends := []string{}
			for _, q := range f.SendsTo {
				sends = append(sends, q.Name)
			}
			want := []string{resources.Inbound.Name}
			if f.Name == resources.Reply.Name {
				want = append(want, resources.Outbound.Name)
			}
			wakesInbound := f.Wakes == nil || f.Wakes.Name == resources.Inbound.Name
			if f.Consumes != nil || !slices.Equal(sends, want) || !wakesInbound {
				t.Errorf("%s: an ingress function must only send to (or wake) %s", f.Name, resources.Inbound.Name)
			}
		case resources.Scheduled:
			if f.Every < time.Minute {
				t.Errorf("%s: runs every %s, EventBridge's least is a minute", f.Name, f.Every)
			}
		default:
			t.Errorf("%s: unknown kind %q", f.Name, f.Kind)
		}
	}
	if resources.ContentBasedDeduplication || !resources.FIFO {
		t.Error("queues must be FIFO with content-based deduplication off")
	}
}

// TestTimingSizesTheConsumers (finding 8.5): PARLEY_AGENT_TIMEOUT=60s made
// the turn's minimum start time exceed its function's 60 s budget, so every
// batch was handed back untouched and reached the DLQ; PARLEY_SEND_TIMEOUT of
// 26 s did the same to delivery. The timeouts (and the visibility timeouts
// after them) are sized from the settings, and what no function can hold is
// refused, naming the variable.
func TestTimingSizesTheConsumers(t *testing.T) {
	for _, tc := range []resources.Timing{
		{}, {AgentTimeout: 60 * time.Second}, {AgentTimeout: 14 * time.Minute, SendTimeout: 26 * time.Second}, {SendTimeout: 10 * time.Minute},
	} {
		if err := tc.Validate(); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		d := tc.WithDefaults()
		turn, deliv := tc.TurnTimeout(), tc.DeliveryTimeout()
		// The consumers' own arithmetic: the turn starts a record only
		// with agent timeout + 5 s left, and keeps 2 s to report; delivery
		// needs its send timeout + 2 s, and pauses up to 5 s in place.
		if turn < d.AgentTimeout+7*time.Second || turn > resources.MaxFunctionTimeout || turn%time.Second != 0 {
			t.Errorf("%+v: turn timeout %s cannot hold one agent call", tc, turn)
		}
		if deliv < d.SendTimeout+9*time.Second || deliv > resources.MaxFunctionTimeout || deliv%time.Second != 0 {
			t.Errorf("%+v: delivery timeout %s cannot hold one send", tc, deliv)
		}
		fns, qs := tc.Sized(resources.FunctionsWith(testPlatforms)), resources.QueuesFor(tc)
		byName := map[string]resources.QueueSpec{}
		for _, q := range qs {
			byName[q.Name] = q
		}
		for _, f := range fns {
			if f.Kind == resources.Consumer && byName[f.Consumes.Name].VisibilityTimeout < 6*f.Timeout {
				t.Errorf("%+v: %s visibility %s < 6 x %s", tc, f.Consumes.Name, byName[f.Consumes.Name].VisibilityTimeout, f.Timeout)
			}
		}
	}
	if got := (resources.Timing{}).TurnTimeout(); got != resources.Turn.Timeout {
		t.Errorf("default turn timeout %s, want the declared %s", got, resources.Turn.Timeout)
	}
	for name, env := range map[string]map[string]string{
		"PARLEY_AGENT_TIMEOUT": {"PARLEY_AGENT_TIMEOUT": "15m"},
		"PARLEY_SEND_TIMEOUT":  {"PARLEY_SEND_TIMEOUT": "20m"},
	} {
		if _, err := resources.TimingFromEnv(env); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: %v, want refused naming %s", env, err, name)
		}
	}
	if tm, err := resources.TimingFromEnv(map[string]string{"PARLEY_AGENT_TIMEOUT": "60s"}); err != nil || tm.AgentTimeout != time.Minute || tm.TurnTimeout() != 75*time.Second {
		t.Errorf("60s agent timeout: %+v, %v; want a 75 s turn", tm, err)
	}
}
