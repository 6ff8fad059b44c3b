// Package fakeplatform is every chat platform's fake API behind one
// handler, for end-to-end tests and for `make run`. Point the adapters'
// base URLs at it (BaseURLs gives every platform's setting) and it records
// every message it accepts as a Delivery, optionally printing each as a chat
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
// # Layout
//
// One package per fake, and one for what they share:
//
//	fakeapi       the Recorder (deliveries, chat actions, bubbles, WaitFor),
//	              the fault queue, message-id issuers, and Handle, the one
//	              order in which a fake applies a fault, validates, records
//	              and answers a send
//	faketelegram  the Bot API: its routes, validation and error format
//	fakeslack     the Web API: likewise
//	fakeplatform  this composite: one Recorder shared by every fake, each
//	              fake under /<platform>/, derived from the registry
//
// A fake is its own package, and imports neither its adapter nor the
// registry, so that the adapter's own tests can run the conformance suite
// (platformtest) against it without an import cycle, and so that it
// checks the adapter against the wire format as written down a second
// time, not against the adapter's own types. The composite imports the
// registry, so that a platform added there without a fake fails
// TestEveryPlatformHasAFake.
//
// Handler serves:
//
//	POST /telegram/bot<token>/sendMessage, /sendChatAction, /getMe
//	POST /slack/chat.postMessage (also /slack/api/chat.postMessage)
//	     /discord/…, /line/…, /whatsapp/…   (see each fake's package doc)
//	     /teams/v3/conversations/…          the Bot Connector (faketeams), with
//	     /teams/login/…, /teams/openid/…    its Entra token endpoint and issuer
//	     /googlechat/v1/spaces/…            the Chat API (fakegooglechat), with
//	     /googlechat/token, /googlechat/chatkeys/…, /googlechat/googlekeys/…
//
// Teams and Google Chat sign what they send with keys they publish: their
// fakes are also the issuers (localstack/fakeplatform/fakeissuer), and
// BaseURLs points the adapters' token endpoint and key settings at them too.
package fakeplatform
