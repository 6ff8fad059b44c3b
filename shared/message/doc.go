// Package message is Parley's platform-neutral model: the inbound Event every
// ingress function produces (a message, a proactive event, or a press of a
// control Parley sent), the Thread that orders turns and bubbles, the Content
// a delivery unit carries (text, or a Question with its form), the states a
// unit moves through, and the failure classes a platform adapter reports.
//
// It is a leaf package: it imports no AWS or platform code, so every adapter,
// store and function can depend on it without cycles (like River's rivertype).
//
// # Keys
//
// Three keys derive from an Event and are used everywhere:
//
//   - Event.Key, "evt#<platform>#<account>#<event id>": the dedupe claim. Two
//     deliveries of one platform event have the same key, however late.
//   - Thread.Key, "<platform>:<account>:<chat>[:<thread>]": the ordering key,
//     used as the SQS FIFO MessageGroupId of inbound turns and outbound bubbles.
//   - GroupID and DedupID shape those keys into SQS's 128-character alphabet.
package message
