package envelope_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/envelope"
	"github.com/parleyhq/parley/shared/message"
)

// The JSON Schemas in docs/schema describe the wire formats for agent
// authors and LLM tool definitions. These tests hold them to the parser,
// the fixtures and the docs' examples, so none of them can drift.
const (
	schemaDir      = "../../docs/schema"
	envelopeSchema = schemaDir + "/openab.turn.v1.json"
	requestSchema  = schemaDir + "/parley.turn.v1.json"
	docFixtures    = "../../docs/fixtures"
	fuzzCorpus     = "testdata/fuzz"
)

func compileSchema(t *testing.T, loc string) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile(loc)
	if err != nil {
		t.Fatalf("compile %s: %v", loc, err)
	}
	return sch
}

// semanticRule is a parser rejection the envelope schema cannot express:
// for those, the schema may accept what the parser refuses.
type semanticRule struct {
	reason envelope.Reason
	// detail, when set, is the ParseError.Detail the rule is limited to
	// (a fixed phrase of the parser); path, when set, a substring of Path.
	detail, path string
	why          string
}

var semanticOnly = []semanticRule{
	{reason: envelope.ReasonDuplicateKey, why: "JSON Schema sees the decoded value, in which one of the two members has already won"},
	{reason: envelope.ReasonInvalidUnicode, why: "the JSON decoder replaces invalid UTF-8 and lone surrogates before the schema sees the value"},
	{reason: envelope.ReasonTooDeep, why: "the nesting bound (64) is the parser's; tool arguments are any object"},
	{reason: envelope.ReasonDuplicateID, why: "uniqueness of one member across array items (messages[].id) is not expressible"},
	{reason: envelope.ReasonNestedEnvelope, why: "envelope JSON inside a text is found by Parley's fragment detector, not by a pattern"},
	{reason: envelope.ReasonBadAsk, detail: "required names a property that does not exist", why: "a schema cannot tie required's values to the keys of properties"},
	{reason: envelope.ReasonBadAsk, detail: "option values must be unique", path: ".oneOf[", why: "uniqueness of const across titled options is not expressible (enum values are uniqueItems)"},
	{reason: envelope.ReasonBadAsk, detail: "option values must be unique", path: ".anyOf[", why: "uniqueness of const across titled options is not expressible (enum values are uniqueItems)"},
	{reason: envelope.ReasonBadAsk, detail: "option titles must be unique", path: ".oneOf", why: "uniqueness of title across titled options is not expressible (enumNames are uniqueItems)"},
	{reason: envelope.ReasonBadAsk, detail: "option titles must be unique", path: ".anyOf", why: "uniqueness of title across titled options is not expressible (enumNames are uniqueItems)"},
	{reason: envelope.ReasonBadAsk, detail: "enumNames must have one name per enum value", why: "a schema cannot tie one array's length to another's"},
	{reason: envelope.ReasonBadAsk, detail: "minLength is over maxLength", why: "comparing two members is not expressible"},
	{reason: envelope.ReasonBadAsk, detail: "minimum is over maximum", why: "comparing two members is not expressible"},
	{reason: envelope.ReasonBadAsk, detail: "minItems is over maxItems", why: "comparing two members is not expressible"},
	{reason: envelope.ReasonBadAsk, detail: "minItems is over the number of options", why: "comparing a member with an array's length is not expressible"},
	{reason: envelope.ReasonBadAsk, detail: "default is not one of the options", why: "a default depends on the field's own options"},
	{reason: envelope.ReasonBadAsk, detail: "default holds a value that is not an option", why: "a default depends on the field's own options"},
	{reason: envelope.ReasonBadMedia, detail: "duration_ms is for audio, voice and video", why: "tying a member to another's value needs if/then or dependentSchemas, outside the tool subset"},
	{reason: envelope.ReasonBadMedia, detail: "preview_url is for image and video", why: "tying a member to another's value needs if/then or dependentSchemas, outside the tool subset"},
}

func semanticReason(pe *envelope.ParseError) string {
	for _, r := range semanticOnly {
		if pe.Reason == r.reason && (r.detail == "" || pe.Detail == r.detail) && strings.Contains(pe.Path, r.path) {
			return r.why
		}
	}
	return ""
}

// overDefaults names the configurable limits env is over with the default
// Config. The schema carries these defaults as maxItems and maxLength.
func overDefaults(env *envelope.Envelope) []string {
	var over []string
	if len(env.Messages) > envelope.DefaultMaxBubbles {
		over = append(over, envelope.LimitMaxBubbles)
	}
	long := slices.ContainsFunc(env.Messages, func(b envelope.Bubble) bool {
		return utf8.RuneCountInString(b.Text) > envelope.DefaultMaxBubbleChars
	})
	if a := env.Next.Ask; a != nil && utf8.RuneCountInString(a.Message) > envelope.DefaultMaxBubbleChars {
		long = true
	}
	if long {
		over = append(over, envelope.LimitMaxBubbleChars)
	}
	return over
}

type sample struct {
	name string
	body []byte
}

// samples are every reply body the envelope tests know: the shared fixtures,
// the fuzz seed corpora, and the cases below, which cover form rules the
// fixtures do not.
func samples(t *testing.T) []sample {
	t.Helper()
	var out []sample
	entries, err := os.ReadDir(docFixtures)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "README.md" || e.Name() == "manifest.json" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(docFixtures, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sample{"fixtures/" + e.Name(), b})
	}
	corpora, err := os.ReadDir(fuzzCorpus)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range corpora {
		dir := filepath.Join(fuzzCorpus, c.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			out = append(out, sample{"fuzz/" + c.Name() + "/" + f.Name(), readCorpusFile(t, filepath.Join(dir, f.Name()))})
		}
	}
	for _, c := range nextCases {
		out = append(out, sample{"next/" + c.name, []byte(`{"schema": "openab.turn.v1", "messages": [{"id": "a", "text": "hi"}], "next": ` + c.next + `}`)})
	}
	for _, c := range formCases {
		out = append(out, sample{"form/" + c.name, []byte(`{"schema": "openab.turn.v1", "next": {"type": "ask", "request": {"message": "Q?", "requestedSchema": ` + c.form + `}}}`)})
	}
	return out
}

// readCorpusFile returns the first value of a "go test fuzz v1" file: a
// []byte or string literal.
func readCorpusFile(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	if len(lines) < 2 || lines[0] != "go test fuzz v1" {
		t.Fatalf("%s is not a fuzz corpus file", path)
	}
	v := strings.TrimSpace(lines[1])
	for _, prefix := range []string{"[]byte(", "string("} {
		if lit, ok := strings.CutPrefix(v, prefix); ok && strings.HasSuffix(lit, ")") {
			s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return []byte(s)
		}
	}
	t.Fatalf("%s: first value %.20q is not []byte or string", path, v)
	return nil
}

// nextCases are next objects around the rules of docs/envelope.md's next
// table that the fixtures do not reach.
var nextCases = []struct{ name, next string }{
	{"wait-empty", `{"type": "wait"}`},
	{"wait-integral-exponent", `{"type": "wait", "wait": {"seconds": 1e3}}`},
	{"wait-seconds-zero", `{"type": "wait", "wait": {"seconds": 0}}`},
	{"wait-seconds-over-a-day", `{"type": "wait", "wait": {"seconds": 86401}}`},
	{"wait-seconds-fraction", `{"type": "wait", "wait": {"seconds": 1.5}}`},
	{"wait-reason-long", `{"type": "wait", "wait": {"reason": "` + strings.Repeat("é", 501) + `"}}`},
	{"wait-unknown", `{"type": "wait", "wait": {"until": "noon"}}`},
	{"tool-no-arguments", `{"type": "tool", "tool": {"name": "a/b.c-d_e"}}`},
	{"tool-bad-name", `{"type": "tool", "tool": {"name": "calendar create"}}`},
	{"tool-long-name", `{"type": "tool", "tool": {"name": "` + strings.Repeat("t", 129) + `"}}`},
	{"tool-arguments-array", `{"type": "tool", "tool": {"name": "t", "arguments": [1]}}`},
	{"tool-missing", `{"type": "tool"}`},
	{"stop-extra", `{"type": "stop", "wait": {}}`},
	{"silent-extra", `{"type": "silent", "reason": "x"}`},
	{"type-number", `{"type": 1}`},
	{"no-type", `{}`},
	{"ask-blank-message", `{"type": "ask", "request": {"message": " \n\u3000", "requestedSchema": {"type": "object", "properties": {"b": {"type": "boolean"}}}}}`},
	{"ask-long-message", `{"type": "ask", "request": {"message": "` + strings.Repeat("q", 1201) + `", "requestedSchema": {"type": "object", "properties": {"b": {"type": "boolean"}}}}}`},
	{"ask-no-form", `{"type": "ask", "request": {"message": "Q?"}}`},
	{"ask-no-request", `{"type": "ask"}`},
}

// formCases are ask forms: valid ones of every shape, and one breaking each
// rule of docs/envelope.md's form section.
var formCases = []struct{ name, form string }{
	{"titled-select", `{"type": "object", "properties": {"s": {"type": "string", "title": "Seat", "description": "Pick one", "default": "a", "oneOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}}, "required": ["s"]}`},
	{"enum-select-names", `{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"c": {"type": "string", "enum": ["eco", "biz"], "enumNames": ["Economy", "Business"], "default": "eco"}}}`},
	{"multi-titled", `{"type": "object", "properties": {"m": {"type": "array", "items": {"anyOf": [{"const": "veg", "title": "Veg"}, {"const": "gf", "title": "GF"}]}, "minItems": 0, "maxItems": 2, "default": ["veg"]}}}`},
	{"multi-titled-typed", `{"type": "object", "properties": {"m": {"type": "array", "items": {"type": "string", "anyOf": [{"const": "veg", "title": "Veg"}]}}}}`},
	{"multi-enum", `{"type": "object", "properties": {"m": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}}`},
	{"text", `{"type": "object", "properties": {"t": {"type": "string", "minLength": 1, "maxLength": 200, "format": "email", "default": "a@b.c"}}}`},
	{"text-formats", `{"type": "object", "properties": {"u": {"type": "string", "format": "uri"}, "d": {"type": "string", "format": "date"}, "dt": {"type": "string", "format": "date-time"}}}`},
	{"twenty-fields", `{"type": "object", "properties": {` + fields(20) + `}}`},
	{"twenty-one-fields", `{"type": "object", "properties": {` + fields(21) + `}}`},
	{"twenty-six-options", `{"type": "object", "properties": {"c": {"type": "string", "enum": [` + values(26) + `]}}}`},
	{"number", `{"type": "object", "properties": {"n": {"type": "number", "minimum": -1.5, "maximum": 3, "default": 0.5}}}`},
	{"integer", `{"type": "object", "properties": {"i": {"type": "integer", "minimum": 0, "maximum": 3, "default": 2.0}}}`},
	{"boolean", `{"type": "object", "properties": {"b": {"type": "boolean", "default": false}}}`},
	{"no-properties", `{"type": "object", "properties": {}}`},
	{"type-not-object", `{"type": "array", "properties": {"b": {"type": "boolean"}}}`},
	{"blank-key", `{"type": "object", "properties": {" ": {"type": "boolean"}}}`},
	{"long-key", `{"type": "object", "properties": {"` + strings.Repeat("k", 65) + `": {"type": "boolean"}}}`},
	{"unknown-kind", `{"type": "object", "properties": {"x": {"type": "object"}}}`},
	{"required-twice", `{"type": "object", "properties": {"b": {"type": "boolean"}}, "required": ["b", "b"]}`},
	{"required-not-array", `{"type": "object", "properties": {"b": {"type": "boolean"}}, "required": "b"}`},
	{"enum-duplicate", `{"type": "object", "properties": {"c": {"type": "string", "enum": ["a", "a"]}}}`},
	{"enum-blank", `{"type": "object", "properties": {"c": {"type": "string", "enum": [" "]}}}`},
	{"enum-names-duplicate", `{"type": "object", "properties": {"c": {"type": "string", "enum": ["a", "b"], "enumNames": ["X", "X"]}}}`},
	{"enum-names-count", `{"type": "object", "properties": {"c": {"type": "string", "enum": ["a", "b"], "enumNames": ["X"]}}}`},
	{"titled-duplicate-value", `{"type": "object", "properties": {"s": {"type": "string", "oneOf": [{"const": "a", "title": "A"}, {"const": "a", "title": "B"}]}}}`},
	{"titled-no-title", `{"type": "object", "properties": {"s": {"type": "string", "oneOf": [{"const": "a"}]}}}`},
	{"oneOf-and-enum", `{"type": "object", "properties": {"s": {"type": "string", "enum": ["a"], "oneOf": [{"const": "a", "title": "A"}]}}}`},
	{"bad-format", `{"type": "object", "properties": {"t": {"type": "string", "format": "phone"}}}`},
	{"negative-length", `{"type": "object", "properties": {"t": {"type": "string", "minLength": -1}}}`},
	{"min-over-max", `{"type": "object", "properties": {"n": {"type": "number", "minimum": 5, "maximum": 1}}}`},
	{"integer-default-fraction", `{"type": "object", "properties": {"i": {"type": "integer", "default": 1.5}}}`},
	{"boolean-default-string", `{"type": "object", "properties": {"b": {"type": "boolean", "default": "yes"}}}`},
	{"blank-title", `{"type": "object", "properties": {"b": {"type": "boolean", "title": "  "}}}`},
	{"multi-no-items", `{"type": "object", "properties": {"m": {"type": "array"}}}`},
	{"multi-items-number", `{"type": "object", "properties": {"m": {"type": "array", "items": {"type": "number", "enum": ["a"]}}}}`},
	{"multi-default-repeats", `{"type": "object", "properties": {"m": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["a", "a"]}}}`},
	{"multi-min-over-options", `{"type": "object", "properties": {"m": {"type": "array", "items": {"type": "string", "enum": ["a"]}, "minItems": 2}}}`},
	{"select-default-not-option", `{"type": "object", "properties": {"c": {"type": "string", "enum": ["a"], "default": "z"}}}`},
}

func fields(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"f` + strconv.Itoa(i) + `": {"type": "boolean"}`)
	}
	return b.String()
}

func values(n int) string {
	v := make([]string, n)
	for i := range v {
		v[i] = `"o` + strconv.Itoa(i) + `"`
	}
	return strings.Join(v, ", ")
}

// decodeInstance reads body as the JSON value a schema validates. A UTF-8
// BOM, which Parse allows, is transport and not part of the value.
func decodeInstance(body []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))))
}

// TestEnvelopeSchemaAgreesWithParser: every reply the parser accepts within
// the default limits validates; every reply the parser rejects, or that is
// over a default limit, is rejected by the schema, unless the parser's rule
// is one semanticOnly lists.
func TestEnvelopeSchemaAgreesWithParser(t *testing.T) {
	sch := compileSchema(t, envelopeSchema)
	var accepted, rejected, notJSON, skipped int
	for _, s := range samples(t) {
		t.Run(s.name, func(t *testing.T) {
			env, perr := envelope.Parse(s.body)
			inst, jerr := decodeInstance(s.body)
			if perr == nil {
				if jerr != nil {
					t.Fatalf("the parser accepts a body that is not JSON: %v", jerr)
				}
				verr := sch.Validate(inst)
				over := overDefaults(env)
				checkLimitsMirrorBuild(t, s.body, env, over)
				switch {
				case len(over) == 0 && verr != nil:
					t.Errorf("the parser accepts it, the schema rejects it: %v", verr)
				case len(over) > 0 && verr == nil:
					t.Errorf("over the default %v, yet the schema accepts it", over)
				case len(over) == 0:
					accepted++
				default:
					rejected++
				}
				return
			}
			var pe *envelope.ParseError
			if !errors.As(perr, &pe) {
				t.Fatalf("Parse error %T is not a ParseError", perr)
			}
			if jerr != nil {
				notJSON++ // the schema never sees it: rejected before validation
				return
			}
			verr := sch.Validate(inst)
			if why := semanticReason(pe); why != "" {
				skipped++
				t.Logf("parser: %v; schema rejects: %v; not asserted: %s", pe, verr != nil, why)
				return
			}
			if verr == nil {
				t.Errorf("the parser rejects it (%v), the schema accepts it", pe)
			}
			rejected++
		})
	}
	t.Logf("%d accepted, %d rejected by the schema, %d not JSON, %d semantic only", accepted, rejected, notJSON, skipped)
	if accepted == 0 || rejected == 0 {
		t.Errorf("want both accepted and rejected samples, got %d and %d", accepted, rejected)
	}
}

// checkLimitsMirrorBuild makes sure overDefaults says what Build says with
// the default Config (which does not apply limits to a silent envelope).
func checkLimitsMirrorBuild(t *testing.T, body []byte, env *envelope.Envelope, over []string) {
	t.Helper()
	if env.Next.Type == envelope.NextSilent {
		return
	}
	_, err := envelope.Build(envelope.Reply{Body: body, ContentType: "application/json"}, envelope.Config{}, message.Capabilities{})
	var le *envelope.LimitError
	got := errors.As(err, &le)
	if err != nil && !got {
		t.Fatalf("Build: %v", err)
	}
	if got != (len(over) > 0) || got && !slices.Contains(over, le.Limit) {
		t.Fatalf("Build says %v, overDefaults says %v", err, over)
	}
}

// docBlock is a ```json block of a doc.
type docBlock struct {
	doc  string
	line int
	text string
}

func jsonBlocks(t *testing.T, docs ...string) []docBlock {
	t.Helper()
	var out []docBlock
	for _, doc := range docs {
		f, err := os.Open(doc)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		var cur *docBlock
		n := 0
		for sc.Scan() {
			n++
			line := sc.Text()
			switch {
			case cur == nil && strings.TrimSpace(line) == "```json":
				cur = &docBlock{doc: filepath.Base(doc), line: n}
			case cur != nil && strings.TrimSpace(line) == "```":
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				cur.text += line + "\n"
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		if cur != nil {
			t.Fatalf("%s:%d: unclosed ```json block", doc, cur.line)
		}
	}
	return out
}

// TestSchemaDocExamples validates every ```json block of the agent docs:
// an envelope (it has "schema") against the envelope schema, and the parser
// must accept it; a request (it has "version") against the request schema;
// a bare next object (it has "type") against the envelope's next; a POST
// /reply body's envelope against the envelope schema; a refusal (it has
// "error" and "reason") against the error schema; a POST /media body (it
// has "type" and "size") against its schema. Blocks
// with an ellipsis (…) are fragments and skipped.
func TestSchemaDocExamples(t *testing.T) {
	env := compileSchema(t, envelopeSchema)
	next := compileSchema(t, envelopeSchema+"#/$defs/next")
	req := compileSchema(t, requestSchema)
	problem := compileSchema(t, schemaDir+"/parley.error.v1.json")
	upload := compileSchema(t, schemaDir+"/parley.media.v1.json")
	preview := compileSchema(t, schemaDir+"/parley.preview.v1.json")
	blocks := jsonBlocks(t, "../../docs/agent-protocol.md", "../../docs/envelope.md")
	var checked int
	for _, b := range blocks {
		t.Run(b.doc+":"+strconv.Itoa(b.line), func(t *testing.T) {
			if strings.Contains(b.text, "…") {
				t.Logf("a fragment (…): skipped")
				return
			}
			dec := json.NewDecoder(strings.NewReader(b.text))
			dec.UseNumber()
			for start := int64(0); ; start = dec.InputOffset() {
				var v any
				err := dec.Decode(&v)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("not JSON: %v", err)
				}
				raw := b.text[start:dec.InputOffset()] // as written: Parse sees duplicate keys, the decoder does not
				obj, _ := v.(map[string]any)
				var verr error
				switch {
				case obj["schema"] != nil:
					verr = env.Validate(v)
					if _, err := envelope.Parse([]byte(raw)); err != nil {
						t.Errorf("the parser rejects the example: %v", err)
					}
				case obj["version"] != nil:
					verr = req.Validate(v)
				case obj["turn_id"] != nil && obj["envelope"] != nil && obj["version"] == nil:
					// A POST /reply body: the agent API accepts it, and its
					// envelope is an envelope.
					if _, err := agentapi.ParsePost([]byte(raw)); err != nil {
						t.Errorf("POST /reply refuses the example: %v", err)
					}
					verr = env.Validate(obj["envelope"])
					inner, _ := json.Marshal(obj["envelope"])
					if _, err := envelope.Parse(inner); err != nil {
						t.Errorf("the parser rejects the example's envelope: %v", err)
					}
				case obj["turn_id"] != nil && obj["status"] != nil:
					// A POST /reply/preview body.
					if _, err := agentapi.ParsePreview([]byte(raw)); err != nil {
						t.Errorf("POST /reply/preview refuses the example: %v", err)
					}
					verr = preview.Validate(v)
				case obj["thread_key"] != nil && obj["idempotency_key"] != nil:
					// A POST /send body: the agent API accepts it, and its
					// envelope, if any, is an envelope.
					if _, err := agentapi.ParseSend([]byte(raw)); err != nil {
						t.Errorf("POST /send refuses the example: %v", err)
					}
					if obj["envelope"] != nil {
						verr = env.Validate(obj["envelope"])
					}
				case obj["error"] != nil && obj["reason"] != nil:
					verr = problem.Validate(v)
				case obj["type"] != nil && obj["size"] != nil:
					// A POST /media body.
					verr = upload.Validate(v)
				case obj["type"] != nil:
					verr = next.Validate(v)
					if _, err := envelope.Parse([]byte(`{"schema": "openab.turn.v1", "next": ` + raw + `}`)); err != nil {
						t.Errorf("the parser rejects the example as next: %v", err)
					}
				default:
					t.Fatalf("neither an envelope, a request nor a next object: %s", raw)
				}
				if verr != nil {
					t.Errorf("the example does not validate: %v", verr)
				}
				checked++
			}
		})
	}
	if checked == 0 {
		t.Fatal("no example checked")
	}
}

// TestEnvelopeSchemaToolSubset keeps the envelope schema usable as an LLM
// tool's input schema: local references only, and only common keywords.
func TestEnvelopeSchemaToolSubset(t *testing.T) {
	raw, err := os.ReadFile(envelopeSchema)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	allowed := []string{
		"$schema", "$defs", "$ref", "title", "description", "type", "const", "enum",
		"properties", "required", "additionalProperties", "propertyNames", "minProperties", "maxProperties",
		"items", "minItems", "maxItems", "uniqueItems", "oneOf",
		"minLength", "maxLength", "pattern", "minimum", "maximum",
	}
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		for k, v := range s {
			p := path + "/" + k
			if !slices.Contains(allowed, k) {
				t.Errorf("%s: keyword %q is outside the tool subset", p, k)
			}
			switch k {
			case "$ref":
				if ref, _ := v.(string); !strings.HasPrefix(ref, "#/$defs/") {
					t.Errorf("%s: %q is not a local reference", p, ref)
				}
			case "properties", "$defs":
				for name, sub := range v.(map[string]any) {
					walk(p+"/"+name, sub.(map[string]any))
				}
			case "items", "additionalProperties", "propertyNames":
				if sub, ok := v.(map[string]any); ok {
					walk(p, sub)
				}
			case "oneOf":
				for i, sub := range v.([]any) {
					walk(p+"/"+strconv.Itoa(i), sub.(map[string]any))
				}
			}
		}
	}
	walk("#", root)
}
