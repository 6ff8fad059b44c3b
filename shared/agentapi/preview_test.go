package agentapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/preview"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// stubPreviewer is a platform's preview as the handler sees it: a group
// message created on the first update, edited after; fail, when set,
// answers the next update.
type stubPreviewer struct {
	mu      sync.Mutex
	shown   []string
	cleared []string
	fail    error
}

func (s *stubPreviewer) Preview(_ context.Context, p message.Preview, text string) (message.Preview, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail; err != nil {
		s.fail = nil
		return p, err
	}
	s.shown = append(s.shown, text)
	if p.MessageID == "" {
		p.MessageID = "pv1"
	}
	return p, nil
}

func (s *stubPreviewer) ClearPreview(_ context.Context, p message.Preview) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleared = append(s.cleared, p.MessageID)
	return nil
}

func (s *stubPreviewer) PreviewInterval(message.Thread) time.Duration { return 3 * time.Second }

// unrecorded is a store whose preview records cannot be written.
type unrecorded struct{ *dynamostore.Store }

func (unrecorded) RecordAwaitPreview(context.Context, string, string, message.Preview, time.Time, time.Duration) error {
	return errors.New("table unavailable")
}

// TestPreviewHandlerDecisions: what POST /reply/preview answers for each
// state of the turn, on DynamoDB Local: shown (the message recorded as it
// is created), throttled across posts, capped, refused once the turn is
// answered, unsupported, early, rate limited by the platform, and a preview
// message whose record fails is deleted at once.
func TestPreviewHandlerDecisions(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	secret, _ := standardwebhooks.ParseSecret("parley-agent-test-secret")
	now := t0
	pl := &stubPreviewer{}
	h := &agentapi.PreviewHandler{
		Verifier: standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{secret}},
		Awaits:   st, Previews: st, Claims: st,
		Previewers: map[message.Platform]agentapi.Previewer{message.Telegram: pl},
		Config:     preview.Config{Interval: time.Second, MaxUpdates: 2},
		Now:        func() time.Time { return now },
	}
	post := func(turnID, text string) (int, agentapi.PreviewAnswer, string) {
		b, _ := json.Marshal(map[string]string{"turn_id": turnID, "text": text})
		req := httptest.NewRequest(http.MethodPost, "/reply/preview", bytes.NewReader(b))
		standardwebhooks.SetHeaders(req.Header, secret, "msg_"+text, now, b)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var ans agentapi.PreviewAnswer
		_ = json.Unmarshal(w.Body.Bytes(), &ans)
		return w.Code, ans, w.Body.String()
	}
	th := message.Thread{Platform: message.Telegram, Account: "1", Chat: "-100"}
	open := func(turnID string, base message.Preview) {
		t.Helper()
		// The turn opens its record with its message's receipt handle.
		if _, _, err := st.OpenAwait(t.Context(), store.Await{TurnID: turnID, Thread: th, EventKey: "evt#" + turnID, ClaimKey: "k", ClaimOwner: "o", Handle: "rh-" + turnID,
			Deadline: now.Add(time.Hour), CreatedAt: now, ExpiresAt: now.Add(2 * time.Hour), Preview: base}); err != nil {
			t.Fatal(err)
		}
	}
	turn, bare, early := strings.Repeat("a", 32), strings.Repeat("b", 32), strings.Repeat("c", 32)
	open(turn, message.Preview{Thread: th, Key: turn, ReplyTo: "9"})
	open(bare, message.Preview{})

	if code, ans, body := post(turn, "one"); code != http.StatusOK || !ans.Shown || ans.Updates != 1 {
		t.Fatalf("first preview: %d %s", code, body)
	}
	if pv, err := st.GetPreview(t.Context(), turn, now); err != nil || pv.MessageID != "pv1" || pv.ReplyTo != "9" {
		t.Fatalf("the preview's record: %+v, %v; want its message, where the turn said", pv, err)
	}
	now = now.Add(time.Second) // the platform's 3 s win over the configured 1 s
	if code, ans, body := post(turn, "two"); code != http.StatusOK || ans.Shown || ans.Reason != "throttled" || ans.RetryAfterMS != 2000 {
		t.Fatalf("inside the platform's interval: %d %s", code, body)
	}
	now = now.Add(2 * time.Second)
	pl.fail = &message.SendError{Class: message.FailRateLimit, RetryAfter: 7 * time.Second}
	if code, ans, body := post(turn, "three"); code != http.StatusOK || ans.Shown || ans.Reason != "rate_limited" || ans.RetryAfterMS != 7000 || ans.Updates != 2 {
		t.Fatalf("the platform's 429: %d %s", code, body)
	}
	now = now.Add(3 * time.Second)
	if code, ans, body := post(turn, "four"); code != http.StatusOK || ans.Shown || ans.Reason != "max_updates" {
		t.Fatalf("past the cap: %d %s", code, body)
	}
	if code, ans, body := post(bare, "x"); code != http.StatusOK || ans.Shown || ans.Reason != "unsupported" {
		t.Fatalf("a turn with no preview base: %d %s", code, body)
	}
	if _, err := st.Claim(t.Context(), store.IntentKey(early), store.ClaimSpec{Owner: "o", Now: now, Lease: time.Minute, TTL: time.Hour, Thread: th, Origin: "evt#c"}); err != nil {
		t.Fatal(err)
	}
	if code, ans, body := post(early, "x"); code != http.StatusOK || ans.Shown || ans.Reason != "early" {
		t.Fatalf("before the 202 was read: %d %s", code, body)
	}
	if code, _, body := post(strings.Repeat("d", 32), "x"); code != http.StatusNotFound {
		t.Fatalf("an unknown turn: %d %s", code, body)
	}
	if _, err := st.FinishAwait(t.Context(), turn, store.AwaitPost{ID: "p", ContentType: "text/plain", Body: []byte("done"), At: now}, now); err != nil {
		t.Fatal(err)
	}
	if code, _, body := post(turn, "five"); code != http.StatusConflict || !strings.Contains(body, "answered") {
		t.Fatalf("after the final: %d %s, want 409 answered", code, body)
	}
	if len(pl.shown) != 1 {
		t.Fatalf("shown %q: want only the first", pl.shown)
	}

	// A new preview message that cannot be recorded is deleted at once.
	h.Previews = unrecorded{st}
	lost := strings.Repeat("e", 32)
	open(lost, message.Preview{Thread: th, Key: lost})
	if code, ans, body := post(lost, "x"); code != http.StatusOK || ans.Shown || ans.Reason != "failed" {
		t.Fatalf("an unrecorded preview: %d %s", code, body)
	}
	if len(pl.cleared) != 1 || pl.cleared[0] != "pv1" {
		t.Fatalf("cleared %q: want the unrecorded message deleted", pl.cleared)
	}
}

// claimsDown answers every claim read with an error that is not the
// claim's absence (a throttled or unreachable table).
type claimsDown struct{}

func (claimsDown) GetClaim(context.Context, string, time.Time) (store.Claim, error) {
	return store.Claim{}, errors.New("table unavailable")
}

// TestPreviewHandlerUnknownIsNotAbsent: a preview for a turn whose state
// cannot be read is answered 503 (try again), never 404 (which ends the
// agent's previews); a record an early sequential post opened, which the
// turn has not given a preview base yet, takes no previews (409 posted,
// as after any first post), not "unsupported". Neither shows anything.
func TestPreviewHandlerUnknownIsNotAbsent(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	secret, _ := standardwebhooks.ParseSecret("parley-agent-test-secret")
	pl := &stubPreviewer{}
	h := &agentapi.PreviewHandler{
		Verifier: standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{secret}},
		Awaits:   st, Previews: st, Claims: claimsDown{},
		Previewers: map[message.Platform]agentapi.Previewer{message.Telegram: pl},
		Now:        func() time.Time { return t0 },
	}
	post := func(turnID string) (int, agentapi.PreviewAnswer, string) {
		b, _ := json.Marshal(map[string]string{"turn_id": turnID, "text": "so far"})
		req := httptest.NewRequest(http.MethodPost, "/reply/preview", bytes.NewReader(b))
		standardwebhooks.SetHeaders(req.Header, secret, "msg_"+turnID, t0, b)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var ans agentapi.PreviewAnswer
		_ = json.Unmarshal(w.Body.Bytes(), &ans)
		return w.Code, ans, w.Body.String()
	}
	if code, _, body := post(strings.Repeat("f", 32)); code != http.StatusServiceUnavailable {
		t.Fatalf("the claim unreadable: %d %s, want 503", code, body)
	}
	// What the reply function opens for a sequential post that came before
	// the turn read the 202: no receipt handle, no preview base.
	th := message.Thread{Platform: message.Telegram, Account: "1", Chat: "-100"}
	early := strings.Repeat("9", 32)
	if _, _, err := st.OpenAwait(t.Context(), store.Await{TurnID: early, Thread: th, EventKey: "evt#9", ClaimKey: store.IntentKey(early), ClaimOwner: "o",
		Deadline: t0.Add(time.Hour), CreatedAt: t0, ExpiresAt: t0.Add(2 * time.Hour), State: store.AwaitOpen, Posts: map[string]int{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddAwaitPost(t.Context(), early, "msg_a", 1, 0, t0); err != nil {
		t.Fatal(err)
	}
	if code, _, body := post(early); code != http.StatusConflict || !strings.Contains(body, "posted") {
		t.Fatalf("a record an early sequential post opened: %d %s, want 409 posted", code, body)
	}
	// Adopted by the turn, with a preview base, it still takes none.
	if _, err := st.AdoptAwait(t.Context(), early, "o2", "rh", message.Preview{Thread: th, Key: early}); err != nil {
		t.Fatal(err)
	}
	if code, _, body := post(early); code != http.StatusConflict || !strings.Contains(body, "posted") {
		t.Fatalf("adopted after an early sequential post: %d %s, want 409 posted", code, body)
	}
	if len(pl.shown) != 0 {
		t.Fatalf("shown %q", pl.shown)
	}
}
