package platformtest

import (
	"net/http"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Harness is what Run needs to know about one adapter: how to build it,
// its fake, how its platform signs requests, the expectations for its
// samples, and its error-classification table. What the suite can learn
// from the adapter itself (its settings, capabilities, receiver and sender)
// it reads from Adapter, so that the suite checks the adapter, not a copy.
type Harness struct {
	// Adapter is the adapter under test. Its receiver and sender are built
	// with its own NewReceiver and NewSender from Env, as the functions
	// build them.
	Adapter platform.Adapter
	// Env holds the adapter's settings for the suite: credentials its fake
	// accepts, the receive secret the samples are signed with, the account
	// that scopes its sender. Every key must be one of Adapter.Settings().
	Env map[string]string
	// BaseURLSetting names the setting that points the sender at the API's
	// root (TELEGRAM_API_BASE_URL). The suite sets it to a fresh fake's URL.
	BaseURLSetting string
	// Fake returns the platform's fake API recording into rec, accepting
	// Env's credentials (faketelegram.New). The suite serves a fresh one
	// for every check with httptest.
	Fake func(rec *fakeapi.Recorder) http.Handler
	// FakeURLSettings are further URL settings of the send half the suite
	// points at the same fake, with the path given: an OAuth token
	// endpoint the sender gets its credential from (TEAMS_LOGIN_URL:
	// "/login"). The fake serves them too.
	FakeURLSettings map[string]string

	// Sign returns the headers the platform sends with body at at,
	// authenticated with secret, computed as the platform computes them.
	Sign func(secret string, body []byte, at time.Time) http.Header
	// SecretSetting names the receive secret Sign is given (Env has its
	// value): a secret setting of the receive half, unless
	// Features.PublicCredential.
	SecretSetting string
	// AuthHeaders are the headers that authenticate a request: without any
	// one of them it is refused (ErrUnauthorized).
	AuthHeaders []string
	// Features say what the platform's webhooks do, and with it which
	// checks apply.
	Features Features

	// Samples are the platform's captured requests and what each parses to.
	Samples Samples
	// Handshakes are the requests the platform checks the endpoint with.
	// A receiver that is a platform.Handshaker needs at least one that is
	// not Signed.
	Handshakes []Handshake
	// Malformed are bodies, signed, that Parse must refuse with
	// platform.ErrMalformed, beyond the garbage the suite tries on every
	// adapter.
	Malformed map[string][]byte

	// Thread is a conversation of Env's account, in its canonical form,
	// that the sender posts into.
	Thread message.Thread
	// Faults is the error-classification table: each fault is injected into
	// a fresh fake and the sender's error must have the class. The suite
	// adds its own rows for what every platform must agree on (a dropped
	// answer after commit, a rate limit with its wait, an answer later than
	// the deadline).
	Faults []FaultCase
	// Inert reports whether text, sent as the agent's, reached the platform
	// so that it renders as written: d is what the fake recorded (its Args
	// are the call's arguments). nil when it is inert; an error says what
	// would render otherwise.
	Inert func(text string, d fakeapi.Delivery) error
	// WrongCredential, when set, returns a wrong value of the send
	// credential key whose right value is v, for the check that the fake
	// refuses it: a service account key that is another account's (a
	// JSON key with "x" appended would not even load). Defaults to v+"x".
	WrongCredential func(key, v string) string
	// PlatformLimit is the most one message may hold on the platform
	// itself, counted by Capabilities().Counting: one unit more is refused
	// by the fake, as by the platform. Defaults to Capabilities().TextLimit;
	// Slack keeps to 4,000 characters where it refuses only past 40,000.
	PlatformLimit int
	// IssueReplyToken returns a fresh reply token for chat that api (a
	// fake Harness.Fake made) honours, as the platform issues one with an
	// event. Required when the sender is a platform.Replier.
	IssueReplyToken func(api http.Handler, chat string) string
}

// Features are the facts about a platform's webhooks that switch checks on
// or off.
type Features struct {
	// SignsBody: the signature covers the body, so a body changed after
	// signing is refused. Telegram's secret token does not sign the body.
	SignsBody bool
	// MaxSkew, when set, is the replay window of the signed timestamp: a
	// request signed longer ago (or ahead) than that is refused ErrStale.
	// Zero for a platform that signs no timestamp.
	MaxSkew time.Duration
	// Presses: the platform delivers presses of the controls Parley sends
	// (message.KindAnswer), and a sample of one is required.
	Presses bool
	// PublicCredential: what verifies the platform's requests is public
	// (a token its identity service signs with published keys, checked
	// for the app's id as audience; Discord's public key), so
	// SecretSetting names a setting that is no secret. Sign is given its
	// value: a token for another audience is the wrong signature.
	PublicCredential bool
}

// Samples are the platform's captured requests, events/<platform>/.
type Samples struct {
	// Dir is the folder, relative to the test (../../../events/slack).
	// Every regular file in it is a sample.
	Dir string
	// At is when the samples were sent: each is signed at At and received
	// with Request.Now = At.
	At time.Time
	// Want is each file's expected Parse, by file name. A file without an
	// expectation fails, as does an expectation without a file.
	Want map[string]platform.Parsed
}

// Handshake is a request with which the platform checks the endpoint, and
// the reply it expects verbatim.
type Handshake struct {
	Name string
	// Method, Query and Body are the request as it arrives.
	Method string
	Query  map[string][]string
	Body   []byte
	// Signed: the platform signs it, and it is answered from Parsed.Reply
	// after Verify (Slack's url_verification), so an unsigned copy is
	// refused. Otherwise the receiver's Handshaker answers it before any
	// verification (WhatsApp's GET hub.challenge).
	Signed bool
	Want   platform.Reply
}

// FaultCase is one row of the error-classification table.
type FaultCase struct {
	Name string
	// Fault is injected for the next send (its Platform is set by the
	// suite).
	Fault fakeapi.Fault
	// Class and RetryAfter are what the sender's *message.SendError must
	// say.
	Class      message.FailureClass
	RetryAfter time.Duration
}
