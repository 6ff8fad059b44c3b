// Package telegram is Parley's Telegram adapter: a Receiver for Bot API
// webhooks (secret-token check, Update → message.Event, inline keyboard
// presses → message.KindAnswer) and a Client that sends plain-text replies
// with sendMessage and shows "typing…" with sendChatAction.
//
// Bot API reference: https://core.telegram.org/bots/api
package telegram
