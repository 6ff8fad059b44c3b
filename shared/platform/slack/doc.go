// Package slack is Parley's Slack adapter: a Receiver for Events API requests
// (v0 HMAC signature check, url_verification, message and app_mention events
// → message.Event) and a Client that posts replies with chat.postMessage.
//
// Events API: https://docs.slack.dev/apis/events-api/
// Verifying requests: https://docs.slack.dev/authentication/verifying-requests-from-slack
// chat.postMessage: https://docs.slack.dev/reference/methods/chat.postmessage
package slack
