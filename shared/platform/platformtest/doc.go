// Package platformtest is the conformance suite every chat adapter runs
// against its own fake (localstack/fakeplatform): one contract, checked the
// same way for every platform, so that the webhook core, turn and delivery
// can treat them all alike. It is imported only by tests.
//
//	func TestConformance(t *testing.T) {
//		platformtest.Run(t, platformtest.Harness{
//			Adapter: telegram.Adapter,
//			Env:     map[string]string{telegram.SettingBotToken: testToken, …},
//			Fake: func(rec *fakeapi.Recorder) http.Handler {
//				return faketelegram.New(faketelegram.Options{Token: testToken, Recorder: rec})
//			},
//			…
//		})
//	}
//
// # What it checks
//
// Receiving, on the receiver NewReceiver builds from Harness.Env:
//
//   - Signatures: the platform's own signature (Harness.Sign) verifies; a
//     missing, empty or wrong one, a tampered body (Features.SignsBody) and
//     a timestamp outside the window (Features.MaxSkew) are refused with
//     ErrUnauthorized or ErrStale (401), without the secret in the error and
//     with nothing left in Request.Verified for Parse. A receiver built
//     without its secret refuses everything.
//   - Handshakes: each is answered verbatim; a signed one (Slack's
//     url_verification, from Parsed.Reply) only when signed; an unsigned
//     one by the receiver's Handshaker, which takes no sample for one.
//   - Samples: every file of events/<platform>/ verifies and parses to its
//     expectation (a file without one fails), into well-formed events (the
//     platform's, with account, id, chat, sender; text for a message, a
//     press for an answer) whose dedupe and thread keys are the same when
//     redelivered later. With Features.Presses a press sample is required.
//   - Garbage: any correctly signed body either is refused with a 4xx
//     sentinel or parses to nothing but ignored updates; nothing panics.
//
// Sending, with the sender NewSender builds, pointed at a fresh fake:
//
//   - Capabilities: Typing, Buttons, Edit and Reconcile are true exactly
//     when the sender is a platform.Typer, Asker (and Acknowledger), Editor,
//     Reconciler; a Typer's indicator reaches the fake; without credentials
//     NewSender says ErrNotConfigured; Harness.Thread is canonical for
//     Targets.
//   - Settings: each has a key with the platform's prefix, a doc, a half
//     and a kind with a valid default; credentials are marked Secret and
//     have no default.
//   - SendReceipt: the fake records each message once, where it was sent,
//     and the receipt holds the ids the platform gave.
//   - Replies, for a platform.Replier: as many bubbles as Replies allows go
//     in one call, each with its own receipt; the token is taken once (a
//     second reply with it sends nothing and says so), and a reply of one
//     bubble more than allowed, or without a fresh token, sends nothing.
//   - Faults: each row of the classification table (Harness.Faults, and
//     the suite's own: a rate limit with its wait, an answer dropped after
//     the message was recorded, an answer later than the deadline, a
//     connection refused before anything was sent, which is transient) comes
//     back as its message.FailureClass after exactly one call, without the
//     text or a secret in the error; a wrong credential is auth, refused by
//     the fake itself.
//   - Limits: a text exactly at Capabilities().TextLimit, counted by
//     Capabilities().Counting, is accepted; one unit over the platform's
//     own limit (Harness.PlatformLimit) is refused by the fake's
//     validation as the platform would; split.Text's parts all go through.
//   - InertText: the agent's text reaches the fake so that it renders as
//     written, as Harness.Inert judges from the call's arguments.
//   - ForeignThread: a thread of another account, or with no chat, is
//     refused as invalid_payload by every ability, without a call.
//   - Content: content the sender cannot send (none it knows; a question
//     when it is no Asker) is refused as invalid_payload without a call.
//
// # Adding a platform
//
//  1. Write the fake: a package under localstack/fakeplatform (say
//     fakediscord) whose handler speaks the real API, validates as it does
//     (token, chat, empty and over-long text) and answers in its error
//     format, recording through fakeapi.Recorder.Handle. Add it to
//     fakeplatform's list; its test fails until every registry platform
//     has one.
//  2. Capture requests the platform sends into events/<platform>/, one file
//     each, exactly as sent (signatures cover the bytes).
//  3. In the adapter's tests, call Run with a Harness: the adapter, test
//     credentials in Env, the fake, a Sign that computes the signature as
//     the platform does (never with the adapter's own code), the headers it
//     sets, the Features that apply, each sample's expected Parsed, the
//     platform's handshakes, its error table (every documented error code
//     and status to its class), and the Inert predicate for how the
//     platform is told not to parse (Discord: allowed_mentions
//     {"parse":[]}).
//  4. Run it and make each failure pass in the adapter, not in the
//     harness: each check is a promise another part of Parley relies on.
//  5. Fuzz the receiver (FuzzReceiverParse, seeds checked in under
//     testdata/fuzz): AddSamples seeds it with the platform's samples,
//     CheckVerify holds Verify to the true signature alone, CheckIgnored
//     holds ignored updates to the reasons the receiver documents; what a
//     well-formed event is stays the adapter's own check.
package platformtest
