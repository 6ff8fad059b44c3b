package whatsapp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// capture is a Graph API that records each call and answers with answer.
type capture struct {
	mu     sync.Mutex
	paths  []string
	auths  []string
	bodies []string
	answer func(w http.ResponseWriter)
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.paths = append(c.paths, r.URL.Path)
	c.auths = append(c.auths, r.Header.Get("Authorization"))
	c.bodies = append(c.bodies, string(b))
	c.mu.Unlock()
	if c.answer != nil {
		c.answer(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"messaging_product":"whatsapp","contacts":[{"input":"15551230001","wa_id":"15551230001"}],"messages":[{"id":"wamid.OUT1"}]}`)
}

func newCapture(t *testing.T, answer func(w http.ResponseWriter)) (*capture, *Client) {
	t.Helper()
	c := &capture{answer: answer}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return c, &Client{Token: testToken, PhoneNumberID: testPhone, BaseURL: srv.URL + "/" + GraphVersion, HTTP: srv.Client()}
}

// TestSendRequest: the exact call a text sends, and its receipt.
func TestSendRequest(t *testing.T) {
	t.Parallel()
	c, client := newCapture(t, nil)
	rc, err := client.Send(t.Context(), message.Outgoing{Thread: chat(ada), Content: message.Text("*see* https://example.com/a_b_c"), ReplyTo: idReply})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if len(rc.MessageIDs) != 1 || rc.MessageIDs[0] != "wamid.OUT1" {
		t.Fatalf("receipt %v", rc.MessageIDs)
	}
	if c.paths[0] != "/"+GraphVersion+"/"+testPhone+"/messages" || c.auths[0] != "Bearer "+testToken {
		t.Fatalf("called %s with %q", c.paths[0], c.auths[0])
	}
	want := `{"messaging_product":"whatsapp","recipient_type":"individual","to":"15551230001",` +
		`"context":{"message_id":"` + idReply + `"},"type":"text","text":{"body":"∗see∗ https://example.com/a_b_c","preview_url":false}}`
	if c.bodies[0] != want {
		t.Fatalf("body\n got %s\nwant %s", c.bodies[0], want)
	}
	if strings.Contains(c.bodies[0], testToken) {
		t.Fatal("the token is in the body")
	}
}

// TestSendTagsTheUnit: the unit's idempotency key goes as
// biz_opaque_callback_data, which Graph echoes in the message's statuses;
// a key over its 512 characters goes untagged rather than refused.
func TestSendTagsTheUnit(t *testing.T) {
	t.Parallel()
	c, client := newCapture(t, nil)
	key := "9c1e0f7a2b3d4c5e6f708192a3b4c5d6#1"
	long := strings.Repeat("k", tagLimit+1)
	sends := []message.Outgoing{
		{Thread: chat(ada), Content: message.Text("hi"), IdempotencyKey: key},
		{Thread: chat(ada), Content: message.Content{Prompt: &message.Prompt{Text: "Which?", Options: choices("q0:", "Lisbon", "Porto")}}, IdempotencyKey: key},
		{Thread: chat(ada), Content: message.Text("hi"), IdempotencyKey: long},
		{Thread: chat(ada), Content: message.Text("hi")},
	}
	for _, m := range sends {
		if _, err := client.Send(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []string{key, key, "", ""} {
		var got WhatsAppSendMessage
		if err := json.Unmarshal([]byte(c.bodies[i]), &got); err != nil || got.BizOpaqueCallbackData != want {
			t.Errorf("send %d: body %s, want the tag %q", i, c.bodies[i], want)
		}
	}
	if strings.Contains(c.bodies[3], "biz_opaque_callback_data") {
		t.Errorf("an untagged send names an empty tag: %s", c.bodies[3])
	}
}

// TestSendWithoutReplyTo: no context at all, rather than an empty one.
func TestSendWithoutReplyTo(t *testing.T) {
	t.Parallel()
	c, client := newCapture(t, nil)
	if _, err := client.Send(t.Context(), message.Outgoing{Thread: chat(ada), Content: message.Text("hi")}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.bodies[0], "context") {
		t.Fatalf("body %s quotes something", c.bodies[0])
	}
}

func TestTrustedMarkupIsSentAsWritten(t *testing.T) {
	t.Parallel()
	c, client := newCapture(t, nil)
	client.TrustMarkup = true
	text := "*bold* _it_ ~no~ ```code```\n> quoted"
	if _, err := client.Send(t.Context(), message.Outgoing{Thread: chat(ada), Content: message.Text(text)}); err != nil {
		t.Fatal(err)
	}
	var got WhatsAppSendMessage
	if err := json.Unmarshal([]byte(c.bodies[0]), &got); err != nil || got.Text.Body != text || got.Text.PreviewURL {
		t.Fatalf("sent %s (%v)", c.bodies[0], err)
	}
}

// TestRefusedWithoutACall: what the sender cannot send never reaches Graph.
func TestRefusedWithoutACall(t *testing.T) {
	t.Parallel()
	c, client := newCapture(t, nil)
	threaded := chat(ada)
	threaded.Thread = "1"
	oddAccount := chat(ada)
	oddAccount.Account = "../me"
	unscoped := &Client{Token: testToken, BaseURL: client.BaseURL, HTTP: client.HTTP}
	cases := map[string]func() error{
		"Thread": func() error {
			_, err := client.Send(t.Context(), message.Outgoing{Thread: threaded, Content: message.Text("x")})
			return err
		},
		"OtherNumber": func() error {
			_, err := client.Send(t.Context(), message.Outgoing{Thread: message.Thread{Platform: message.WhatsApp, Account: otherPhone, Chat: ada}, Content: message.Text("x")})
			return err
		},
		// Without a configured number the thread's is used, and it goes
		// into the path: it must be a number.
		"AccountIsNoNumber": func() error {
			_, err := unscoped.Send(t.Context(), message.Outgoing{Thread: oddAccount, Content: message.Text("x")})
			return err
		},
		"BlankText": func() error {
			_, err := client.Send(t.Context(), message.Outgoing{Thread: chat(ada), Content: message.Text(" \n")})
			return err
		},
		"AskText": func() error {
			_, err := client.Ask(t.Context(), message.Outgoing{Thread: chat(ada), Content: message.Text("x")})
			return err
		},
		"AcknowledgeOtherNumber": func() error {
			return client.Acknowledge(t.Context(), message.Event{Thread: message.Thread{Platform: message.WhatsApp, Account: otherPhone, Chat: ada}}, "ok")
		},
	}
	for name, call := range cases {
		t.Run(name, func(t *testing.T) {
			if class := message.ClassOf(call()); class != message.FailInvalidPayload {
				t.Fatalf("class %s, want invalid_payload", class)
			}
		})
	}
	if len(c.bodies) != 0 {
		t.Fatalf("%d calls reached Graph", len(c.bodies))
	}
}

func TestAnswersWithoutAReceipt(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"NoMessages": `{"messaging_product":"whatsapp","contacts":[],"messages":[]}`,
		"EmptyID":    `{"messages":[{"id":""}]}`,
		"NotJSON":    `<html>captive portal</html>`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, client := newCapture(t, func(w http.ResponseWriter) { _, _ = io.WriteString(w, body) })
			_, err := client.Send(t.Context(), message.Outgoing{Thread: chat(ada), Content: message.Text("x")})
			if message.ClassOf(err) != message.FailUnknown {
				t.Fatalf("%v, want unknown: Graph accepted the call", err)
			}
		})
	}
}

// TestClassify: Graph's envelope decides, then the status; rate limits get
// their wait; reasons name the code and never Meta's details.
func TestClassify(t *testing.T) {
	t.Parallel()
	usage := http.Header{"X-Business-Use-Case-Usage": {`{"102290129340398":[{"type":"whatsapp_business_messaging","call_count":100,"total_cputime":1,"total_time":1,"estimated_time_to_regain_access":7},{"type":"other","estimated_time_to_regain_access":2}]}`}}
	cases := []struct {
		name       string
		status     int
		header     http.Header
		body       string
		class      message.FailureClass
		wait       time.Duration
		reasonHas  string
		reasonLack string
	}{
		{"ReEngagement", 400, nil, `{"error":{"message":"(#131047) Re-engagement message","type":"OAuthException","code":131047,"error_data":{"messaging_product":"whatsapp","details":"Message failed to send because more than 24 hours have passed"},"fbtrace_id":"AbCdEf"}}`,
			message.FailPermission, 0, "template", "more than 24 hours have passed"},
		{"TraceIDKept", 400, nil, `{"error":{"message":"x","type":"OAuthException","code":100,"fbtrace_id":"AbCdEf"}}`,
			message.FailInvalidPayload, 0, "fbtrace_id AbCdEf", ""},
		{"BusinessUsageHeader", 400, usage, `{"error":{"message":"(#80007) Rate limit issues","type":"OAuthException","code":80007}}`,
			message.FailRateLimit, 7 * time.Minute, "graph 80007", ""},
		{"RetryAfterWins", 400, http.Header{"Retry-After": {"9"}, "X-Business-Use-Case-Usage": usage["X-Business-Use-Case-Usage"]}, `{"error":{"message":"x","type":"OAuthException","code":130429}}`,
			message.FailRateLimit, 9 * time.Second, "", ""},
		{"BadUsageHeader", 400, http.Header{"X-Business-Use-Case-Usage": {`{"1":"x"}`}}, `{"error":{"message":"x","type":"OAuthException","code":4}}`,
			message.FailRateLimit, waitApp, "", ""},
		{"HugeUsageEstimate", 400, http.Header{"X-Business-Use-Case-Usage": {`{"1":[{"estimated_time_to_regain_access":99999999999}]}`}}, `{"error":{"message":"x","type":"OAuthException","code":80007}}`,
			message.FailRateLimit, 24 * time.Hour, "", ""},
		{"UnknownCodeTransientFlag", 400, nil, `{"error":{"message":"Please retry","type":"OAuthException","code":139998,"is_transient":true}}`,
			message.FailTransient, 0, "graph 139998", ""},
		{"UnknownCodeTransientFlagOn5xx", 503, nil, `{"error":{"message":"Please retry","type":"OAuthException","code":139998,"is_transient":true}}`,
			message.FailUnknown, 0, "", ""},
		{"UnknownCodeKeepsGraphsWords", 400, nil, `{"error":{"message":"(#139999) Something new","type":"OAuthException","code":139999,"error_subcode":2494010}}`,
			message.FailInvalidPayload, 0, "graph 139999/2494010: (#139999) Something new", ""},
		{"KnownCodeOn5xx", 500, nil, `{"error":{"message":"x","type":"OAuthException","code":131047}}`,
			message.FailPermission, 0, "", ""},
		{"NoSuchNumber", 400, nil, `{"error":{"message":"Unsupported post request.","type":"GraphMethodException","code":100,"error_subcode":33}}`,
			message.FailNotFound, 0, "graph 100/33", ""},
		// Graph's permission range, on whatever status it comes with.
		{"PermissionsError200On400", 400, nil, `{"error":{"message":"(#200) Permissions error","type":"OAuthException","code":200}}`,
			message.FailPermission, 0, "graph 200:", ""},
		{"PermissionsError299On400", 400, nil, `{"error":{"message":"(#299) x","type":"OAuthException","code":299}}`,
			message.FailPermission, 0, "graph 299:", ""},
		{"Code300IsNoPermission", 400, nil, `{"error":{"message":"(#300) x","type":"OAuthException","code":300}}`,
			message.FailInvalidPayload, 0, "graph 300:", ""},
		{"AuthException0", 401, nil, `{"error":{"message":"x","type":"OAuthException","code":0}}`,
			message.FailAuth, 0, "", ""},
		{"EdgePage502", 502, nil, `<html>Bad Gateway</html>`, message.FailUnknown, 0, "HTTP 502", ""},
		{"EdgePage429", 429, nil, `busy`, message.FailRateLimit, waitThroughput, "", ""},
		{"EdgePage401", 401, nil, ``, message.FailAuth, 0, "", ""},
		{"EdgePage403", 403, nil, `{}`, message.FailPermission, 0, "", ""},
		{"ErrorNull", 400, nil, `{"error":null}`, message.FailInvalidPayload, 0, "HTTP 400", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := tc.header
			if h == nil {
				h = http.Header{}
			}
			se := classify(&platform.Response{Status: tc.status, Header: h, Body: []byte(tc.body)})
			if se.Class != tc.class || se.RetryAfter != tc.wait || se.Status != tc.status {
				t.Fatalf("classify = %s %s %d (%s), want %s %s", se.Class, se.RetryAfter, se.Status, se.Reason, tc.class, tc.wait)
			}
			if !strings.Contains(se.Reason, tc.reasonHas) || (tc.reasonLack != "" && strings.Contains(se.Reason, tc.reasonLack)) {
				t.Fatalf("reason %q: want %q in it and not %q", se.Reason, tc.reasonHas, tc.reasonLack)
			}
		})
	}
}

// TestEveryListedCodeIsClassified: the table and the fake agree on the
// codes a fault can name, and every row of the table comes back as its
// class through the fake.
func TestEveryListedCodeIsClassified(t *testing.T) {
	t.Parallel()
	for code, want := range graphCodes {
		t.Run("Code"+strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.rec.Inject(fakeapi.Fault{Error: strconv.Itoa(code)})
			_, err := f.client.Send(t.Context(), message.Outgoing{Thread: chat(ada), Content: message.Text("the secret plan")})
			var se *message.SendError
			if !errors.As(err, &se) || se.Class != want.class || !strings.HasPrefix(se.Reason, "graph "+strconv.Itoa(code)+":") {
				t.Fatalf("code %d: %v, want %s", code, err, want.class)
			}
			if strings.Contains(err.Error(), "the secret plan") || strings.Contains(err.Error(), testToken) {
				t.Fatalf("the error shows the text or the token: %v", err)
			}
			if want.class == message.FailRateLimit && se.RetryAfter != want.wait {
				t.Fatalf("code %d waits %s, want %s", code, se.RetryAfter, want.wait)
			}
		})
	}
}

// fake is a fake Cloud API and a client pointed at it.
type fake struct {
	rec    *fakeapi.Recorder
	client *Client
}

func newFake(t *testing.T) fake {
	t.Helper()
	rec := fakeapi.New(fakeapi.Options{})
	srv := httptest.NewServer(fakewhatsapp.New(fakewhatsapp.Options{Token: testToken, PhoneNumberID: testPhone, Recorder: rec}))
	t.Cleanup(srv.Close)
	return fake{rec: rec, client: &Client{Token: testToken, PhoneNumberID: testPhone, BaseURL: srv.URL + "/" + GraphVersion, HTTP: srv.Client()}}
}

func TestAcknowledge(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	press := message.Event{Platform: message.WhatsApp, Account: testPhone, Kind: message.KindAnswer, Thread: chat(ada),
		Press: &message.Press{Data: "q0:0", MessageID: idQuestion}}
	if err := f.client.Acknowledge(t.Context(), press, ""); err != nil {
		t.Fatalf("Acknowledge without a notice: %v", err)
	}
	if n := f.rec.Calls(); n != 0 {
		t.Fatalf("a press without a notice made %d calls: WhatsApp shows no spinner", n)
	}
	if err := f.client.Acknowledge(t.Context(), press, "Noted: *Lisbon*"); err != nil {
		t.Fatalf("Acknowledge: %v", err)
	}
	got := f.rec.Delivered()
	if len(got) != 1 || got[0].Chat != ada || got[0].Text != "Noted: ∗Lisbon∗" {
		t.Fatalf("delivered %+v", got)
	}
	f.rec.Inject(fakeapi.Fault{Error: fakewhatsapp.CodeReEngagement})
	if err := f.client.Acknowledge(t.Context(), press, "late"); message.ClassOf(err) != message.FailPermission {
		t.Fatalf("a failed notice: %v", err)
	}
}

func TestNewSender(t *testing.T) {
	t.Parallel()
	env := func(kv map[string]string) platform.Env { return func(k string) string { return kv[k] } }
	if _, err := Adapter.NewSender(env(nil), nil); !errors.Is(err, platform.ErrNotConfigured) {
		t.Fatalf("no token: %v", err)
	}
	for name, phone := range map[string]string{"NoPhoneNumberID": "", "NotNumeric": "+1 555"} {
		_, err := Adapter.NewSender(env(map[string]string{SettingAccessToken: testToken, SettingPhoneNumberID: phone}), nil)
		if err == nil || errors.Is(err, platform.ErrNotConfigured) || !strings.Contains(err.Error(), SettingPhoneNumberID) || strings.Contains(err.Error(), testToken) {
			t.Errorf("%s: %v; want a configuration error naming %s", name, err, SettingPhoneNumberID)
		}
	}
	if _, err := Adapter.NewSender(env(map[string]string{SettingAccessToken: testToken, SettingPhoneNumberID: testPhone, SettingTrustAgentMarkup: "maybe"}), nil); err == nil {
		t.Error("a trust setting that is no bool is accepted")
	}
	s, err := Adapter.NewSender(env(map[string]string{SettingAccessToken: testToken, SettingPhoneNumberID: testPhone, SettingTrustAgentMarkup: "true"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := s.(*Client); !c.TrustMarkup || c.PhoneNumberID != testPhone || c.Token != testToken {
		t.Fatalf("sender %+v", c)
	}
}

// TestSendTimeoutIsUnknown: a request that left and got no answer in time
// may have been delivered.
func TestSendTimeoutIsUnknown(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.rec.Inject(fakeapi.Fault{Delay: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	_, err := f.client.Send(ctx, message.Outgoing{Thread: chat(ada), Content: message.Text("slow")})
	if message.ClassOf(err) != message.FailUnknown {
		t.Fatalf("%v, want unknown", err)
	}
	wait, cancelWait := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancelWait()
	if _, err := f.rec.WaitFor(wait, 1); err != nil {
		t.Fatal(err)
	}
}
