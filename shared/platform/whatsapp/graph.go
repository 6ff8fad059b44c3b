package whatsapp

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// graphCode is what one Graph error code means for a send: its class, the
// wait when it is a rate limit (Graph sends no Retry-After), and the reason
// Parley records, which names the code and never Meta's free-text message.
type graphCode struct {
	class  message.FailureClass
	wait   time.Duration
	reason string
}

// Waits for Graph's rate limits, which say no time.
const (
	// waitThroughput: 130429, the number's messages per second (80 by
	// default) are spent; they come back within the second.
	waitThroughput = time.Second
	// waitPair: 131056, the pair rate limit, about one message every 6
	// seconds to one person.
	waitPair = 6 * time.Second
	// waitApp: 4 and 80007, the app's or the business account's call
	// budget, counted over an hour; X-Business-Use-Case-Usage says how long
	// when Graph sends it.
	waitApp = time.Minute
	// waitSpam: 131048, the number may send less after messages were
	// blocked or reported.
	waitSpam = 10 * time.Minute
)

// graphCodes is the classification of the Cloud API's error codes
// (https://developers.facebook.com/documentation/business-messaging/whatsapp/support/error-codes/).
// A code it does not list is classed by its HTTP status (classify).
var graphCodes = map[int]graphCode{
	// The access token is wrong, expired or revoked.
	0:   {message.FailAuth, 0, "AuthException: the access token is not accepted"},
	102: {message.FailAuth, 0, "API Session: the access token is not accepted"},
	104: {message.FailAuth, 0, "an access token is required"},
	190: {message.FailAuth, 0, "access token expired or invalid"},

	// The app, the business or the number may not send this.
	3:      {message.FailPermission, 0, "API method: the app lacks the capability or permission"},
	10:     {message.FailPermission, 0, "permission denied: the token lacks whatsapp_business_messaging for this number"},
	368:    {message.FailPermission, 0, "temporarily blocked for policy violations"},
	130497: {message.FailPermission, 0, "the business may not message users in this country"},
	131005: {message.FailPermission, 0, "access denied"},
	131031: {message.FailPermission, 0, "the business account is locked"},
	131042: {message.FailPermission, 0, "business eligibility: a payment issue"},
	133010: {message.FailPermission, 0, "the phone number is not registered on the Cloud API"},
	// The person cannot get it: more than 24 hours since they last wrote.
	131047: {message.FailPermission, 0, "outside the 24-hour customer service window: WhatsApp delivers no free-form message until the person writes again; only an approved template message can reach them now"},
	// Undeliverable: not on WhatsApp, an old client, or the business is
	// blocked. The person wrote to the number, so it is theirs to refuse.
	131026: {message.FailPermission, 0, "message undeliverable: the recipient cannot receive it (not on WhatsApp, an old client, or the business is blocked)"},
	131050: {message.FailPermission, 0, "the person stopped messages from this business"},

	// The number or the recipient does not exist.
	33: {message.FailNotFound, 0, "the business phone number does not exist"},

	// The request itself is wrong.
	100:    {message.FailInvalidPayload, 0, "invalid parameter"},
	131008: {message.FailInvalidPayload, 0, "required parameter missing"},
	131009: {message.FailInvalidPayload, 0, "parameter value is not valid"},
	131021: {message.FailInvalidPayload, 0, "the recipient is the sender"},
	131051: {message.FailInvalidPayload, 0, "unsupported message type"},
	135000: {message.FailInvalidPayload, 0, "generic user error"},

	// Slow down: refused, so nothing was posted.
	4:      {message.FailRateLimit, waitApp, "the app's call limit is reached"},
	80007:  {message.FailRateLimit, waitApp, "the business account's rate limit is reached"},
	130429: {message.FailRateLimit, waitThroughput, "the number's throughput is spent"},
	131048: {message.FailRateLimit, waitSpam, "spam rate limit: the number may send fewer messages for now"},
	131056: {message.FailRateLimit, waitPair, "pair rate limit: too many messages to this person in a short time"},

	// Meta's side, documented as refusing: nothing was posted.
	131057: {message.FailTransient, 0, "the business account is in maintenance mode"},
	// Meta's side, with no word on whether the message went out.
	1:      {message.FailUnknown, 0, "API unknown error"},
	2:      {message.FailUnknown, 0, "API service: temporarily unavailable"},
	131000: {message.FailUnknown, 0, "something went wrong"},
	131016: {message.FailUnknown, 0, "a service is temporarily unavailable"},
}

// subcodeNotFound is code 100's error_subcode for an object id that does
// not exist or the token cannot see: the phone number id in the path.
const subcodeNotFound = 33

// classify turns a non-2xx answer into a SendError: by the Graph error's
// code where its body is Graph's envelope, else by the HTTP status alone
// (an edge's page, a proxy). A Retry-After header, when there is one, is the
// wait of a rate limit; else X-Business-Use-Case-Usage's estimate; else the
// code's own wait.
func classify(resp *platform.Response) *message.SendError {
	se := platform.StatusFailure(resp.Status, resp.Header)
	var env WhatsAppErrorResponse
	if json.Unmarshal(resp.Body, &env) != nil || env.Error == nil || (env.Error.Code == 0 && env.Error.Type == "") {
		// Not Graph's answer: the status is all there is. 5xx is unknown
		// (an edge may answer after the message was posted), 404 a wrong
		// base URL.
		if se.Class == message.FailRateLimit && se.RetryAfter == 0 {
			se.RetryAfter = waitThroughput
		}
		return se
	}
	e := env.Error
	code := strconv.Itoa(e.Code)
	if e.ErrorSubcode != 0 {
		code += "/" + strconv.Itoa(e.ErrorSubcode)
	}
	known, ok := graphCodes[e.Code]
	switch {
	case e.Code == 100 && e.ErrorSubcode == subcodeNotFound:
		known, ok = graphCode{message.FailNotFound, 0, "the phone number id does not exist or the token cannot reach it"}, true
	case !ok && e.Code >= 200 && e.Code <= 299:
		// Graph's permission errors, one code per missing permission,
		// whatever HTTP status they come with.
		known, ok = graphCode{message.FailPermission, 0, "permission error: the token lacks a permission for this call"}, true
	case !ok && e.IsTransient && resp.Status < 500:
		// Graph marks it as worth retrying, and refused it.
		known, ok = graphCode{message.FailTransient, 0, "transient error"}, true
	}
	if ok {
		se.Class = known.class
		se.Reason = "graph " + code + ": " + known.reason
	} else {
		// A code Parley does not know: the status says how bad; Graph's own
		// words name it for the operator.
		se.Reason = "graph " + code + ": " + platform.Reason(e.Message)
	}
	if e.FBTraceID != "" {
		se.Reason += " (fbtrace_id " + platform.Reason(e.FBTraceID) + ")"
	}
	se.RetryAfter = 0
	if se.Class == message.FailRateLimit {
		se.RetryAfter = platform.RetryAfter(resp.Header, time.Now())
		if se.RetryAfter == 0 {
			se.RetryAfter = regainAccess(resp.Header)
		}
		if se.RetryAfter == 0 {
			se.RetryAfter = max(known.wait, waitThroughput)
		}
	}
	return se
}

// regainAccess reads X-Business-Use-Case-Usage, Graph's report of a
// business's rate-limit use: {"<business id>":[{"type":…,
// "estimated_time_to_regain_access":<minutes>}, …]}. It returns the longest
// estimate, 0 when there is none.
func regainAccess(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("X-Business-Use-Case-Usage"))
	if v == "" {
		return 0
	}
	var usage map[string][]struct {
		EstimatedTimeToRegainAccess int64 `json:"estimated_time_to_regain_access"`
	}
	if json.Unmarshal([]byte(v), &usage) != nil {
		return 0
	}
	var minutes int64
	for _, uses := range usage {
		for _, u := range uses {
			minutes = max(minutes, u.EstimatedTimeToRegainAccess)
		}
	}
	if minutes > 24*60 {
		minutes = 24 * 60
	}
	return platform.Seconds(minutes * 60)
}

// statusClass is what a failed status's error code means for its unit: the
// class of the code where it names why WhatsApp refused the message
// (permission, not_found, invalid_payload, auth, rate_limit), else empty,
// which the turn function reads as permission: WhatsApp did not deliver it.
// The codes that mean "unknown" or "try again" for a send are no such
// answer here: the status says the message failed.
func statusClass(code int) message.FailureClass {
	known, ok := graphCodes[code]
	if !ok && code >= 200 && code <= 299 {
		return message.FailPermission
	}
	if !ok || (!known.class.Permanent() && known.class != message.FailRateLimit) {
		return ""
	}
	return known.class
}
