// Package platform holds what every chat platform adapter shares; each
// platform lives in its own subpackage (telegram, slack, ...) with a receive
// half (an platform.Receiver) and a send half (a Client).
//
// Do is the one way an adapter calls a platform's send API. It tells apart the
// two failures that look alike from the outside but call for opposite
// policies: a request that provably never left (a dial error, DNS, TLS, or a
// context cancelled before the write) is safe to resend, while a request that
// was fully written and got no complete answer may have been delivered, and is
// reported as message.FailUnknown so the delivery function never resends it
// blindly.
//
// Text is inert. An adapter sends the agent's text so that it renders as
// written: no markup parsing, no mentions, no channel pings, no disguised
// links, unless the operator opted in with a documented setting
// (SLACK_TRUST_AGENT_MARKUP, for one). A platform that parses by default is
// told not to (Telegram: no parse_mode; Slack: & < > escaped, link_names and
// mrkdwn off), and the adapter's tests prove it (platformtest's InertText).
package platform
