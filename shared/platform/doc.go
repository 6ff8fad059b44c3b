// Package platform holds what every chat platform adapter shares; each
// platform lives in its own subpackage (telegram, slack, ...) with a receive
// half (an ingress.Receiver) and a send half (a Client).
//
// Do is the one way an adapter calls a platform's send API. It tells apart the
// two failures that look alike from the outside but call for opposite
// policies: a request that provably never left (a dial error, DNS, TLS, or a
// context cancelled before the write) is safe to resend, while a request that
// was fully written and got no complete answer may have been delivered, and is
// reported as message.FailUnknown so the delivery function never resends it
// blindly.
package platform
