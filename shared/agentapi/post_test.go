package agentapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/platform/events"
)

const id = "0123456789abcdef0123456789abcdef"

func TestParsePost(t *testing.T) {
	t.Parallel()
	ok := []struct {
		name, body, ctype, got string
	}{
		{"envelope", `{"turn_id":"` + id + `","envelope":{"schema":"openab.turn.v1","messages":[]}}`, "application/json", `{"schema":"openab.turn.v1","messages":[]}`},
		{"text", `{"turn_id":"` + id + `","text":"hi\nthere"}`, "text/plain; charset=utf-8", "hi\nthere"},
		{"final true", `{"turn_id":"` + id + `","text":"hi","final":true}`, "text/plain; charset=utf-8", "hi"},
		{"spaces", " {\"turn_id\":\"" + id + "\" , \"envelope\" : {\"schema\":\"x\"} }\n", "application/json", `{"schema":"x"}`},
		{"not final", `{"turn_id":"` + id + `","text":"on it","final":false}`, "text/plain; charset=utf-8", "on it"},
		{"final, nothing", `{"turn_id":"` + id + `","final":true}`, "", ""},
	}
	for _, tc := range ok {
		p, err := agentapi.ParsePost([]byte(tc.body))
		if err != nil || p.TurnID != id || p.ContentType != tc.ctype || string(p.Body) != tc.got {
			t.Errorf("%s: %+v, %v", tc.name, p, err)
		}
	}
	bad := map[string]string{
		"empty":              ``,
		"not an object":      `[]`,
		"no turn":            `{"text":"hi"}`,
		"short turn":         `{"turn_id":"abc","text":"hi"}`,
		"upper turn":         `{"turn_id":"` + strings.ToUpper(id) + `","text":"hi"}`,
		"both":               `{"turn_id":"` + id + `","text":"hi","envelope":{}}`,
		"not final, nothing": `{"turn_id":"` + id + `","final":false}`,
		"null envelope":      `{"turn_id":"` + id + `","envelope":null}`,
		"string env":         `{"turn_id":"` + id + `","envelope":"{}"}`,
		"empty text":         `{"turn_id":"` + id + `","text":""}`,
		"unknown field":      `{"turn_id":"` + id + `","text":"hi","replaced":"b1"}`,
		"replace, nothing":   `{"turn_id":"` + id + `","final":false,"replace":"b1"}`,
		"replace with #":     `{"turn_id":"` + id + `","text":"hi","replace":"b#1"}`,
		"trailing data":      `{"turn_id":"` + id + `","text":"hi"} {}`,
		"turn not a str":     `{"turn_id":1,"text":"hi"}`,
	}
	for name, body := range bad {
		if p, err := agentapi.ParsePost([]byte(body)); !errors.Is(err, agentapi.ErrBadPost) {
			t.Errorf("%s: %+v, %v; want ErrBadPost", name, p, err)
		}
	}
}

// FuzzParsePost: any body is parsed or refused with ErrBadPost, never a
// panic, and what is accepted is a well-formed post.
func FuzzParsePost(f *testing.F) {
	f.Add([]byte(`{"turn_id":"` + id + `","envelope":{"schema":"openab.turn.v1","messages":[{"id":"b1","text":"hi"}]}}`))
	f.Add([]byte(`{"turn_id":"` + id + `","text":"hi","final":true}`))
	f.Add([]byte(`{"turn_id":"` + id + `","envelope":null}`))
	f.Add([]byte(`{"turn_id":"` + id + `","text":"hi"} x`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := agentapi.ParsePost(body)
		if err != nil {
			if !errors.Is(err, agentapi.ErrBadPost) {
				t.Fatalf("error %v does not wrap ErrBadPost", err)
			}
			return
		}
		if len(p.TurnID) != 32 || (len(p.Body) == 0) != (p.ContentType == "") || (len(p.Body) == 0 && !p.Final) ||
			(p.ContentType != "" && p.ContentType != "application/json" && !strings.HasPrefix(p.ContentType, "text/plain")) {
			t.Fatalf("accepted a malformed post: %+v", p)
		}
		if p.ContentType == "application/json" && p.Body[0] != '{' {
			t.Fatalf("accepted a non-object envelope: %q", p.Body)
		}
	})
}

func TestParseSend(t *testing.T) {
	t.Parallel()
	s, err := agentapi.ParseSend([]byte(`{"thread_key":"telegram:1:2","idempotency_key":"k-1","text":"hi","relation":"system","triage":true}`))
	if err != nil || s.ThreadKey != "telegram:1:2" || s.IdempotencyKey != "k-1" || s.Relation != "system" || !s.Triage || string(s.Body) != "hi" {
		t.Fatalf("%+v, %v", s, err)
	}
	if s, err := agentapi.ParseSend([]byte(`{"thread_key":"t:1:2","idempotency_key":"k","envelope":{"schema":"openab.turn.v1"}}`)); err != nil || s.Relation != "followup" || s.ContentType != "application/json" {
		t.Fatalf("defaults: %+v, %v", s, err)
	}
	for name, body := range map[string]string{
		"no thread":    `{"idempotency_key":"k","text":"hi"}`,
		"no key":       `{"thread_key":"t:1:2","text":"hi"}`,
		"long key":     `{"thread_key":"t:1:2","idempotency_key":"` + strings.Repeat("k", 129) + `","text":"hi"}`,
		"key with sp":  `{"thread_key":"t:1:2","idempotency_key":"a b","text":"hi"}`,
		"relation":     `{"thread_key":"t:1:2","idempotency_key":"k","text":"hi","relation":"spam"}`,
		"no content":   `{"thread_key":"t:1:2","idempotency_key":"k"}`,
		"both":         `{"thread_key":"t:1:2","idempotency_key":"k","text":"hi","envelope":{}}`,
		"unknown":      `{"thread_key":"t:1:2","idempotency_key":"k","text":"hi","to":"x"}`,
		"triage a str": `{"thread_key":"t:1:2","idempotency_key":"k","text":"hi","triage":"yes"}`,
	} {
		if _, err := agentapi.ParseSend([]byte(body)); !errors.Is(err, agentapi.ErrBadPost) {
			t.Errorf("%s: %v, want ErrBadPost", name, err)
		}
	}
}

// FuzzParseSend: any body is parsed or refused with ErrBadPost, never a
// panic, and what is accepted names a thread, a key and content, and an
// owner that is none or a valid one.
func FuzzParseSend(f *testing.F) {
	f.Add([]byte(`{"thread_key":"telegram:1:2","idempotency_key":"k-1","text":"hi","relation":"system","triage":true}`))
	f.Add([]byte(`{"thread_key":"slack:T1:C1:1.2","idempotency_key":"k","envelope":{"schema":"openab.turn.v1","messages":[]}}`))
	f.Add([]byte(`{"thread_key":"","idempotency_key":"k","text":""}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := agentapi.ParseSend(body)
		if err != nil {
			if !errors.Is(err, agentapi.ErrBadPost) {
				t.Fatalf("error %v does not wrap ErrBadPost", err)
			}
			return
		}
		if s.ThreadKey == "" || s.IdempotencyKey == "" || len(s.Body) == 0 || s.Relation == "" {
			t.Fatalf("accepted an incomplete send: %+v", s)
		}
		if s.Owner != "" && !events.ValidOwner(s.Owner) {
			t.Fatalf("accepted owner %q", s.Owner)
		}
	})
}
