package triage

import (
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`{
		"time_zone": "Europe/Berlin", "quiet_hours": "22:00-07:00", "cooldown": "10m", "daily_cap": 20,
		"conversations": {
			"telegram:7000000001:42": {"quiet_hours": "", "daily_cap": 0},
			"telegram:7000000001:-1001000000002": {"quiet_mode": "defer"},
			"telegram:7000000001:-1001000000002:77": {"cooldown": "0s", "time_zone": "America/New_York"}
		}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WithDefaults().Validate(); err != nil {
		t.Fatal(err)
	}
	th := func(chat, thread string) message.Thread {
		return message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: chat, Thread: thread}
	}
	for _, tc := range []struct {
		thread message.Thread
		want   Policy
	}{
		{th("43", ""), Policy{TimeZone: "Europe/Berlin", QuietHours: "22:00-07:00", QuietMode: QuietSuppress, Cooldown: 10 * time.Minute, DailyCap: 20}},
		// Zero values in an override turn a rule off.
		{th("42", ""), Policy{TimeZone: "Europe/Berlin", QuietHours: "", QuietMode: QuietSuppress, Cooldown: 10 * time.Minute, DailyCap: 0}},
		// A chat key covers the chat's threads...
		{th("-1001000000002", "5"), Policy{TimeZone: "Europe/Berlin", QuietHours: "22:00-07:00", QuietMode: QuietDefer, Cooldown: 10 * time.Minute, DailyCap: 20}},
		// ...and a thread key wins over it, without inheriting from it.
		{th("-1001000000002", "77"), Policy{TimeZone: "America/New_York", QuietHours: "22:00-07:00", QuietMode: QuietSuppress, Cooldown: 0, DailyCap: 20}},
	} {
		if got := c.Policy(tc.thread); got != tc.want {
			t.Errorf("Policy(%s) = %+v, want %+v", tc.thread.Key(), got, tc.want)
		}
	}

	if c, err := ParseConfig(nil); err != nil || c.Policy(th("1", "")) != (Policy{TimeZone: "UTC", QuietMode: QuietSuppress}) {
		t.Fatalf("empty config = %+v, %v; want UTC, suppress, no rules", c, err)
	}
}

func TestParseConfigRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, in := range []string{
		`{"quiet_hour": "22:00-07:00"}`,
		`{"cooldown": "10 minutes"}`,
		`{"cooldown": 600}`,
		`{"conversations": {"telegram:1:2": {"cap": 3}}}`,
		`{} {}`,
		`[]`,
	} {
		if _, err := ParseConfig([]byte(in)); err == nil {
			t.Errorf("ParseConfig(%s) accepted it", in)
		}
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	bad := "Mars/Olympus"
	c := Config{
		Default: Policy{TimeZone: "Europe/Nowhere", QuietHours: "25:00-07:00", QuietMode: "snooze", Cooldown: -time.Second, DailyCap: -1},
		Conversations: map[string]Override{
			"not-a-key":     {},
			"slack:T1:C1":   {TimeZone: &bad},
			"telegram:1:2:": {},
		},
	}
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate accepted a broken config")
	}
	for _, want := range []string{"Europe/Nowhere", "HH:MM-HH:MM", "snooze", "cooldown", "daily cap", `"not-a-key"`, "Mars/Olympus", `"telegram:1:2:"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error does not mention %s:\n%v", want, err)
		}
	}
	if err := (Config{Default: Policy{TimeZone: "Local"}}).Validate(); err == nil {
		t.Error(`Validate accepted the time zone "Local"`)
	}
}

// FuzzParseConfig: any PARLEY_TRIAGE either parses and validates into a
// config whose every policy compiles, or is refused with an error; never a
// panic.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"time_zone":"Europe/Berlin","quiet_hours":"22:00-07:00","cooldown":"60s","daily_cap":3}`,
		`{"conversations":{"telegram:1:2":{"quiet_mode":"defer"},"slack:T:C:1.2":{"daily_cap":0}}}`,
		`{"cooldown":"-1s"}`, `{"time_zone":"Local"}`, `{"conversations":{"":{}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		c = c.WithDefaults()
		if c.Validate() != nil {
			return
		}
		for key := range c.Conversations {
			parts := strings.Split(key, ":")
			th := message.Thread{Platform: message.Platform(parts[0]), Account: parts[1], Chat: parts[2]}
			if len(parts) == 4 {
				th.Thread = parts[3]
			}
			if _, err := compile(c.Policy(th)); err != nil {
				t.Fatalf("validated config, but %s's policy does not compile: %v", key, err)
			}
		}
	})
}
