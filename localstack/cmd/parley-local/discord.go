package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/platform/discord"
)

// discordCommands registers Parley's Discord commands, /ask and "Ask the
// agent" (discord.Commands), for the application DISCORD_APPLICATION_ID
// with DISCORD_BOT_TOKEN: a bulk overwrite of its global commands, PUT
// {DISCORD_API_BASE_URL}/applications/{id}/commands, which replaces what was
// registered before. Run it once per application, and again when Parley's
// commands change (make discord-commands); the runtime never registers
// anything. Global commands reach every guild the app is installed in
// within minutes.
func discordCommands(ctx context.Context, out io.Writer, getenv config.Getenv, args []string) error {
	fs := flags("discord-commands", out)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New("usage: parley-local discord-commands (settings from DISCORD_APPLICATION_ID, DISCORD_BOT_TOKEN, DISCORD_API_BASE_URL)")
	}
	app, token := getenv(discord.SettingApplicationID), getenv(discord.SettingBotToken)
	if app == "" || token == "" {
		return fmt.Errorf("set %s (General Information) and %s (Bot) of your Discord application", discord.SettingApplicationID, discord.SettingBotToken)
	}
	if _, err := strconv.ParseUint(app, 10, 64); err != nil {
		return fmt.Errorf("%s is the application's id, a number: got %q", discord.SettingApplicationID, app)
	}
	base := strings.TrimRight(cmp.Or(getenv(discord.SettingAPIBaseURL), discord.DefaultBaseURL), "/")
	body, err := json.Marshal(discord.Commands())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+"/applications/"+app+"/commands", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", discord.SettingAPIBaseURL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bot "+token)
	req.Header.Set("User-Agent", "DiscordBot (https://github.com/parleyhq/parley, 1)")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("register the commands at %s: %w", base, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		var e discord.DiscordError
		_ = json.Unmarshal(answer, &e)
		msg := cmp.Or(e.Message, http.StatusText(resp.StatusCode))
		return fmt.Errorf("discord refused the commands: HTTP %d, code %d: %s", resp.StatusCode, e.Code, msg)
	}
	var got []discord.DiscordApplicationCommand
	if err := json.Unmarshal(answer, &got); err != nil {
		return fmt.Errorf("discord's answer is not a list of commands: %w", err)
	}
	fmt.Fprintf(out, "Registered %d Discord commands for application %s:\n", len(got), app)
	for _, c := range got {
		name := "/" + c.Name
		if c.Type == discord.DiscordCommandMessage {
			name = strconv.Quote(c.Name) + " (a message's Apps menu)"
		}
		fmt.Fprintf(out, "  %s  id %s\n", name, c.ID)
	}
	return nil
}
