// Package fakeplatform is a fake Telegram Bot API and Slack Web API: a real
// http.Handler speaking the real wire format, for end-to-end tests and for
// `make run`. Point the adapters' BaseURL (TELEGRAM_API_BASE_URL,
// SLACK_API_BASE_URL) at a server running Handler, and it records every
// message it accepts as a Delivery, optionally printing each as a chat
// bubble with the time since the previous one:
//
//	[+0.00s] telegram chat=42 | on it
//	[+1.20s] telegram chat=42 | your flight moved to 8pm
//
// Faults (rate limits, error codes, slow answers, and a connection dropped
// after the message was recorded) are queued with Inject and hit the next
// matching sends. SignSlack and TelegramHeaders sign inbound webhooks the way
// the platforms do, for tests and the runner's curl.
//
// It serves:
//
//	POST /bot<token>/sendMessage, /bot<token>/sendChatAction, /bot<token>/getMe
//	POST /chat.postMessage (also under /api/)
package fakeplatform
