// Package ingress is the webhook core every ingress function shares: read the
// body within a size limit, verify it on the raw bytes, answer handshakes,
// normalize to message.Events, drop bots, claim each event's dedupe key,
// triage proactive events, enqueue on inbound.fifo, and only then acknowledge.
//
// A platform adapter provides a Receiver (verify + parse); everything else is
// written once here, as an http.Handler, and adapted to Lambda Function URLs
// in one place so the local runner serves the very same code.
package ingress
