package discord

import (
	"os"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
)

// TestEverySettingIsDocumented: each setting says what it is, and the ADR
// and the samples' README name the ones an operator sets.
func TestEverySettingIsDocumented(t *testing.T) {
	t.Parallel()
	adr, err := os.ReadFile("../../../docs/adr/0007-discord.md")
	if err != nil {
		t.Fatal(err)
	}
	samples := string(readSample(t, "README.md"))
	for _, s := range Adapter.Settings() {
		if strings.TrimSpace(s.Doc) == "" {
			t.Errorf("%s has no doc", s.Key)
		}
		if !strings.Contains(string(adr), "`"+s.Key+"`") {
			t.Errorf("docs/adr/0007-discord.md does not name %s", s.Key)
		}
		if s.Secret && s.Default != "" {
			t.Errorf("%s is a secret with a default", s.Key)
		}
	}
	for _, k := range []string{SettingPublicKey, SettingApplicationID, SettingBotToken} {
		if !strings.Contains(samples, k) {
			t.Errorf("events/discord/README.md does not give the test value of %s", k)
		}
	}
}

func TestTargets(t *testing.T) {
	t.Parallel()
	canon := CanonicalTarget(testApp)
	th := func(acct, chat, thread string) message.Thread {
		return message.Thread{Platform: message.Discord, Account: acct, Chat: chat, Thread: thread}
	}
	for name, c := range map[string]struct {
		in       message.Thread
		chatless bool
		want     message.Thread
		ok       bool
	}{
		"Canonical":      {th(testApp, guildChannel, ""), false, guild, true},
		"LeadingZeros":   {th("00"+testApp, "0"+guildChannel, ""), false, guild, true},
		"Chatless":       {th(testApp, "", ""), true, th(testApp, "", ""), true},
		"OtherApp":       {th("1309000000000000002", guildChannel, ""), false, message.Thread{}, false},
		"AppWithSign":    {th("+"+testApp, guildChannel, ""), false, message.Thread{}, false},
		"ChatNotANumber": {th(testApp, "general", ""), false, message.Thread{}, false},
		"ChatZero":       {th(testApp, "0", ""), false, message.Thread{}, false},
		"AThread":        {th(testApp, guildChannel, "1309000000000000201"), false, message.Thread{}, false},
	} {
		got, err := canon(c.in, c.chatless)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
	if _, err := CanonicalTarget("")(guild, false); err == nil || !strings.Contains(err.Error(), SettingApplicationID) {
		t.Fatalf("without an application id: %v", err)
	}
}

func TestSnowflakeTime(t *testing.T) {
	t.Parallel()
	if got, ok := SnowflakeTime("1444357362155520001"); !ok || !got.Equal(at(0, 30)) {
		t.Fatalf("SnowflakeTime = %v, %v", got, ok)
	}
	for _, bad := range []string{"", "0", "-1", "x", "18446744073709551616"} {
		if _, ok := SnowflakeTime(bad); ok {
			t.Errorf("SnowflakeTime(%q) ok", bad)
		}
	}
}
