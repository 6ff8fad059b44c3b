package fakewhatsapp_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	token = "EAAParleyFakeWhatsAppAccessTokenForTests0123456789"
	phone = "106540352242922"
	ada   = "15551230001"
)

func setup(t *testing.T) (*fakeapi.Recorder, *httptest.Server) {
	t.Helper()
	rec := fakeapi.New(fakeapi.Options{Now: func() time.Time { return time.Unix(1795953600, 0) }})
	srv := httptest.NewServer(fakewhatsapp.New(fakewhatsapp.Options{Token: token, PhoneNumberID: phone, Recorder: rec}))
	t.Cleanup(srv.Close)
	return rec, srv
}

type graphError struct {
	Error struct {
		Message      string `json:"message"`
		Type         string `json:"type"`
		Code         int    `json:"code"`
		ErrorSubcode int    `json:"error_subcode"`
		ErrorData    struct {
			Details string `json:"details"`
		} `json:"error_data"`
		FBTraceID string `json:"fbtrace_id"`
	} `json:"error"`
	Messages []struct {
		ID string `json:"id"`
	} `json:"messages"`
}

func call(t *testing.T, srv *httptest.Server, path, auth, body string) (*http.Response, graphError) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var g graphError
	_ = json.Unmarshal(b, &g)
	return resp, g
}

func text(body string) string {
	b, _ := json.Marshal(body)
	return `{"messaging_product":"whatsapp","recipient_type":"individual","to":"` + ada + `","type":"text","text":{"body":` + string(b) + `,"preview_url":false}}`
}

func buttons(titles ...string) string {
	var bs []string
	for i, tt := range titles {
		bs = append(bs, `{"type":"reply","reply":{"id":"q:`+string(rune('0'+i))+`","title":"`+tt+`"}}`)
	}
	return `{"messaging_product":"whatsapp","to":"` + ada + `","type":"interactive","interactive":{"type":"button","body":{"text":"Which?"},"action":{"buttons":[` + strings.Join(bs, ",") + `]}}}`
}

func list(button string, rows ...string) string {
	return `{"messaging_product":"whatsapp","to":"` + ada + `","type":"interactive","interactive":{"type":"list","body":{"text":"Which?"},"action":{"button":"` + button + `","sections":[{"rows":[` + strings.Join(rows, ",") + `]}]}}}`
}

func row(id, title, desc string) string {
	return `{"id":"` + id + `","title":"` + title + `","description":"` + desc + `"}`
}

// TestValidation: the Cloud API's refusals, in Graph's envelope, with
// nothing recorded.
func TestValidation(t *testing.T) {
	t.Parallel()
	bearer := "Bearer " + token
	path := "/" + phone + "/messages"
	ten := make([]string, 11)
	for i := range ten {
		ten[i] = row("r"+string(rune('a'+i)), "Row", "")
	}
	cases := []struct {
		name, path, auth, body string
		status, code, subcode  int
	}{
		{"NoToken", path, "", text("x"), 400, 104, 0},
		{"WrongToken", path, "Bearer EAAwrong", text("x"), 401, 190, 0},
		{"NotJSON", path, bearer, `{"to":`, 400, 100, 0},
		{"UnknownPhoneNumberID", "/106540352242999/messages", bearer, text("x"), 400, 100, 33},
		{"PhoneNumberIDNotNumeric", "/me/messages", bearer, text("x"), 400, 100, 33},
		{"NoMessagingProduct", path, bearer, `{"to":"` + ada + `","type":"text","text":{"body":"x"}}`, 400, 100, 0},
		{"NoRecipient", path, bearer, `{"messaging_product":"whatsapp","type":"text","text":{"body":"x"}}`, 400, 100, 0},
		{"EmptyText", path, bearer, text(" "), 400, 100, 0},
		{"TooLong", path, bearer, text(strings.Repeat("é", fakewhatsapp.TextLimit+1)), 400, 100, 0},
		{"TooLongInUTF16", path, bearer, text(strings.Repeat("😀", fakewhatsapp.TextLimit/2) + "a"), 400, 100, 0},
		{"EmptyContext", path, bearer, `{"messaging_product":"whatsapp","to":"` + ada + `","context":{},"type":"text","text":{"body":"x"}}`, 400, 100, 0},
		{"LongTag", path, bearer, `{"messaging_product":"whatsapp","to":"` + ada + `","biz_opaque_callback_data":"` + strings.Repeat("k", fakewhatsapp.TagLimit+1) + `","type":"text","text":{"body":"x"}}`, 400, 100, 0},
		{"UnsupportedType", path, bearer, `{"messaging_product":"whatsapp","to":"` + ada + `","type":"sticker","sticker":{"id":"1"}}`, 400, 131051, 0},
		{"MediaWithoutObject", path, bearer, `{"messaging_product":"whatsapp","to":"` + ada + `","type":"image"}`, 400, 131008, 0},
		{"AudioCaption", path, bearer, `{"messaging_product":"whatsapp","to":"` + ada + `","type":"audio","audio":{"link":"https://example.com/a.ogg","caption":"x"}}`, 400, 131009, 0},
		{"MediaLinkNotHTTP", path, bearer, `{"messaging_product":"whatsapp","to":"` + ada + `","type":"image","image":{"link":"file:///etc/passwd"}}`, 400, 131009, 0},
		{"FourButtons", path, bearer, buttons("a", "b", "c", "d"), 400, 131009, 0},
		{"NoButtons", path, bearer, buttons(), 400, 131009, 0},
		{"RepeatedButtonTitles", path, bearer, buttons("Yes", "Yes"), 400, 131009, 0},
		{"LongButtonTitle", path, bearer, buttons("123456789012345678901"), 400, 131009, 0},
		{"ElevenRows", path, bearer, list("Choose", ten...), 400, 131009, 0},
		{"LongRowTitle", path, bearer, list("Choose", row("a", "1234567890123456789012345", "")), 400, 131009, 0},
		{"LongRowDescription", path, bearer, list("Choose", row("a", "A", strings.Repeat("d", 73))), 400, 131009, 0},
		{"RepeatedRowIDs", path, bearer, list("Choose", row("a", "A", ""), row("a", "B", "")), 400, 131009, 0},
		{"NoListButton", path, bearer, list("", row("a", "A", "")), 400, 131009, 0},
		{"UnknownPath", "/" + phone + "/media", bearer, text("x"), 400, 2500, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, srv := setup(t)
			resp, g := call(t, srv, tc.path, tc.auth, tc.body)
			if resp.StatusCode != tc.status || g.Error.Code != tc.code || g.Error.ErrorSubcode != tc.subcode || g.Error.Type == "" || g.Error.FBTraceID == "" {
				t.Fatalf("got %d %+v, want %d code %d/%d", resp.StatusCode, g.Error, tc.status, tc.code, tc.subcode)
			}
			if len(rec.Delivered()) != 0 {
				t.Fatalf("recorded %d", len(rec.Delivered()))
			}
		})
	}
}

// TestAccepts: text at the limit, buttons and a list, under a version or
// not; each recorded as the person sees it, with a wamid.
func TestAccepts(t *testing.T) {
	t.Parallel()
	rec, srv := setup(t)
	bearer := "Bearer " + token
	bodies := []string{
		text(strings.Repeat("😀", fakewhatsapp.TextLimit/2)),
		buttons("Lisbon", "Porto", "Faro"),
		list("Choose", row("a", "Lisbon", ""), row("b", "Porto", "the north")),
		`{"messaging_product":"whatsapp","to":"` + ada + `","context":{"message_id":"wamid.IN1"},"type":"text","text":{"body":"quoted"}}`,
	}
	ids := map[string]bool{}
	for i, body := range bodies {
		path := "/v25.0/" + phone + "/messages"
		if i%2 == 1 {
			path = "/" + phone + "/messages"
		}
		resp, g := call(t, srv, path, bearer, body)
		if resp.StatusCode != 200 || len(g.Messages) != 1 || !strings.HasPrefix(g.Messages[0].ID, "wamid.") || ids[g.Messages[0].ID] {
			t.Fatalf("%d: %d %+v", i, resp.StatusCode, g)
		}
		ids[g.Messages[0].ID] = true
	}
	got := rec.Delivered()
	want := []string{strings.Repeat("😀", fakewhatsapp.TextLimit/2), "Which?", "Which?", "quoted"}
	controls := [][]fakeapi.Control{
		nil,
		{{Label: "Lisbon", Data: "q:0"}, {Label: "Porto", Data: "q:1"}, {Label: "Faro", Data: "q:2"}},
		{{Label: "Lisbon", Data: "a"}, {Label: "Porto: the north", Data: "b"}},
		nil,
	}
	for i, d := range got {
		if d.Platform != message.WhatsApp || d.Chat != ada || d.Text != want[i] || !ids[d.MessageID] || !reflect.DeepEqual(d.Controls, controls[i]) {
			t.Errorf("delivery %d: %+v", i, d)
		}
	}
	if got[3].ReplyTo != "wamid.IN1" {
		t.Errorf("the quote is %q", got[3].ReplyTo)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		fault        fakeapi.Fault
		status, code int
		retryAfter   string
	}{
		{"ReEngagement", fakeapi.Fault{Error: fakewhatsapp.CodeReEngagement}, 400, 131047, ""},
		{"Throughput", fakeapi.Fault{Error: fakewhatsapp.CodeThroughput}, 400, 130429, ""},
		{"PairRate", fakeapi.Fault{Error: fakewhatsapp.CodePairRate, RetryAfter: 1500 * time.Millisecond}, 400, 131056, "2"},
		{"WithStatus", fakeapi.Fault{Error: "131000", Status: 502}, 502, 131000, ""},
		{"EdgePage", fakeapi.Fault{Status: 503}, 503, 0, ""},
		{"RateLimitedEdge", fakeapi.Fault{Status: 429, RetryAfter: 30 * time.Second}, 429, 0, "30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, srv := setup(t)
			rec.Inject(tc.fault)
			resp, g := call(t, srv, "/"+phone+"/messages", "Bearer "+token, text("x"))
			if resp.StatusCode != tc.status || g.Error.Code != tc.code || resp.Header.Get("Retry-After") != tc.retryAfter {
				t.Fatalf("got %d %+v Retry-After %q", resp.StatusCode, g.Error, resp.Header.Get("Retry-After"))
			}
			if tc.code == 131047 && !strings.Contains(g.Error.ErrorData.Details, "24 hours") {
				t.Fatalf("details %q", g.Error.ErrorData.Details)
			}
			if len(rec.Delivered()) != 0 || rec.Calls() != 1 {
				t.Fatal("a failed send was recorded")
			}
		})
	}
}

// TestTheAdapterAgainstTheFake: the real client reads the fake's answers
// as the Cloud API's.
func TestTheAdapterAgainstTheFake(t *testing.T) {
	t.Parallel()
	rec, srv := setup(t)
	thread := message.Thread{Platform: message.WhatsApp, Account: phone, Chat: ada}
	c := &whatsapp.Client{Token: token, PhoneNumberID: phone, BaseURL: srv.URL + "/" + whatsapp.GraphVersion, HTTP: srv.Client()}
	rc, err := c.Send(t.Context(), message.Outgoing{Thread: thread, Content: message.Text("*hi*")})
	if err != nil || len(rc.MessageIDs) != 1 || rc.MessageIDs[0] != rec.Delivered()[0].MessageID || rec.Delivered()[0].Text != "∗hi∗" {
		t.Fatalf("Send = %+v, %v; recorded %+v", rc, err, rec.Delivered())
	}
	rec.Inject(fakeapi.Fault{Error: fakewhatsapp.CodeReEngagement})
	_, err = c.Send(t.Context(), message.Outgoing{Thread: thread, Content: message.Text("x")})
	var se *message.SendError
	if !errors.As(err, &se) || se.Class != message.FailPermission || !strings.Contains(se.Reason, "template") {
		t.Fatalf("131047: %v", err)
	}
	wrong := &whatsapp.Client{Token: "EAAwrong", PhoneNumberID: phone, BaseURL: srv.URL, HTTP: srv.Client()}
	if _, err := wrong.Send(t.Context(), message.Outgoing{Thread: thread, Content: message.Text("x")}); message.ClassOf(err) != message.FailAuth {
		t.Fatalf("wrong token: %v", err)
	}
}

// TestSignAndHandshake: Sign signs the real samples as the adapter checks
// them, and HandshakeQuery is answered by its Handshaker.
func TestSignAndHandshake(t *testing.T) {
	t.Parallel()
	const secret, verify = "4f0c1e2d3b5a69788796a5b4c3d2e1f0", "parley-whatsapp-verify-token"
	r, err := whatsapp.NewReceiver(secret, verify, phone)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "events", "whatsapp", "*.json"))
	if len(files) == 0 {
		t.Fatal("no samples")
	}
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		h := fakewhatsapp.Sign(secret, body)
		if h.Get("Content-Type") != "application/json" || !strings.HasPrefix(h.Get("X-Hub-Signature"), "sha1=") {
			t.Fatalf("headers %v", h)
		}
		req := &platform.Request{Method: http.MethodPost, Header: h, Body: body}
		if err := r.Verify(req); err != nil {
			t.Fatalf("%s: Verify: %v", file, err)
		}
		req.Header = fakewhatsapp.Sign("other", body)
		if err := r.Verify(req); !errors.Is(err, platform.ErrUnauthorized) {
			t.Fatalf("%s: Verify with another secret: %v", file, err)
		}
	}
	reply, ok := r.Handshake(&platform.Request{Method: http.MethodGet, Query: fakewhatsapp.HandshakeQuery(verify, "42")})
	if !ok || reply.Status != 200 || string(reply.Body) != "42" {
		t.Fatalf("Handshake = %+v, %v", reply, ok)
	}
	reply, ok = r.Handshake(&platform.Request{Method: http.MethodGet, Query: fakewhatsapp.HandshakeQuery("wrong", "42")})
	if !ok || reply.Status != 403 {
		t.Fatalf("Handshake with a wrong token = %+v, %v", reply, ok)
	}
}

// TestReply: the webhook of a press parses, on the adapter's receiver, to
// the press of the control it names.
func TestReply(t *testing.T) {
	t.Parallel()
	const secret = "4f0c1e2d3b5a69788796a5b4c3d2e1f0"
	r, err := whatsapp.NewReceiver(secret, "v", phone)
	if err != nil {
		t.Fatal(err)
	}
	for _, list := range []bool{false, true} {
		body := fakewhatsapp.Reply{
			WABA: "102290129340398", PhoneNumberID: phone, DisplayPhoneNumber: "15550001234",
			From: ada, Name: "Ada Lovelace", ID: "wamid.PRESS", Question: "wamid.Q", Data: "q1:0:2", Title: "Faro",
			List: list, At: time.Unix(1764432000, 0),
		}.Body()
		req := &platform.Request{Method: http.MethodPost, Header: fakewhatsapp.Sign(secret, body), Body: body}
		if err := r.Verify(req); err != nil {
			t.Fatal(err)
		}
		p, err := r.Parse(req)
		if err != nil || len(p.Events) != 1 {
			t.Fatalf("Parse = %+v, %v", p, err)
		}
		ev := p.Events[0]
		if ev.Kind != message.KindAnswer || ev.EventID != "wamid.PRESS" || ev.Thread.Chat != ada || ev.Sender.Name != "Ada Lovelace" ||
			!reflect.DeepEqual(*ev.Press, message.Press{Data: "q1:0:2", MessageID: "wamid.Q"}) || !ev.Time.Equal(time.Unix(1764432000, 0)) {
			t.Fatalf("list %v: %+v %+v", list, ev, ev.Press)
		}
	}
}

// TestStatus: the webhook of a status parses, on the adapter's receiver, to
// the status of the message it names, with its tag and a failure's class.
func TestStatus(t *testing.T) {
	t.Parallel()
	const secret = "4f0c1e2d3b5a69788796a5b4c3d2e1f0"
	r, err := whatsapp.NewReceiver(secret, "v", phone)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in   fakewhatsapp.Status
		want message.Status
	}{
		{fakewhatsapp.Status{ID: "wamid.OUT", To: ada, State: "read", Tag: "i#1"},
			message.Status{MessageID: "wamid.OUT", State: "read", Tag: "i#1"}},
		{fakewhatsapp.Status{ID: "wamid.OUT", To: ada, State: "failed", Tag: "i#2", Code: 131047, Title: "Re-engagement message"},
			message.Status{MessageID: "wamid.OUT", State: "failed", Tag: "i#2", Code: "131047", Reason: "Re-engagement message", Class: message.FailPermission}},
	}
	for _, tc := range cases {
		tc.in.WABA, tc.in.PhoneNumberID, tc.in.DisplayPhoneNumber, tc.in.At = "102290129340398", phone, "15550001234", time.Unix(1764432000, 0)
		body := tc.in.Body()
		req := &platform.Request{Method: http.MethodPost, Header: fakewhatsapp.Sign(secret, body), Body: body}
		if err := r.Verify(req); err != nil {
			t.Fatal(err)
		}
		p, err := r.Parse(req)
		if err != nil || len(p.Events) != 1 {
			t.Fatalf("Parse = %+v, %v", p, err)
		}
		ev := p.Events[0]
		if ev.Kind != message.KindStatus || ev.EventID != "wamid.OUT:"+tc.in.State || ev.Thread.Chat != ada || !reflect.DeepEqual(*ev.Status, tc.want) {
			t.Fatalf("%s: %+v %+v", tc.in.State, ev, ev.Status)
		}
	}
}
