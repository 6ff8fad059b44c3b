package agentapi_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/parleyhq/parley/shared/agentapi"
)

const previewFixtures = "../../docs/fixtures/preview"

// TestPreviewSchemaAgreesWithParser: docs/schema/parley.preview.v1.json
// accepts exactly the bodies ParsePreview accepts: the fixtures (ok-* good,
// bad-* refused) and the edges the parser decides on.
func TestPreviewSchemaAgreesWithParser(t *testing.T) {
	t.Parallel()
	sch, err := jsonschema.NewCompiler().Compile("../../docs/schema/parley.preview.v1.json")
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, body []byte) (bool, error) {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(body)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, perr := agentapi.ParsePreview(body)
		if schemaOK := sch.Validate(v) == nil; schemaOK != (perr == nil) {
			t.Errorf("%s: schema accepts=%v, parser accepts=%v (%v): %s", name, schemaOK, perr == nil, perr, body)
		}
		return perr == nil, perr
	}
	files, err := filepath.Glob(filepath.Join(previewFixtures, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		ok, perr := check(name, body)
		if want := strings.HasPrefix(name, "ok-"); ok != want {
			t.Errorf("%s: accepted=%v (%v), want %v", name, ok, perr, want)
		}
	}
	for _, body := range []string{
		`{"turn_id":"` + id + `","text":" x "}`,
		`{"turn_id":"` + id + `","text":""}`,
		`{"turn_id":"` + id + `","text":"\t\r\f"}`,
		`{"turn_id":"` + id + `","text":"\u00a0"}`,
		`{"turn_id":"` + id + `","status":"` + strings.Repeat("é", 200) + `"}`,
		`{"turn_id":"` + id + `","status":"` + strings.Repeat("é", 201) + `"}`,
		`{"turn_id":"` + id + `","status":"a\rb"}`,
		`{"turn_id":"` + id + `","status":" "}`,
		`{"turn_id":"` + id + `","text":"x","status":""}`,
		`{"turn_id":"` + id + `","text":3}`,
		`{"turn_id":"` + id + `","text":null}`,
		`{"text":"x"}`,
		`[]`,
	} {
		check(body, []byte(body))
	}
}

// FuzzParsePreview: a POST /reply/preview body never panics the parser,
// and what it accepts has a turn id, some text or status, and a status of
// one bounded line. Seeds: testdata/fuzz/FuzzParsePreview.
func FuzzParsePreview(f *testing.F) {
	f.Add([]byte(`{"turn_id":"0123456789abcdef0123456789abcdef","text":"so far","status":"reading"}`))
	f.Add([]byte(`{"turn_id":"0123456789abcdef0123456789abcdef","status":"a\nb"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := agentapi.ParsePreview(body)
		if err != nil {
			return
		}
		if len(p.TurnID) != 32 || p.Text == "" && p.Status == "" ||
			strings.ContainsAny(p.Status, "\r\n") || utf8.RuneCountInString(p.Status) > agentapi.MaxPreviewStatus {
			t.Fatalf("accepted %q as %+v", body, p)
		}
	})
}
