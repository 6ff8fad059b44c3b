package agentapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/preview"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// TestPreviewAssistantStatus: in a Slack assistant's thread an async
// preview's status line is the thread's status (assistant.threads.setStatus
// on a fake Slack Web API), never under the text; a post without one ends
// it; the settler (here the turn's, as its final settles the preview)
// clears what is shown, once per settle.
func TestPreviewAssistantStatus(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	const token, team = "xoxb-status-test", "T0STATUS01"
	api := fakeslack.New(fakeslack.Options{Token: token, Recorder: fakeapi.New(fakeapi.Options{})})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	sl := &slack.Client{Token: token, TeamID: team, BaseURL: srv.URL, Assistant: true}
	secret, _ := standardwebhooks.ParseSecret("parley-agent-test-secret")
	now := t0
	h := &agentapi.PreviewHandler{
		Verifier: standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{secret}},
		Awaits:   st, Previews: st,
		Previewers: map[message.Platform]agentapi.Previewer{message.Slack: sl},
		Config:     preview.Config{Interval: time.Second, MaxUpdates: 10},
		Now:        func() time.Time { return now },
	}
	post := func(id string, body map[string]string) agentapi.PreviewAnswer {
		t.Helper()
		b, _ := json.Marshal(body)
		req := httptest.NewRequest(http.MethodPost, "/reply/preview", bytes.NewReader(b))
		standardwebhooks.SetHeaders(req.Header, secret, id, now, b)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var ans agentapi.PreviewAnswer
		if err := json.Unmarshal(w.Body.Bytes(), &ans); w.Code != http.StatusOK || err != nil || !ans.Shown {
			t.Fatalf("preview %s: %d %s", id, w.Code, w.Body.String())
		}
		return ans
	}
	th := message.Thread{Platform: message.Slack, Account: team, Chat: "D0STATUS01", Thread: "1764950000.000100"}
	turn := strings.Repeat("f", 32)
	if _, _, err := st.OpenAwait(t.Context(), store.Await{TurnID: turn, Thread: th, EventKey: "evt#" + turn, ClaimKey: "k", ClaimOwner: "o",
		Deadline: now.Add(time.Hour), CreatedAt: now, ExpiresAt: now.Add(2 * time.Hour), Preview: message.Preview{Thread: th, Key: turn}}); err != nil {
		t.Fatal(err)
	}
	statuses := func() []string {
		var out []string
		for _, s := range api.Statuses() {
			out = append(out, s.Status)
		}
		return out
	}
	post("msg_1", map[string]string{"turn_id": turn, "text": "Three", "status": "searching flights"})
	if got := statuses(); !slices.Equal(got, []string{"searching flights"}) {
		t.Fatalf("statuses %q after a post with one", got)
	}
	for _, s := range api.Streams() {
		if strings.Contains(s.Text, "searching") {
			t.Fatalf("the stream shows the status line: %q", s.Text)
		}
	}
	now = now.Add(2 * time.Second)
	post("msg_2", map[string]string{"turn_id": turn, "text": "Three flights"})
	if got := statuses(); !slices.Equal(got, []string{"searching flights", ""}) {
		t.Fatalf("statuses %q after a post without one: want it ended", got)
	}
	now = now.Add(2 * time.Second)
	post("msg_3", map[string]string{"turn_id": turn, "status": "checking seats"})
	// The final settles the preview; the settler clears the status.
	if _, err := st.FinishAwait(t.Context(), turn, store.AwaitPost{ID: "p", ContentType: "text/plain", Body: []byte("done"), At: now}, now); err != nil {
		t.Fatal(err)
	}
	a, err := preview.Settle(t.Context(), st, turn, store.SettledByTurn, func() time.Time { return now }, time.Minute, preview.MaxSettleWait)
	if err != nil || !a.PreviewStatus {
		t.Fatalf("settle: %+v, %v", a, err)
	}
	if err := preview.EndStatus(t.Context(), sl, a); err != nil {
		t.Fatal(err)
	}
	if got := statuses(); !slices.Equal(got, []string{"searching flights", "", "checking seats", ""}) {
		t.Fatalf("statuses %q: want the last cleared by the settler", got)
	}
}

// TestSettleWaitsAtMostItsBound: a preview update holding the record's
// lease (its invocation stuck, its bound a minute away) keeps a settler
// waiting no longer than the settler's own bound, which then answers
// ErrUpdateInFlight (a post's 503: "try again") and settles nothing. On
// DynamoDB Local.
func TestSettleWaitsAtMostItsBound(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	th := message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "-100200300"}
	turn := strings.Repeat("e", 32)
	now := t0
	if _, _, err := st.OpenAwait(t.Context(), store.Await{TurnID: turn, Thread: th, EventKey: "evt#" + turn, ClaimKey: "k", ClaimOwner: "o",
		Deadline: now.Add(time.Hour), CreatedAt: now, ExpiresAt: now.Add(2 * time.Hour), Preview: message.Preview{Thread: th, Key: turn}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.TakeAwaitPreview(t.Context(), turn, store.PreviewTake{Now: now, Next: now.Add(time.Second), Busy: now.Add(time.Minute), Max: 10, Lease: "stuck-update"}); err != nil {
		t.Fatal(err)
	}
	const bound = 400 * time.Millisecond
	started := time.Now()
	_, err := preview.Settle(t.Context(), st, turn, store.SettledByPost("p1"), func() time.Time { return now }, time.Minute, bound)
	if !errors.Is(err, preview.ErrUpdateInFlight) {
		t.Fatalf("Settle under a held lease = %v, want ErrUpdateInFlight", err)
	}
	if waited := time.Since(started); waited < bound {
		t.Fatalf("Settle gave up after %v, before its bound %v", waited, bound)
	}
	if a, err := st.GetAwait(t.Context(), turn); err != nil || a.PreviewSettled != "" || a.PreviewLease != "stuck-update" {
		t.Fatalf("after giving up: settled %q, lease %q, %v; want the update's lease untouched", a.PreviewSettled, a.PreviewLease, err)
	}
}
