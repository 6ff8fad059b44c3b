package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/questions"
	"github.com/parleyhq/parley/shared/store"
)

// requestSchema describes, for agent authors, the body Call sends. These
// tests hold it to the producer in both directions.
const requestSchema = "../../docs/schema/parley.turn.v1.json"

// schemaTurns are turn requests of every shape the turn function builds.
func schemaTurns() map[string]agent.TurnRequest {
	at := time.Date(2026, 3, 14, 9, 26, 53, 500_000_000, time.UTC)
	tg := message.Thread{Platform: message.Telegram, Account: "7312345678", Chat: "123456789"}
	slack := message.Thread{Platform: message.Slack, Account: "T0123", Chat: "C0456", Thread: "1773480414.000100"}
	line := message.Thread{Platform: message.LINE, Account: "U1bot", Chat: "C9group"}
	req := func(id string, ev message.Event, a *agent.Answer) agent.TurnRequest {
		return agent.TurnRequest{TurnID: id, ThreadKey: ev.Thread.Key(), SessionKey: ev.Thread.Key(), Event: ev, Answer: a}
	}
	question := store.Question{
		Thread: tg, ID: "8c1e0f2a9b7d4e6f8a0b1c2d3e4f5a6b", IntentID: "8c1e0f2a9b7d4e6f8a0b1c2d3e4f5a6b", UnitID: "ask#1",
		State: store.QuestionCancelled, Reason: questions.ReasonExpired,
		Form: message.Question{Message: "Which seat?", Fields: []message.Field{{ID: "q0", Key: "seat", Kind: message.FieldText}}},
	}
	return map[string]agent.TurnRequest{
		"PrivateMessage": req("4f9c2a7be1d04c3a9a51e2d8c7b60f13", message.Event{
			Platform: message.Telegram, Account: tg.Account, EventID: "918273645", Kind: message.KindMessage, Thread: tg,
			Sender: message.Sender{ID: "123456789", Name: "Ada Lovelace"}, Text: "when does my flight leave?",
			MessageID: "4242", ReplyTo: "4241", ChatType: message.ChatPrivate, Time: at,
		}, nil),
		"ProactiveWithData": req("1b2c", message.Event{
			Platform: message.Events, Account: "alerts", EventID: "evt-77", Kind: message.KindProactive, Thread: tg,
			Sender: message.Sender{ID: "alerts", Name: "alerts"}, Time: at, Owner: "123456789",
			Data: map[string]any{"alert": "disk full", "value": 97.5, "tags": []any{"prod", "db"}, "host": map[string]any{"name": "db1", "up": true}},
		}, nil),
		"AnswerWithContent": req("2c3d", message.Event{
			Platform: message.Telegram, Account: tg.Account, EventID: "cb:5551", Kind: message.KindAnswer, Thread: tg,
			Sender: message.Sender{ID: "123456789", Name: "Ada Lovelace"}, ChatType: message.ChatPrivate, Time: at,
			Press: &message.Press{Data: "k3x:0:1", MessageID: "4250", AckID: "5551"},
		}, &agent.Answer{QuestionID: "8c1e0f2a9b7d4e6f8a0b1c2d3e4f5a6b", Action: agent.AnswerAccept,
			Content: map[string]any{"seat": "12C", "extras": []any{"meal", "wifi"}, "note": "aisle side please", "bags": 2.0, "insurance": false}}),
		"FreeTextAnswer": req("3d4e", message.Event{
			Platform: message.Telegram, Account: tg.Account, EventID: "918273700", Kind: message.KindMessage, Thread: tg,
			Sender: message.Sender{ID: "123456789"}, Text: "aisle side please", MessageID: "4260", ChatType: message.ChatPrivate, Time: at,
		}, &agent.Answer{QuestionID: "8c1e0f2a9b7d4e6f8a0b1c2d3e4f5a6b", Action: agent.AnswerAccept, Content: map[string]any{"note": "aisle side please"}}),
		"CancelFromParley": req("4e5f", questions.CancelEvent(question, at),
			&agent.Answer{QuestionID: question.ID, Action: agent.AnswerCancel}),
		"GroupMessageInThread": req("5f60", message.Event{
			Platform: message.Slack, Account: slack.Account, EventID: "C0456:1773480500.000200", Kind: message.KindMessage, Thread: slack,
			Sender: message.Sender{ID: "U0BOT", Name: "deploybot", IsBot: true}, Text: "deploy finished", MessageID: "1773480500.000200",
			ChatType: message.ChatGroup, Time: at,
		}, nil),
		"ContextAndReaction": func() agent.TurnRequest {
			r := req("7182", message.Event{
				Platform: message.Telegram, Account: tg.Account, EventID: "918273800", Kind: message.KindReaction, Thread: tg,
				Sender: message.Sender{ID: "123456789"}, ChatType: message.ChatPrivate, Time: at,
				Reaction: &message.Reaction{MessageID: "4251", Emoji: "👍"},
				Quote:    &message.Quote{MessageID: "4251", Text: "your flight moved", Parley: true, TurnID: "4f9c2a7be1d04c3a9a51e2d8c7b60f13"},
			}, nil)
			r.History = []history.Entry{
				{ID: "evt#telegram#7312345678#918273645", Role: history.RolePerson, Kind: history.KindMessage, Text: "when does my flight leave?",
					Sender: &message.Sender{ID: "123456789", Name: "Ada Lovelace"}, MessageIDs: []string{"4242"}, Time: at},
				{ID: "4f9c2a7be1d04c3a9a51e2d8c7b60f13#b1#1", Role: history.RoleAgent, Kind: history.KindBubble, Text: "your flight moved",
					MessageIDs: []string{"4251"}, TurnID: "4f9c2a7be1d04c3a9a51e2d8c7b60f13", Time: at.Add(time.Second)},
			}
			r.Superseded = &agent.Superseded{TurnID: "4f9c2a7be1d04c3a9a51e2d8c7b60f13", Bubbles: []agent.SupersededBubble{{ID: "b2", Text: "gate B12"}}}
			return r
		}(),
		"Collected": func() agent.TurnRequest {
			first := message.Event{Platform: message.Telegram, Account: tg.Account, EventID: "1", Kind: message.KindMessage, Thread: tg,
				Sender: message.Sender{ID: "123456789"}, Text: "wait", MessageID: "1", ChatType: message.ChatPrivate, Time: at}
			last := first
			last.EventID, last.Text, last.MessageID = "2", "one more thing", "2"
			r := req("8293", last, nil)
			r.Events = []message.Event{first, last}
			return r
		}(),
		"ReplyContext": req("6071", message.Event{
			Platform: message.LINE, Account: line.Account, EventID: "01HX", Kind: message.KindMessage, Thread: line,
			Sender: message.Sender{ID: "U2user"}, Text: "hi", MessageID: "5000", ChatType: message.ChatGroup, Time: at,
			ReplyContext: &message.ReplyContext{Token: "reply-token", Until: at.Add(time.Minute)}, QuoteToken: "q-token-5000",
		}, nil),
	}
}

// sentBody is the body Call POSTs for req.
func sentBody(t *testing.T, req agent.TurnRequest) []byte {
	t.Helper()
	var body []byte
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusNoContent)
	})
	if _, err := c.Call(context.Background(), req); err != nil {
		t.Fatalf("Call: %v", err)
	}
	return body
}

func compileRequestSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile(requestSchema)
	if err != nil {
		t.Fatalf("compile %s: %v", requestSchema, err)
	}
	return sch
}

func validate(t *testing.T, sch *jsonschema.Schema, body []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("does not validate against %s: %v\n%s", requestSchema, err, body)
	}
}

// decodeStrict decodes a turn request refusing members the Go types lack.
func decodeStrict(t *testing.T, body []byte) agent.TurnRequest {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var got agent.TurnRequest
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("does not decode into agent.TurnRequest: %v", err)
	}
	return got
}

// notSent are fields of the Go types Call never sends.
var notSent = map[string]bool{"request.event.reply_context": true, "request.event.send": true, "request.event.quote_token": true}

// TestRequestSchemaAgreesWithProducer: what Call sends validates, and
// decodes back, with the same Go types, to what was sent.
func TestRequestSchemaAgreesWithProducer(t *testing.T) {
	sch := compileRequestSchema(t)
	for name, req := range schemaTurns() {
		t.Run(name, func(t *testing.T) {
			body := sentBody(t, req)
			validate(t, sch, body)
			req.Version = agent.Version // Call fills it
			if req.Event.ReplyContext != nil {
				if bytes.Contains(body, []byte(req.Event.ReplyContext.Token)) {
					t.Fatalf("the platform's reply token reached the agent: %s", body)
				}
				req.Event.ReplyContext = nil // Call never sends it
			}
			if req.Event.QuoteToken != "" {
				if bytes.Contains(body, []byte(req.Event.QuoteToken)) {
					t.Fatalf("the platform's quote token reached the agent: %s", body)
				}
				req.Event.QuoteToken = ""
			}
			got := decodeStrict(t, body)
			if !reflect.DeepEqual(got, req) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, req)
			}
			again, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, body) {
				t.Errorf("re-encoded:\n%s\nsent:\n%s", again, body)
			}
		})
	}
}

// TestRequestSchemaDocExample: the request body of docs/agent-protocol.md
// validates and decodes with the Go types, losing nothing.
func TestRequestSchemaDocExample(t *testing.T) {
	sch := compileRequestSchema(t)
	var n int
	for _, block := range jsonBlocks(t, "../../docs/agent-protocol.md") {
		if strings.Contains(block, "…") || !strings.Contains(block, `"version"`) {
			continue // a fragment, or not a request
		}
		n++
		body := []byte(block)
		validate(t, sch, body)
		again, err := json.Marshal(decodeStrict(t, body))
		if err != nil {
			t.Fatal(err)
		}
		var want, got any
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(again, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the example does not survive the Go types:\n got %s\nwant %s", again, body)
		}
	}
	if n == 0 {
		t.Fatal("no request example found in docs/agent-protocol.md")
	}
}

func jsonBlocks(t *testing.T, doc string) []string {
	t.Helper()
	f, err := os.Open(doc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	var cur *strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```json":
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRequestSchemaMatchesGoTypes walks TurnRequest and the schema together:
// every JSON member of the Go types is a schema property of the same JSON
// type and vice versa, and the schema requires exactly the members encoded
// without omitempty. A field added to TurnRequest or message.Event fails
// here until the schema (and docs) describe it.
func TestRequestSchemaMatchesGoTypes(t *testing.T) {
	raw, err := os.ReadFile(requestSchema)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	resolve := func(s map[string]any) map[string]any {
		for {
			ref, ok := s["$ref"].(string)
			if !ok {
				return s
			}
			name, ok := strings.CutPrefix(ref, "#/$defs/")
			if !ok {
				t.Fatalf("reference %q is not local", ref)
			}
			s = root["$defs"].(map[string]any)[name].(map[string]any)
		}
	}
	timeType := reflect.TypeFor[time.Time]()
	jsonType := func(rt reflect.Type) string {
		switch {
		case rt == timeType:
			return "string"
		case rt.Kind() == reflect.String:
			return "string"
		case rt.Kind() == reflect.Bool:
			return "boolean"
		case rt.Kind() == reflect.Slice:
			return "array"
		case rt.Kind() == reflect.Map, rt.Kind() == reflect.Struct:
			return "object"
		}
		t.Fatalf("no JSON type for %s", rt)
		return ""
	}
	var walk func(path string, rt reflect.Type, s map[string]any)
	walk = func(path string, rt reflect.Type, s map[string]any) {
		s = resolve(s)
		if got, want := s["type"], jsonType(rt); got != want {
			t.Errorf("%s: schema type %v, Go %s encodes as %s", path, got, rt, want)
		}
		if rt.Kind() != reflect.Struct || rt == timeType {
			return
		}
		props, _ := s["properties"].(map[string]any)
		var required []string
		for _, r := range s["required"].([]any) {
			required = append(required, r.(string))
		}
		seen := map[string]bool{}
		for f := range rt.Fields() {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			seen[name] = true
			p := path + "." + name
			if notSent[p] {
				if _, ok := props[name]; ok {
					t.Errorf("%s: never sent, but in the schema", p)
				}
				continue
			}
			sub, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("%s: sent by shared/agent, missing from the schema", p)
				continue
			}
			omit := slices.Contains(strings.Split(opts, ","), "omitempty")
			if req := slices.Contains(required, name); req == omit {
				t.Errorf("%s: schema required=%v, but Go omitempty=%v", p, req, omit)
			}
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			walk(p, ft, sub)
		}
		for name := range props {
			if !seen[name] {
				t.Errorf("%s.%s: in the schema, not in %s", path, name, rt)
			}
		}
	}
	walk("request", reflect.TypeFor[agent.TurnRequest](), root)
}
