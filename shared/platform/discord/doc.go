// Package discord is Parley's Discord adapter for an Interactions Endpoint
// URL: a Receiver that verifies Discord's Ed25519 signature, answers PING,
// and turns the /ask command, the "Ask the agent" message command and
// presses of Parley's buttons and selects into events; and a Client that
// answers them through the interaction's token (editing the deferred
// response, then follow-ups) and, without one, with channel messages.
//
// Interactions: https://discord.com/developers/docs/interactions/receiving-and-responding
// Messages: https://discord.com/developers/docs/resources/message
// Components: https://discord.com/developers/docs/components/reference
package discord
