package agentapi_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// TestEarlyPostIsHeldOnlyForATurnInFlight (finding 2): a post with no await
// record is held when its turn was sent and not settled (its claim is
// pending), and checked like any post first: a refused one writes nothing.
// For a turn Parley never sent, or settled, it is 404 unknown_turn.
func TestEarlyPostIsHeldOnlyForATurnInFlight(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	secret, _ := standardwebhooks.ParseSecret("parley-agent-test-secret")
	h := &agentapi.Handler{
		Verifier: standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{secret}},
		Awaits:   st, Intents: st, Claims: st, AsyncTimeout: time.Hour,
		Capabilities: func(message.Platform) (message.Capabilities, bool) {
			return message.Capabilities{TextLimit: 4096, Counting: message.CountUTF16}, true
		},
		Now: func() time.Time { return t0 },
	}
	post := func(id string, body map[string]any) (int, string) {
		b, _ := json.Marshal(body)
		req := httptest.NewRequest(http.MethodPost, "/reply", bytes.NewReader(b))
		standardwebhooks.SetHeaders(req.Header, secret, id, t0, b)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	th := message.Thread{Platform: message.Telegram, Account: "1", Chat: "42"}
	inFlight, settled, unknown := strings.Repeat("a", 32), strings.Repeat("b", 32), strings.Repeat("c", 32)
	for _, id := range []string{inFlight, settled} {
		if _, err := st.Claim(t.Context(), store.IntentKey(id), store.ClaimSpec{Owner: "o", Now: t0, Lease: time.Minute, TTL: time.Hour, Thread: th, Origin: "evt#" + id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Settle(t.Context(), store.IntentKey(settled), "o", store.ClaimDone, "envelope", t0, time.Hour); err != nil {
		t.Fatal(err)
	}

	for _, id := range []string{unknown, settled} {
		if code, body := post("msg_"+id, map[string]any{"turn_id": id, "text": "hi"}); code != http.StatusNotFound || !strings.Contains(body, "unknown_turn") {
			t.Errorf("a post for a turn not in flight: %d %s, want 404 unknown_turn", code, body)
		}
	}
	over := map[string]any{"turn_id": inFlight, "envelope": map[string]any{"schema": "openab.turn.v1", "messages": []map[string]string{
		{"id": "1", "text": "a"}, {"id": "2", "text": "b"}, {"id": "3", "text": "c"}, {"id": "4", "text": "d"}, {"id": "5", "text": "e"}}}}
	if code, body := post("msg_over", over); code != http.StatusUnprocessableEntity {
		t.Fatalf("an early post over the limits: %d %s, want 422", code, body)
	}
	if _, err := st.GetAwait(t.Context(), inFlight); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused early post left a record: %v", err)
	}
	if code, body := post("msg_ok", map[string]any{"turn_id": inFlight, "text": "here it is"}); code != http.StatusOK {
		t.Fatalf("an early post: %d %s, want 200", code, body)
	}
	a, err := st.GetAwait(t.Context(), inFlight)
	if err != nil || a.State != store.AwaitFinal || string(a.Post.Body) != "here it is" || a.Thread != th || !a.Deadline.Equal(t0.Add(time.Hour)) {
		t.Fatalf("held record %+v, %v; want the post, final, on the turn's thread", a, err)
	}
}

// TestEndpointsTakeOnlyAPostToTheirPath: each agent endpoint answers
// another path 404 and another method 405 with Allow: POST, before it
// reads a body or touches its store (every handler here has none, so a
// request that got further would panic).
func TestEndpointsTakeOnlyAPostToTheirPath(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		path string
		h    http.Handler
	}{
		{"/reply", &agentapi.Handler{}},
		{"/reply/preview", &agentapi.PreviewHandler{}},
		{"/history/erase", &agentapi.EraseHandler{}},
		{"", &agentapi.MediaHandler{}},
	} {
		if c.path != "" {
			w := httptest.NewRecorder()
			c.h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, c.path+"/x", strings.NewReader("{}")))
			if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "not_found") {
				t.Errorf("POST %s/x = %d %s, want 404 not_found", c.path, w.Code, w.Body)
			}
		}
		w := httptest.NewRecorder()
		c.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, cmp.Or(c.path, "/media"), nil))
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != http.MethodPost {
			t.Errorf("GET %q = %d (Allow %q), want 405 with Allow: POST", c.path, w.Code, w.Header().Get("Allow"))
		}
	}
}
