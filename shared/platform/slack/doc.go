// Package slack is Parley's Slack adapter: a Receiver for Events API
// requests and interactivity requests on the same URL (v0 HMAC signature
// check, url_verification, message and app_mention events → message.Event,
// block_actions presses → message.KindAnswer) and a Client that posts
// replies with chat.postMessage.
//
// Events API: https://docs.slack.dev/apis/events-api/
// Interactivity: https://docs.slack.dev/interactivity/handling-user-interaction
// Verifying requests: https://docs.slack.dev/authentication/verifying-requests-from-slack
// chat.postMessage: https://docs.slack.dev/reference/methods/chat.postmessage
package slack
