package whatsapp

import (
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// FuzzReceiverParse feeds any body and X-Hub-Signature-256 through Verify,
// and the body through Parse: neither may panic, only the true signature is
// accepted, refusals wrap the ingress sentinels, and whatever parses is
// well-formed events (a message with text or one file, an answer with its press's data,
// a status of a known state) and ignored updates with known reasons.
func FuzzReceiverParse(f *testing.F) {
	platformtest.AddSamples(f, eventsDir, "*.json", "sha256=00")
	for _, body := range malformed() {
		f.Add(body, "")
	}
	f.Add(change(messagesValue(testPhone, `{"from":"1","id":"w","type":"interactive","interactive":{"type":"list_reply","list_reply":{"id":"q:1"}},"context":{"id":"p"}}`)), "sha1=00")
	f.Add(change(messagesValue(testPhone, `{"from":"1","id":"w","type":"sticker","sticker":{"id":"00","animated":true},"image":{"id":"x"}}`)), "")
	f.Add(change(messagesValue(testPhone, `{"from":"1","id":"w","type":"audio","audio":{"id":"1e3","voice":"yes"}}`)), "")
	f.Add([]byte(`{"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":{"metadata":{"phone_number_id":"1"},"statuses":[{"id":"w","status":"failed","recipient_id":"1","errors":[{"code":1e3,"title":"x"}]}]}}]}]}`), "SHA256=")

	r := newTestReceiver(f)
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		req := signed(body)
		if err := r.Verify(req); err != nil {
			t.Fatalf("Verify refused a true signature: %v", err)
		}
		truth := req.Header.Get(SignatureHeader)
		req.Header.Set(SignatureHeader, sig)
		hexSig, _ := strings.CutPrefix(sig, "sha256=")
		trueHex, _ := strings.CutPrefix(truth, "sha256=")
		same := strings.HasPrefix(sig, "sha256=") && strings.EqualFold(hexSig, trueHex)
		if _, herr := hex.DecodeString(hexSig); herr != nil {
			same = false
		}
		platformtest.CheckVerify(t, r.Verify(req), sig, same, testAppSecret)
		if _, ok := r.Handshake(req); ok {
			t.Fatal("a POST answered as a handshake")
		}

		req.Oldest = req.Now.Add(-window)
		p, err := r.Parse(req)
		if err != nil {
			if !errors.Is(err, platform.ErrMalformed) {
				t.Fatalf("Parse error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if p.Reply != nil || p.Ack != nil || p.Within != 0 {
			t.Fatalf("Parse = %+v: WhatsApp answers nothing of its own", p)
		}
		if len(p.Events)+len(p.Ignored) == 0 {
			t.Fatalf("Parse = %+v: nothing parsed, nothing ignored", p)
		}
		for _, ev := range p.Events {
			if ev.Platform != message.WhatsApp || ev.Account == "" || ev.Account != testPhone || ev.Thread.Account != ev.Account ||
				ev.Thread.Platform != message.WhatsApp || ev.Thread.Chat == "" || ev.Thread.Thread != "" || ev.ChatType != message.ChatPrivate {
				t.Fatalf("bad event %+v", ev)
			}
			if !ev.Time.IsZero() && ev.Time.Before(req.Oldest) {
				t.Fatalf("an event of %v, past the dedupe window, is taken", ev.Time)
			}
			switch ev.Kind {
			case message.KindMessage:
				if (strings.TrimSpace(ev.Text) == "" && len(ev.Attachments) == 0) || ev.EventID != ev.MessageID || ev.Sender.ID != ev.Thread.Chat || ev.Press != nil || ev.Status != nil {
					t.Fatalf("bad message %+v", ev)
				}
				for _, a := range ev.Attachments {
					if len(ev.Attachments) != 1 || !digits(a.PlatformID) || len(a.PlatformID) > maxMediaID || a.Kind == "" {
						t.Fatalf("bad attachment %+v of %+v", a, ev)
					}
				}
			case message.KindAnswer:
				if ev.Press == nil || ev.Press.Data == "" || ev.Text != "" || ev.EventID != ev.MessageID || ev.Sender.ID != ev.Thread.Chat {
					t.Fatalf("bad answer %+v", ev)
				}
			case message.KindReaction:
				if r := ev.Reaction; r == nil || r.MessageID == "" || r.Removed != (r.Emoji == "") || ev.Text != "" || ev.Sender.ID != ev.Thread.Chat {
					t.Fatalf("bad reaction %+v", ev)
				}
			case message.KindStatus:
				st := ev.Status
				if st == nil || !states[st.State] || ev.EventID != st.MessageID+":"+st.State || ev.Sender != (message.Sender{}) || ev.Text != "" {
					t.Fatalf("bad status %+v %+v", ev, st)
				}
				if st.Class != "" && (st.State != message.StatusFailed || (!st.Class.Permanent() && st.Class != message.FailRateLimit)) {
					t.Fatalf("status %s of class %q", st.State, st.Class)
				}
			default:
				t.Fatalf("kind %q", ev.Kind)
			}
		}
		platformtest.CheckIgnored(t, p.Ignored, platform.IgnoredNoText, platform.IgnoredUnsupported, IgnoredOtherAccount, platform.IgnoredStale)
	})
}

// FuzzHandshake: any query, GET or not, is answered only as Meta's
// verification: the challenge echoed when, and only when, the verify token
// is right.
func FuzzHandshake(f *testing.F) {
	f.Add("GET", "hub.mode=subscribe&hub.verify_token="+testVerifyToken+"&hub.challenge=1158201444")
	f.Add("GET", "hub.mode=subscribe&hub.verify_token=x&hub.challenge=1")
	f.Add("GET", "hub.mode=subscribe&hub.challenge=1&hub.challenge=2&hub.verify_token="+testVerifyToken)
	f.Add("POST", "hub.mode=subscribe&hub.verify_token="+testVerifyToken+"&hub.challenge=1")
	f.Add("GET", "%zz")
	r := newTestReceiver(f)
	f.Fuzz(func(t *testing.T, method, rawQuery string) {
		q, _ := url.ParseQuery(rawQuery)
		reply, ok := r.Handshake(&platform.Request{Method: method, Header: http.Header{}, Query: q})
		if !ok {
			if reply != nil {
				t.Fatalf("not a handshake, and a reply %+v", reply)
			}
			return
		}
		if method != http.MethodGet || q.Get(HubMode) != "subscribe" || reply == nil {
			t.Fatalf("Handshake(%s %q) = %+v", method, rawQuery, reply)
		}
		right := len(q[HubVerifyToken]) == 1 && q.Get(HubVerifyToken) == testVerifyToken
		switch reply.Status {
		case http.StatusOK:
			if !right || string(reply.Body) != q.Get(HubChallenge) || len(q[HubChallenge]) != 1 {
				t.Fatalf("echoed %q for %q", reply.Body, rawQuery)
			}
		case http.StatusForbidden:
			if right {
				t.Fatalf("refused the right token: %q", rawQuery)
			}
		case http.StatusBadRequest:
			if !right {
				t.Fatalf("a wrong token learned that its challenge was missing: %q", rawQuery)
			}
		default:
			t.Fatalf("status %d", reply.Status)
		}
	})
}

// FuzzClassify: any answer Graph (or something before it) could give is a
// SendError of a known class, with a bounded wait and a one-line reason,
// without a panic.
func FuzzClassify(f *testing.F) {
	f.Add(400, `{"error":{"message":"(#131047) Re-engagement message","type":"OAuthException","code":131047,"fbtrace_id":"A"}}`, "")
	f.Add(400, `{"error":{"message":"x","type":"OAuthException","code":80007}}`, `{"1":[{"estimated_time_to_regain_access":5}]}`)
	f.Add(429, `busy`, `[]`)
	f.Add(503, `{"error":{"code":"2","message":null}}`, `{"1":[{"estimated_time_to_regain_access":-1}]}`)
	f.Add(400, `{"error":{"message":"a\nb","type":"x","code":139999,"error_subcode":7,"is_transient":true}}`, `{"1":[{"estimated_time_to_regain_access":9223372036854775807}]}`)
	f.Fuzz(func(t *testing.T, status int, body, usage string) {
		h := http.Header{}
		if usage != "" {
			h.Set("X-Business-Use-Case-Usage", usage)
		}
		se := classify(&platform.Response{Status: status, Header: h, Body: []byte(body)})
		switch se.Class {
		case message.FailTransient, message.FailRateLimit, message.FailAuth, message.FailPermission, message.FailNotFound,
			message.FailInvalidPayload, message.FailConflict, message.FailUnknown:
		default:
			t.Fatalf("class %q", se.Class)
		}
		if se.RetryAfter < 0 || se.RetryAfter > 24*60*60*1e9 || (se.RetryAfter > 0) != (se.Class == message.FailRateLimit) {
			t.Fatalf("class %s waits %s", se.Class, se.RetryAfter)
		}
		if se.Reason == "" || strings.ContainsAny(se.Reason, "\n\r") {
			t.Fatalf("reason %q", se.Reason)
		}
	})
}
