package agentapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// TestEraseHistory: a signed erase forgets the thread's transcript and
// nothing else; an unsigned, stale, malformed or foreign one is refused
// with its reason and erases nothing; erasing again answers the same.
func TestEraseHistory(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	secret, _ := standardwebhooks.ParseSecret("parley-agent-test-secret")
	h := &agentapi.EraseHandler{
		Verifier: standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{secret}}, Store: st,
		Sends: func(p message.Platform) bool { return p == message.Telegram },
		Now:   func() time.Time { return t0 },
	}
	const ada, grace = "telegram:1:42", "telegram:1:43"
	for _, k := range []string{ada, grace} {
		rec := store.History{ThreadKey: k, Entries: []history.Entry{{ID: "e1", Role: history.RolePerson, Kind: history.KindMessage, Text: "secret plans", Time: t0}}}
		if err := st.PutHistory(t.Context(), rec, t0, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	kept := func(k string) bool {
		got, err := st.GetHistory(t.Context(), k, t0)
		if err != nil {
			t.Fatal(err)
		}
		return got.Version > 0
	}
	call := func(body string, sign bool, at time.Time) (int, string) {
		req := httptest.NewRequest(http.MethodPost, "/history/erase", bytes.NewReader([]byte(body)))
		if sign {
			standardwebhooks.SetHeaders(req.Header, secret, "msg_erase", at, []byte(body))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	for _, c := range []struct {
		name, body string
		sign       bool
		at         time.Time
		status     int
		code       string
	}{
		{"Unsigned", `{"thread_key":"` + ada + `"}`, false, t0, http.StatusUnauthorized, "unauthorized"},
		{"Stale", `{"thread_key":"` + ada + `"}`, true, t0.Add(-time.Hour), http.StatusUnauthorized, "unauthorized"},
		{"UnknownMember", `{"thread_key":"` + ada + `","all":true}`, true, t0, http.StatusBadRequest, "malformed"},
		{"Pattern", `{"thread_key":"telegram:1:*"}`, true, t0, http.StatusBadRequest, "malformed"},
		{"NoKey", `{}`, true, t0, http.StatusBadRequest, "malformed"},
		{"OtherPlatform", `{"thread_key":"slack:T1:C1"}`, true, t0, http.StatusForbidden, "forbidden"},
		{"TooLarge", `{"thread_key":"` + strings.Repeat("x", agentapi.MaxEraseBytes) + `"}`, true, t0, http.StatusRequestEntityTooLarge, "too_large"},
	} {
		code, body := call(c.body, c.sign, c.at)
		if code != c.status || !strings.Contains(body, `"error":"`+c.code+`"`) {
			t.Errorf("%s: %d %s, want %d %s", c.name, code, body, c.status, c.code)
		}
		if !kept(ada) {
			t.Fatalf("%s erased the history", c.name)
		}
	}
	for range 2 {
		if code, body := call(`{"thread_key":"`+ada+`"}`, true, t0); code != http.StatusOK || body != `{"thread_key":"`+ada+`","erased":true}`+"\n" {
			t.Fatalf("erase: %d %s", code, body)
		}
	}
	if kept(ada) || !kept(grace) {
		t.Fatalf("after erasing %s: it is kept %v, %s kept %v", ada, kept(ada), grace, kept(grace))
	}
}

func FuzzParseErase(f *testing.F) {
	for _, s := range []string{`{"thread_key":"telegram:1:42"}`, `{"thread_key":"slack:T1:C1:1700000000.000100"}`, `{}`, `{"thread_key":"a:b:*"}`, `[]`, `{"thread_key":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := agentapi.ParseErase(body)
		if err != nil {
			return
		}
		if e.ThreadKey == "" || strings.HasSuffix(e.ThreadKey, ":*") || strings.Count(e.ThreadKey, ":") < 2 {
			t.Fatalf("accepted %q", e.ThreadKey)
		}
	})
}
