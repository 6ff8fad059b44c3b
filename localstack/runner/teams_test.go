package runner_test

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parleyhq/parley/localstack/callcount"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeissuer"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/jwks"
)

const (
	teamsPersonal = "a:1personal0ada00000000000000000000000000000000000000000000000000001"
	teamsGroup    = "19:group0000000000000000000000000001@thread.v2"
)

// teamsAPI is the harness's fake Teams: its connector, Entra and issuer.
func (h *harness) teamsAPI() *faketeams.API {
	h.t.Helper()
	api, ok := h.fake.For(message.Teams)
	if !ok {
		h.t.Fatal("no fake Teams")
	}
	return api.(*faketeams.API)
}

// teamsURL is the fake connector's root, where the harness pointed
// TEAMS_SERVICE_URL: activities name it as their serviceUrl.
func (h *harness) teamsURL() string { return h.cfg.Platforms("TEAMS_SERVICE_URL") }

// postTeams posts an activity as the connector does: its serviceUrl the
// fake's, a token of the fake issuer's current key, issued now.
func (h *harness) postTeams(body []byte) (int, string) {
	body = faketeams.WithServiceURL(body, h.teamsURL())
	return h.post("/teams", h.teamsAPI().Sign(body, h.clock.Now()), body)
}

func teamsSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../events/teams/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTeams: a message's bubbles arrive in order, once, in the chat it
// came from; a redelivery is answered once; a question is answered by its
// owner once and by anyone else never, and its card is updated to its
// outcome; membership and edits are acknowledged and ignored.
func TestTeams(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	sample := teamsSample(t, "message-personal.json")
	for range 2 {
		if code, body := h.postTeams(sample); code != http.StatusOK {
			t.Fatalf("webhook: %d %s", code, body)
		}
	}
	d := h.waitDelivered(2, 30*time.Second)
	h.quiesce(30 * time.Second)
	if n := len(h.fake.Delivered()); n != 2 || d[0].Chat != teamsPersonal ||
		!strings.HasPrefix(d[0].Text, "echo: hello from Teams") || !strings.Contains(d[1].Text, "via teams") {
		t.Fatalf("delivered %q", texts(h.fake.Delivered()))
	}
	if n := h.agent.calls(); n != 1 {
		t.Fatalf("the agent was called %d times for a message and its redelivery", n)
	}
	var sent struct {
		TextFormat string `json:"textFormat"`
	}
	if raw := d[0].Args["textFormat"]; string(raw) != `"plain"` {
		t.Fatalf("textFormat %s, want plain: %v", raw, sent)
	}

	for _, name := range []string{"conversation-update.json", "message-update.json", "message-reaction.json"} {
		if code, body := h.postTeams(teamsSample(t, name)); code != http.StatusOK || !strings.Contains(body, `"ignored"`) {
			t.Fatalf("%s: %d %s", name, code, body)
		}
	}

	// Grace asks in the group chat; the question is hers.
	now := h.clock.Now()
	ask := faketeams.Message(h.teamsURL(), teamsGroup, faketeams.Grace, "1764433000001", "/ask seat", now)
	if code, body := h.postTeams(ask); code != http.StatusOK {
		t.Fatalf("ask: %d %s", code, body)
	}
	d = h.waitDelivered(4, 30*time.Second)
	q := d[3]
	if q.Chat != teamsGroup || len(q.Controls) == 0 {
		t.Fatalf("the question %+v has no card buttons", q)
	}
	press := func(who, id string) {
		t.Helper()
		body := faketeams.Submit(h.teamsURL(), teamsGroup, who, q.MessageID, id, q.Controls[0].Data, nil, h.clock.Now())
		if code, resp := h.postTeams(body); code != http.StatusOK {
			t.Fatalf("press: %d %s", code, resp)
		}
	}
	press(faketeams.Ada, "1764433000002") // not hers to answer
	press(faketeams.Grace, "1764433000003")
	if got := h.waitAnswers(1); got[0].Action != "accept" || got[0].Content["seat"] == nil {
		t.Fatalf("answers %+v", got)
	}
	press(faketeams.Grace, "1764433000004") // answered already
	h.quiesce(30 * time.Second)
	if n := len(h.agent.gotAnswers()); n != 1 {
		t.Fatalf("%d answers, want 1: only the owner's first press answers", n)
	}
	if e := h.lastEdit(q); len(e.Controls) != 0 || e.Text == "" {
		t.Fatalf("the card was not updated to its outcome: %+v", e)
	}
}

// TestTeamsBadTokensAreRefusedWithoutWrites: a forged, expired,
// wrong-audience or wrong-issuer token is 401, and nothing is written.
func TestTeamsBadTokensAreRefusedWithoutWrites(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	body := faketeams.WithServiceURL(teamsSample(t, "message-personal.json"), h.teamsURL())
	iss := h.teamsAPI().Issuer()
	now := h.clock.Now()
	tok := func(signer *fakeissuer.Issuer, edit func(*jwt.RegisteredClaims)) http.Header {
		c := signer.Claims(faketeams.AppID, now, time.Hour)
		if edit != nil {
			edit(&c)
		}
		return http.Header{"Authorization": {"Bearer " + signer.Sign(struct {
			jwt.RegisteredClaims
			ServiceURL string `json:"serviceurl"`
		}{c, h.teamsURL()})}}
	}
	forger := fakeissuer.New(fakeissuer.Options{Issuer: faketeams.Issuer, Endorsements: []string{"msteams"}, KeyID: faketeams.TestKeyID})
	// Warm the keys with a true request first, so that refusals are the
	// token's, not a cold cache's.
	if code, _ := h.postTeams(teamsSample(t, "conversation-update.json")); code != http.StatusOK {
		t.Fatal("warm-up")
	}
	for name, hdr := range map[string]http.Header{
		"Forged": tok(forger, nil),
		"Expired": tok(iss, func(c *jwt.RegisteredClaims) {
			c.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Hour))
			c.IssuedAt = jwt.NewNumericDate(now.Add(-2 * time.Hour))
			c.NotBefore = c.IssuedAt
		}),
		"WrongAudience": tok(iss, func(c *jwt.RegisteredClaims) { c.Audience = jwt.ClaimStrings{"00000000-0000-4000-8000-00000000b002"} }),
		"WrongIssuer":   tok(iss, func(c *jwt.RegisteredClaims) { c.Issuer = "https://sts.windows.net/evil/" }),
		"None":          nil,
	} {
		t.Run(name, func(t *testing.T) {
			before := h.calls.Total(callcount.Writes)
			if code, resp := h.post("/teams", hdr, body); code != http.StatusUnauthorized {
				t.Fatalf("%d %s, want 401", code, resp)
			}
			if n := h.calls.Total(callcount.Writes) - before; n != 0 {
				t.Fatalf("%d writes for a refused request", n)
			}
		})
	}
	h.quiesce(10 * time.Second)
	if n := h.agent.calls(); n != 0 {
		t.Fatalf("the agent was called %d times", n)
	}
}

// TestTeamsKeyRotationWithoutRestart: the issuer withdraws its key for a
// new one; the next activity, signed with the new key, is verified by the
// running function and answered. With the issuer unreachable, an activity
// is answered 503 (Teams retries), never 401, and nothing is written.
func TestTeamsKeyRotationWithoutRestart(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	if code, _ := h.postTeams(teamsSample(t, "message-personal.json")); code != http.StatusOK {
		t.Fatal("first message")
	}
	h.waitDelivered(2, 30*time.Second)
	h.teamsAPI().Issuer().Rotate(false)
	time.Sleep(jwks.DefaultNewKeyRefresh + 100*time.Millisecond)
	next := faketeams.Message(h.teamsURL(), teamsPersonal, faketeams.Ada, "1764433000101", "after the rotation", h.clock.Now())
	if code, body := h.postTeams(next); code != http.StatusOK {
		t.Fatalf("a message signed with the new key: %d %s", code, body)
	}
	h.waitDelivered(4, 30*time.Second)

	// The issuer goes down and rotates again: the new key cannot be had.
	h.teamsAPI().Issuer().Rotate(false)
	h.teamsAPI().Issuer().SetDown(true)
	time.Sleep(jwks.DefaultNewKeyRefresh + 100*time.Millisecond)
	before := h.calls.Total(callcount.Writes)
	down := faketeams.Message(h.teamsURL(), teamsPersonal, faketeams.Ada, "1764433000102", "while the keys are down", h.clock.Now())
	code, body := h.postTeams(down)
	if code != http.StatusServiceUnavailable {
		t.Fatalf("keys unreachable: %d %s, want 503", code, body)
	}
	if n := h.calls.Total(callcount.Writes) - before; n != 0 {
		t.Fatalf("%d writes", n)
	}
	h.teamsAPI().Issuer().SetDown(false)
	time.Sleep(1100 * time.Millisecond)
	if code, body := h.postTeams(down); code != http.StatusOK {
		t.Fatalf("the retry once the keys are back: %d %s", code, body)
	}
	h.waitDelivered(6, 30*time.Second)
}
