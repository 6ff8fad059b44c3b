package discord

// The commands Parley answers. Discord delivers an Interactions Endpoint
// URL only interactions, never the channel's messages (those come over
// the Gateway websocket, and their content needs the privileged
// MESSAGE_CONTENT intent), so a person reaches the agent through these.
const (
	// CommandAsk is the chat-input command /ask <text>.
	CommandAsk = "ask"
	// OptionText is /ask's one, required, string option.
	OptionText = "text"
	// CommandAskMessage is the message command (a message's "Apps" menu)
	// that asks the agent about that message: its text is the message's.
	CommandAskMessage = "Ask the agent"
)

// Commands are Parley's application commands, as Discord's bulk overwrite
// (PUT /applications/{application id}/commands) takes them: /ask and "Ask
// the agent", usable in the guilds the app is installed in and in the
// bot's DMs. Registering them is a one-off, `make discord-commands`, not
// part of the runtime.
func Commands() []DiscordApplicationCommand {
	where := []int{DiscordContextGuild, DiscordContextBotDM}
	install := []int{DiscordInstallGuild}
	return []DiscordApplicationCommand{
		{
			Type: DiscordCommandChatInput, Name: CommandAsk, Description: "Ask the agent",
			Options: []DiscordApplicationCommandOption{{
				Type: DiscordOptionString, Name: OptionText, Description: "What to ask", Required: true,
			}},
			Contexts: where, IntegrationTypes: install,
		},
		{Type: DiscordCommandMessage, Name: CommandAskMessage, Contexts: where, IntegrationTypes: install},
	}
}
