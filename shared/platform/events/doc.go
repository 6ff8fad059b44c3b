// Package events is Parley's generic signed webhook for proactive events: an
// alert, a cron tick, a GitHub event. Its Receiver turns one request into one
// message.Event of kind proactive, aimed at a conversation on a chat platform
// Parley serves, which the ingress pipeline dedupes, triages and enqueues
// like any other event.
//
// Two signature schemes are accepted:
//
//   - Standard Webhooks (https://www.standardwebhooks.com): webhook-id,
//     webhook-timestamp (5-minute window) and webhook-signature, HMAC-SHA256,
//     several secrets for rotation. The body is a Payload naming the target
//     conversation and the content for the agent; webhook-id is the event id.
//   - GitHub (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries):
//     X-Hub-Signature-256 over the body, X-GitHub-Delivery as the event id,
//     X-GitHub-Event as its type. The target comes from the URL's ?target=
//     (a thread key) or the configured default.
//
// SignRequest and SignGitHub compute the headers a sender sends, for tests and
// for posting the samples in events/events/.
package events
