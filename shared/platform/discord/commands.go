package discord

// The commands Parley answers. Discord delivers an Interactions Endpoint
// URL only interactions, never the channel's messages (those come over
// the Gateway websocket, and their content needs the privileged
// MESSAGE_CONTENT intent), so a person reaches the agent through these.
const (
	// CommandAsk is the chat-input command /ask [text] [file].
	CommandAsk = "ask"
	// OptionText is /ask's string option: what to ask. Optional, so that
	// a file alone can be asked about; /ask with neither is refused with a
	// note.
	OptionText = "text"
	// OptionFile is /ask's file option: a photo, document or recording
	// the agent gets as an attachment.
	OptionFile = "file"
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
			Options: []DiscordApplicationCommandOption{
				{Type: DiscordOptionString, Name: OptionText, Description: "What to ask"},
				{Type: DiscordOptionAttachment, Name: OptionFile, Description: "A photo, document or recording to ask about"},
			},
			Contexts: where, IntegrationTypes: install,
		},
		{Type: DiscordCommandMessage, Name: CommandAskMessage, Contexts: where, IntegrationTypes: install},
	}
}
