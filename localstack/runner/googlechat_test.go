package runner_test

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parleyhq/parley/localstack/callcount"
	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeissuer"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/jwks"
)

const (
	gcDM    = "spaces/dmAda0000001"
	gcSpace = "spaces/AAQAparley01"
)

func (h *harness) googleChatAPI() *fakegooglechat.API {
	h.t.Helper()
	api, ok := h.fake.For(message.GoogleChat)
	if !ok {
		h.t.Fatal("no fake Google Chat")
	}
	return api.(*fakegooglechat.API)
}

// postGoogleChat posts an event as Chat does for a project-number
// audience: a token of the fake Chat issuer's current key, issued now.
func (h *harness) postGoogleChat(body []byte) (int, string) {
	return h.post("/googlechat", h.googleChatAPI().Sign(h.clock.Now()), body)
}

// TestGoogleChat: a message's bubbles arrive in order, once; a redelivery
// is answered once; an unknown send is resent with its requestId and is
// still one message; a question in a space thread is answered by its
// owner's click once and by anyone else's never, and its card is updated.
func TestGoogleChat(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	sample, err := os.ReadFile("../../events/googlechat/message-dm.json")
	if err != nil {
		t.Fatal(err)
	}
	// Chat created the first bubble, and its answer was lost.
	h.fake.Inject(fakeplatform.Fault{Platform: message.GoogleChat, DropResponseAfterCommit: true})
	for range 2 {
		if code, body := h.postGoogleChat(sample); code != http.StatusOK || body != "{}" {
			t.Fatalf("webhook: %d %s", code, body)
		}
	}
	d := h.waitDelivered(2, 30*time.Second)
	h.quiesce(30 * time.Second)
	if n := len(h.fake.Delivered()); n != 2 || d[0].Chat != gcDM ||
		!strings.HasPrefix(d[0].Text, "echo: hello from Google Chat") || !strings.Contains(d[1].Text, "via googlechat") {
		t.Fatalf("delivered %q", texts(h.fake.Delivered()))
	}
	if n := h.agent.calls(); n != 1 {
		t.Fatalf("the agent was called %d times for a message and its redelivery", n)
	}
	in := h.intentFor("evt#googlechat#" + fakegooglechat.ProjectNumber + "#" + gcDM + "/messages/Msg00000001.Msg00000001")
	if u := in.Units[0]; u.State != message.UnitSent || !u.Resent || len(u.Receipt) != 1 || u.Receipt[0] != d[0].MessageID {
		t.Fatalf("first unit %+v: want sent after a resend, with the message Chat created", u)
	}

	for _, name := range []string{"added-to-space.json", "message-from-bot.json"} {
		b, _ := os.ReadFile("../../events/googlechat/" + name)
		if code, body := h.postGoogleChat(b); code != http.StatusOK || body != "{}" {
			t.Fatalf("%s: %d %s", name, code, body)
		}
	}

	// Grace asks in a thread of the space; the question is hers.
	now := h.clock.Now()
	if code, body := h.postGoogleChat(fakegooglechat.Message(gcSpace, "ThrAsk1", fakegooglechat.Grace, "Ask1.Ask1", "/ask seat", now)); code != http.StatusOK {
		t.Fatalf("ask: %d %s", code, body)
	}
	d = h.waitDelivered(4, 30*time.Second)
	q := d[3]
	if q.Chat != gcSpace || q.Thread != "ThrAsk1" || len(q.Controls) == 0 {
		t.Fatalf("the question %+v has no buttons in its thread", q)
	}
	click := func(who string, at time.Time) {
		t.Helper()
		if code, body := h.postGoogleChat(fakegooglechat.Click(q.MessageID, "ThrAsk1", who, q.Controls[0].Data, nil, at)); code != http.StatusOK {
			t.Fatalf("click: %d %s", code, body)
		}
	}
	click(fakegooglechat.Ada, now.Add(time.Second)) // not hers to answer
	click(fakegooglechat.Grace, now.Add(2*time.Second))
	if got := h.waitAnswers(1); got[0].Action != "accept" || got[0].Content["seat"] == nil {
		t.Fatalf("answers %+v", got)
	}
	click(fakegooglechat.Grace, now.Add(3*time.Second))
	h.quiesce(30 * time.Second)
	if n := len(h.agent.gotAnswers()); n != 1 {
		t.Fatalf("%d answers, want 1", n)
	}
	if e := h.lastEdit(q); len(e.Controls) != 0 || e.Text == "" {
		t.Fatalf("the card was not updated to its outcome: %+v", e)
	}
}

// TestGoogleChatBadTokensAndKeys: forged, expired, wrong-audience and
// wrong-issuer tokens are 401 with no writes; a key rotation is verified
// without a restart; unreachable keys answer 503.
func TestGoogleChatBadTokensAndKeys(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	api := h.googleChatAPI()
	iss := api.ChatIssuer()
	now := h.clock.Now()
	body := fakegooglechat.Message(gcDM, "", fakegooglechat.Ada, "Bad1.Bad1", "hello", now)
	if code, _ := h.postGoogleChat(fakegooglechat.Message(gcDM, "", fakegooglechat.Ada, "Warm1.Warm1", "warm up", now)); code != http.StatusOK {
		t.Fatal("warm-up")
	}
	h.waitDelivered(2, 30*time.Second)
	tok := func(signer *fakeissuer.Issuer, edit func(*jwt.RegisteredClaims)) http.Header {
		c := signer.Claims(fakegooglechat.ProjectNumber, now, time.Hour)
		if edit != nil {
			edit(&c)
		}
		return http.Header{"Authorization": {"Bearer " + signer.Sign(c)}}
	}
	forger := fakeissuer.New(fakeissuer.Options{Issuer: fakegooglechat.ChatIssuer, KeyID: iss.KeyID()})
	for name, hdr := range map[string]http.Header{
		"Forged": tok(forger, nil),
		"Expired": tok(iss, func(c *jwt.RegisteredClaims) {
			c.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Hour))
			c.IssuedAt = jwt.NewNumericDate(now.Add(-2 * time.Hour))
			c.NotBefore = c.IssuedAt
		}),
		"WrongAudience": tok(iss, func(c *jwt.RegisteredClaims) { c.Audience = jwt.ClaimStrings{"999999999999"} }),
		"WrongIssuer":   tok(iss, func(c *jwt.RegisteredClaims) { c.Issuer = "evil@example.com" }),
	} {
		t.Run(name, func(t *testing.T) {
			before := h.calls.Total(callcount.Writes)
			if code, resp := h.post("/googlechat", hdr, body); code != http.StatusUnauthorized {
				t.Fatalf("%d %s, want 401", code, resp)
			}
			if n := h.calls.Total(callcount.Writes) - before; n != 0 {
				t.Fatalf("%d writes", n)
			}
		})
	}

	iss.Rotate(false)
	time.Sleep(jwks.DefaultNewKeyRefresh + 100*time.Millisecond)
	if code, resp := h.postGoogleChat(fakegooglechat.Message(gcDM, "", fakegooglechat.Ada, "Rot1.Rot1", "after the rotation", h.clock.Now())); code != http.StatusOK {
		t.Fatalf("a token of the rotated key: %d %s", code, resp)
	}
	h.waitDelivered(4, 30*time.Second)

	iss.Rotate(false)
	iss.SetDown(true)
	time.Sleep(jwks.DefaultNewKeyRefresh + 100*time.Millisecond)
	before := h.calls.Total(callcount.Writes)
	down := fakegooglechat.Message(gcDM, "", fakegooglechat.Ada, "Down1.Down1", "keys down", h.clock.Now())
	if code, resp := h.postGoogleChat(down); code != http.StatusServiceUnavailable {
		t.Fatalf("keys unreachable: %d %s, want 503", code, resp)
	}
	if n := h.calls.Total(callcount.Writes) - before; n != 0 {
		t.Fatalf("%d writes", n)
	}
	iss.SetDown(false)
	time.Sleep(1100 * time.Millisecond)
	if code, resp := h.postGoogleChat(down); code != http.StatusOK {
		t.Fatalf("the retry: %d %s", code, resp)
	}
	h.waitDelivered(6, 30*time.Second)
	if n := h.agent.calls(); n != 3 {
		t.Fatalf("the agent was called %d times, want 3", n)
	}
}
