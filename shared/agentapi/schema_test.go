package agentapi_test

import (
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/parleyhq/parley/shared/agentapi"
)

// TestSchemasAgreeWithParsers: docs/schema's reply and send schemas accept
// exactly the bodies ParsePost and ParseSend accept, for every shape the
// parsers decide on.
func TestSchemasAgreeWithParsers(t *testing.T) {
	t.Parallel()
	env := `{"schema":"openab.turn.v1","messages":[{"id":"b1","text":"hi"}]}`
	cases := []struct {
		schema string
		parse  func([]byte) error
		bodies []string
	}{
		{"../../docs/schema/parley.reply.v1.json", func(b []byte) error { _, err := agentapi.ParsePost(b); return err }, []string{
			`{"turn_id":"` + id + `","envelope":` + env + `}`,
			`{"turn_id":"` + id + `","text":"hi"}`,
			`{"turn_id":"` + id + `","text":"on it","final":false}`,
			`{"turn_id":"` + id + `","final":true}`,
			`{"turn_id":"` + id + `"}`,
			`{"turn_id":"` + id + `","final":false}`,
			`{"turn_id":"` + id + `","text":"hi","envelope":` + env + `}`,
			`{"turn_id":"` + id + `","text":""}`,
			`{"turn_id":"ABC","text":"hi"}`,
			`{"text":"hi"}`,
			`{"turn_id":"` + id + `","text":"hi","replaced":"b1"}`,
			`{"turn_id":"` + id + `","text":"hi","replace":"b1"}`,
			`{"turn_id":"` + id + `","envelope":"{}"}`,
			`{"turn_id":"` + id + `","final":"no"}`,
			`{"turn_id":"` + id + `","final":true,"replace":"b1"}`,
			`{"turn_id":"` + id + `","text":"x","replace":"b#1"}`,
			`{"turn_id":"` + id + `","text":"x","replace":""}`,
		}},
		{"../../docs/schema/parley.send.v1.json", func(b []byte) error { _, err := agentapi.ParseSend(b); return err }, []string{
			`{"thread_key":"telegram:1:2","idempotency_key":"k-1","text":"hi"}`,
			`{"thread_key":"telegram:1:2","idempotency_key":"k","envelope":` + env + `,"relation":"broadcast","triage":true}`,
			`{"thread_key":"telegram:1:2","idempotency_key":"k"}`,
			`{"thread_key":"telegram:1:2","idempotency_key":"k","text":"hi","envelope":` + env + `}`,
			`{"thread_key":"","idempotency_key":"k","text":"hi"}`,
			`{"thread_key":"telegram:1:2","idempotency_key":"a b","text":"hi"}`,
			`{"thread_key":"telegram:1:2","idempotency_key":"` + strings.Repeat("k", 129) + `","text":"hi"}`,
			`{"thread_key":"telegram:1:2","idempotency_key":"k","text":"hi","relation":"spam"}`,
			`{"thread_key":"telegram:1:2","idempotency_key":"k","text":"hi","to":"x"}`,
			`{"idempotency_key":"k","text":"hi"}`,
			`{"thread_key":"telegram:1:2","idempotency_key":"k","text":"hi","owner":"42"}`,
			`{"thread_key":"telegram:1:2","idempotency_key":"k","text":"hi","owner":""}`,
			`{"thread_key":"telegram:1:2","idempotency_key":"k","text":"hi","owner":"a b"}`,
			`{"thread_key":"telegram:1:2","idempotency_key":"k","text":"hi","owner":"` + strings.Repeat("u", 65) + `"}`,
			`{"thread_key":"telegram:1:2","idempotency_key":"k","text":"hi","owner":42}`,
		}},
	}
	for _, tc := range cases {
		sch, err := jsonschema.NewCompiler().Compile(tc.schema)
		if err != nil {
			t.Fatalf("compile %s: %v", tc.schema, err)
		}
		for _, body := range tc.bodies {
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			schemaOK := sch.Validate(v) == nil
			parseOK := tc.parse([]byte(body)) == nil
			if schemaOK != parseOK {
				t.Errorf("%s: schema accepts=%v, parser accepts=%v: %s", tc.schema, schemaOK, parseOK, body)
			}
		}
	}
}

// TestMediaSchemaAgreesWithTheHandler: docs/schema/parley.media.v1.json
// accepts exactly the POST /media bodies ParseUploadRequest accepts.
func TestMediaSchemaAgreesWithTheHandler(t *testing.T) {
	t.Parallel()
	sch, err := jsonschema.NewCompiler().Compile("../../docs/schema/parley.media.v1.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		`{"type":"image/png","size":10}`,
		`{"type":"application/vnd.ms-excel","size":1}`,
		`{"type":"audio/x-m4a","size":20971520}`,
		`{"type":"image/png","size":0}`,
		`{"type":"image/png","size":-3}`,
		`{"type":"image/png","size":1.5}`,
		`{"type":"image/png","size":"10"}`,
		`{"type":"image/png"}`,
		`{"size":10}`,
		`{"type":"Image/PNG","size":10}`,
		`{"type":"image/png; charset=x","size":10}`,
		`{"type":"image","size":10}`,
		`{"type":"/png","size":10}`,
		`{"type":"image/-png","size":10}`,
		`{"type":"image/png","size":10,"name":"a.png"}`,
		`[]`,
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_, perr := agentapi.ParseUploadRequest([]byte(body))
		if schemaOK := sch.Validate(v) == nil; schemaOK != (perr == nil) {
			t.Errorf("schema accepts=%v, parser accepts=%v (%v): %s", schemaOK, perr == nil, perr, body)
		}
	}
}
