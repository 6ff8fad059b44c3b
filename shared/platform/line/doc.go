// Package line is Parley's LINE adapter: a Receiver for Messaging API
// webhooks (X-Line-Signature check, batched events → message.Event, postback
// presses → message.KindAnswer) and a Client that answers the first bubble
// with the reply token and pushes the rest with a retry key, lays questions
// out as quick replies and shows the loading animation in one-on-one chats.
//
// Messaging API reference: https://developers.line.biz/en/reference/messaging-api/
// Webhooks: https://developers.line.biz/en/docs/messaging-api/receiving-messages/
// Retry keys: https://developers.line.biz/en/docs/messaging-api/retrying-api-request/
package line
