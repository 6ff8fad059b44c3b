// Package googlechat is Parley's Google Chat adapter, for a Chat app with an
// HTTP endpoint: a Receiver that verifies the bearer token Google signs
// (the Chat service account's JWT for the project number, or a Google ID
// token for the endpoint URL) against Google's published keys and turns
// MESSAGE and CARD_CLICKED events into events; and a Client that posts and
// edits through the Chat API (spaces.messages.create with a requestId, and
// patch) with a service account's token from Google's OAuth 2.0 library for
// service accounts (golang.org/x/oauth2/google).
//
// The Client is no platform.MediaSender: an app's own credentials cannot
// attach a file (media.upload takes user authentication only), so delivery
// sends every media bubble as its caption and link in text.
//
// Verifying requests: https://developers.google.com/workspace/chat/verify-requests-from-chat
// Events: https://developers.google.com/workspace/chat/api/reference/rest/v1/Event
// Messages: https://developers.google.com/workspace/chat/api/reference/rest/v1/spaces.messages
package googlechat
