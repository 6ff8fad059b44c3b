package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/shared/platform/discord"
)

// TestDiscordCommands registers the commands with the fake Discord API,
// which validates them as Discord does, and refuses what it must.
func TestDiscordCommands(t *testing.T) {
	t.Parallel()
	fake := fakediscord.New(fakediscord.Options{Token: fakediscord.BotToken, ApplicationID: fakediscord.ApplicationID})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	env := map[string]string{
		discord.SettingApplicationID: fakediscord.ApplicationID,
		discord.SettingBotToken:      fakediscord.BotToken,
		discord.SettingAPIBaseURL:    srv.URL + "/",
	}
	getenv := func(over map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := over[k]; ok {
				return v
			}
			return env[k]
		}
	}
	var out bytes.Buffer
	if err := discordCommands(t.Context(), &out, getenv(nil), nil); err != nil {
		t.Fatalf("discordCommands: %v", err)
	}
	if !strings.Contains(out.String(), "/ask  id ") || !strings.Contains(out.String(), `"Ask the agent"`) {
		t.Fatalf("printed:\n%s", out.String())
	}
	var got []discord.DiscordApplicationCommand
	for _, raw := range fake.Commands() {
		var c discord.DiscordApplicationCommand
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	if len(got) != 2 || got[0].Name != discord.CommandAsk || got[0].Options[0].Name != discord.OptionText || got[1].Type != discord.DiscordCommandMessage {
		t.Fatalf("registered %+v", got)
	}
	// Registering again replaces them: still two.
	if err := discordCommands(t.Context(), &out, getenv(nil), nil); err != nil || len(fake.Commands()) != 2 {
		t.Fatalf("again: %v, %d commands", err, len(fake.Commands()))
	}

	for name, c := range map[string]struct {
		over map[string]string
		args []string
		want string
	}{
		"WrongToken":     {map[string]string{discord.SettingBotToken: "wrong"}, nil, "HTTP 401"},
		"OtherApp":       {map[string]string{discord.SettingApplicationID: "1309000000000000002"}, nil, "HTTP 403, code 50001"},
		"NoToken":        {map[string]string{discord.SettingBotToken: ""}, nil, discord.SettingBotToken},
		"NoApp":          {map[string]string{discord.SettingApplicationID: ""}, nil, discord.SettingApplicationID},
		"AppNotANumber":  {map[string]string{discord.SettingApplicationID: "parley"}, nil, "a number"},
		"ExtraArguments": {nil, []string{"now"}, "usage"},
		"Unreachable":    {map[string]string{discord.SettingAPIBaseURL: "http://127.0.0.1:1"}, nil, "register the commands"},
	} {
		err := discordCommands(t.Context(), &out, getenv(c.over), c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), fakediscord.BotToken) {
			t.Errorf("%s: the error shows the token: %v", name, err)
		}
	}
}
