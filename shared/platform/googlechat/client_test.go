package googlechat

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/shared/message"
)

type clientRig struct {
	api *fakegooglechat.API
	rec *fakeapi.Recorder
	c   *Client
}

func newClientRig(t *testing.T) *clientRig {
	t.Helper()
	chatAPI, _ := issuers()
	rig := &clientRig{rec: fakeapi.New(fakeapi.Options{})}
	rig.api = fakegooglechat.New(fakegooglechat.Options{Recorder: rig.rec, ChatIssuer: chatAPI.ChatIssuer(), GoogleIssuer: chatAPI.GoogleIssuer()})
	srv := httptest.NewServer(rig.api)
	t.Cleanup(srv.Close)
	c, err := NewClient(testProject, []byte(fakegooglechat.ServiceAccountJSON("https://oauth2.googleapis.com/token")), srv.URL+fakegooglechat.TokenPath, srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	rig.c = c
	return rig
}

// TestRequestIDMakesAResendOneMessage: the answer of a create is lost
// after Chat created the message; the resend with the same unit carries
// the same requestId, and Chat answers with the message it created:
// one message, the same name.
func TestRequestIDMakesAResendOneMessage(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	out := message.Outgoing{Thread: thread, Content: message.Text("on it"), IdempotencyKey: "8c1e0f2a9b7d4e6f8a0b1c2d3e4f5a6b#b1#1"}
	rig.rec.Inject(fakeapi.Fault{DropResponseAfterCommit: true})
	if _, err := rig.c.Send(t.Context(), out); message.ClassOf(err) != message.FailUnknown {
		t.Fatalf("dropped answer: %v", err)
	}
	rc, err := rig.c.Send(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	got := rig.rec.Delivered()
	if len(got) != 1 || rc.MessageIDs[0] != got[0].MessageID {
		t.Fatalf("delivered %d, receipt %v: want one message and its name", len(got), rc.MessageIDs)
	}
	// Another unit is another message.
	out.IdempotencyKey += "x"
	if _, err := rig.c.Send(t.Context(), out); err != nil || len(rig.rec.Delivered()) != 2 {
		t.Fatalf("another unit: %v, %d delivered", err, len(rig.rec.Delivered()))
	}
	if n := rig.api.TokenCalls(); n != 1 {
		t.Fatalf("%d token calls: the service account's token is cached", n)
	}
}

// TestRefusedTokenIsDropped: a token the Chat API refuses (a revoked or
// rotated key) is not used again: the next send asks Google for a new one.
func TestRefusedTokenIsDropped(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	out := message.Outgoing{Thread: thread, Content: message.Text("hi"), IdempotencyKey: "k#b1#1"}
	if _, err := rig.c.Send(t.Context(), out); err != nil {
		t.Fatal(err)
	}
	rig.rec.Inject(fakeapi.Fault{Error: "UNAUTHENTICATED"})
	out.IdempotencyKey = "k#b2#1"
	if _, err := rig.c.Send(t.Context(), out); message.ClassOf(err) != message.FailAuth {
		t.Fatalf("refused token: %v, want auth", err)
	}
	out.IdempotencyKey = "k#b3#1"
	if _, err := rig.c.Send(t.Context(), out); err != nil {
		t.Fatal(err)
	}
	if n := rig.api.TokenCalls(); n != 2 {
		t.Fatalf("%d token calls, want a new token after the refusal", n)
	}
}

// TestTokenRefusalsAreClassified: Google's token endpoint refusing the key
// is the configuration (auth); nothing reached Chat.
func TestTokenRefusalsAreClassified(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`))
	}))
	defer srv.Close()
	c, err := NewClient(testProject, []byte(fakegooglechat.ServiceAccountJSON("https://oauth2.googleapis.com/token")), srv.URL, srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Send(t.Context(), message.Outgoing{Thread: thread, Content: message.Text("hi")})
	if se, ok := errors.AsType[*message.SendError](err); !ok || se.Class != message.FailAuth || se.Status != http.StatusBadRequest {
		t.Fatalf("err = %v, want auth with the token endpoint's 400", err)
	}
	if _, err := NewClient(testProject, []byte(`{"type":"service_account"}`), "", "", nil); err == nil {
		t.Fatal("a key without client_email and private_key was taken")
	}
}

func TestThreadCardEditAndPrivateNotice(t *testing.T) {
	t.Parallel()
	rig := newClientRig(t)
	rc, err := rig.c.Ask(t.Context(), message.Outgoing{Thread: thread, Content: message.Content{Prompt: &message.Prompt{
		Text: "*Which* city? <users/all>", Options: []message.Choice{{Label: "Lisbon", Data: "q1:0:0"}, {Label: "Porto", Data: "q1:0:1"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	d := rig.rec.Delivered()[0]
	if d.Thread != "Thr00000002" || d.Text != "∗Which∗ city? ‹users/all>" || len(d.Controls) != 2 || d.Controls[1].Data != "q1:0:1" {
		t.Fatalf("delivered %+v", d)
	}
	if err := rig.c.Edit(t.Context(), thread, rc.MessageIDs[0], message.Content{Prompt: &message.Prompt{Text: "Lisbon"}}); err != nil {
		t.Fatal(err)
	}
	if e := rig.rec.Edits(); len(e) != 1 || len(e[0].Controls) != 0 || e[0].Text != "Lisbon" {
		t.Fatalf("edits %+v", e)
	}
	if err := rig.c.Edit(t.Context(), dm, rc.MessageIDs[0], message.Text("x")); message.ClassOf(err) != message.FailInvalidPayload {
		t.Fatalf("an edit of another space's message: %v", err)
	}
	press := message.Event{Platform: message.GoogleChat, Account: testProject, EventID: "e1", Thread: thread, Sender: message.Sender{ID: ada}}
	if err := rig.c.Acknowledge(t.Context(), press, "This question was not for you."); err != nil {
		t.Fatal(err)
	}
	if len(rig.rec.Delivered()) != 1 {
		t.Fatal("the notice was posted for everyone")
	}
	// Many options: a selection input and a Send button.
	var opts []message.Choice
	for i := range 8 {
		opts = append(opts, message.Choice{Label: "day " + string(rune('a'+i)), Data: "q2:0:" + string(rune('0'+i))})
	}
	if _, err := rig.c.Ask(t.Context(), message.Outgoing{Thread: thread, Content: message.Content{Prompt: &message.Prompt{Text: "days", Options: opts, Multi: true, Select: "q2:0:s"}}}); err != nil {
		t.Fatal(err)
	}
	d = rig.rec.Delivered()[1]
	if len(d.Controls) != 9 || !strings.HasPrefix(d.Controls[0].Data, fakegooglechat.ChoicePrefix) || d.Controls[8].Data != "q2:0:s" {
		t.Fatalf("controls %+v", d.Controls)
	}
}

func TestInert(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"5 * 3":                          "5 * 3",
		"*bold* and _it_":                "∗bold∗ and ˍitˍ",
		"see https://x.example/a_b_c ok": "see https://x.example/a_b_c ok",
		"<users/123> hi <https://x|y>":   "‹users/123> hi ‹https://x|y>",
		"a < b > c":                      "a < b > c",
	} {
		if got := Inert(in); got != want {
			t.Errorf("Inert(%q) = %q, want %q", in, got, want)
		}
	}
}
