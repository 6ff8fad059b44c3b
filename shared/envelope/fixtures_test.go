package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/split"
)

// The fixtures are shared with the agent-facing tests, so producer and
// parser cannot drift: docs/fixtures/manifest.json says what Build must make
// of each file.
const fixtureDir = "../../docs/fixtures"

type fixtureManifest struct {
	Comment  string `json:"_comment"`
	Defaults struct {
		ContentType string        `json:"content_type"`
		Caps        *fixtureCaps  `json:"caps"`
		Config      fixtureConfig `json:"config"`
	} `json:"defaults"`
	Fixtures map[string][]fixtureCase `json:"fixtures"`
}

type fixtureCaps struct {
	TextLimit int    `json:"text_limit"`
	Counting  string `json:"counting"`
}

type fixtureConfig struct {
	Mode           string `json:"mode"`
	MaxBubbles     int    `json:"max_bubbles"`
	MaxBubbleChars int    `json:"max_bubble_chars"`
	OnParseError   string `json:"on_parse_error"`
	ErrorMessage   string `json:"error_message"`
}

type fixtureCase struct {
	Name        string         `json:"name"`
	ContentType *string        `json:"content_type"`
	Caps        *fixtureCaps   `json:"caps"`
	Config      *fixtureConfig `json:"config"`
	Expect      fixtureExpect  `json:"expect"`
}

type fixtureExpect struct {
	Outcome     string  `json:"outcome"`
	Next        string  `json:"next"`
	Problem     *string `json:"problem"`
	ProblemPath *string `json:"problem_path"`
	Units       []struct {
		ID    string         `json:"id"`
		Text  string         `json:"text"`
		Media *message.Media `json:"media"`
	} `json:"units"`
	UnitIDs []string `json:"unit_ids"`
	// React is the plan's reaction; absent means none.
	React string `json:"react"`
	Error *struct {
		Limit    string `json:"limit"`
		Max      int    `json:"max"`
		Got      int    `json:"got"`
		BubbleID string `json:"bubble_id"`
	} `json:"error"`
	Wait *struct {
		Reason  string `json:"reason"`
		Seconds int    `json:"seconds"`
	} `json:"wait"`
	Tool *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"tool"`
	Ask *struct {
		Message string `json:"message"`
		Fields  []struct {
			ID       string   `json:"id"`
			Key      string   `json:"key"`
			Kind     string   `json:"kind"`
			Required bool     `json:"required"`
			Options  []string `json:"options"`
		} `json:"fields"`
	} `json:"ask"`
}

func loadManifest(t *testing.T) fixtureManifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixtureDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m fixtureManifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	return m
}

func fixtureFiles(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || e.Name() == "README.md" || e.Name() == "manifest.json" {
			continue
		}
		names = append(names, e.Name())
	}
	return names
}

func TestFixturesAllHaveExpectations(t *testing.T) {
	m := loadManifest(t)
	readme, err := os.ReadFile(filepath.Join(fixtureDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := fixtureFiles(t)
	if len(files) == 0 {
		t.Fatal("no fixtures found")
	}
	onDisk := map[string]bool{}
	for _, f := range files {
		onDisk[f] = true
		if len(m.Fixtures[f]) == 0 {
			t.Errorf("%s has no expectation in manifest.json", f)
		}
		if !bytes.Contains(readme, []byte("`"+f+"`")) {
			t.Errorf("%s is not in README.md's table", f)
		}
	}
	for f := range m.Fixtures {
		if !onDisk[f] {
			t.Errorf("manifest.json names %s, which does not exist", f)
		}
	}
}

func TestFixtures(t *testing.T) {
	m := loadManifest(t)
	for _, file := range fixtureFiles(t) {
		body, err := os.ReadFile(filepath.Join(fixtureDir, file))
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range m.Fixtures[file] {
			name := file
			if c.Name != "" {
				name += "/" + c.Name
			} else if i > 0 {
				name += "/" + string(rune('0'+i))
			}
			t.Run(name, func(t *testing.T) {
				ct := m.Defaults.ContentType
				if c.ContentType != nil {
					ct = *c.ContentType
				}
				fc := m.Defaults.Caps
				if c.Caps != nil {
					fc = c.Caps
				}
				caps := message.Capabilities{TextLimit: fc.TextLimit, Counting: message.Counting(fc.Counting)}
				fcfg := m.Defaults.Config
				if c.Config != nil {
					fcfg = *c.Config
				}
				cfg := Config{Mode: Mode(fcfg.Mode), MaxBubbles: fcfg.MaxBubbles, MaxBubbleChars: fcfg.MaxBubbleChars,
					OnParseError: ParseErrorPolicy(fcfg.OnParseError), ErrorMessage: fcfg.ErrorMessage}
				plan, err := Build(Reply{Body: body, ContentType: ct}, cfg, caps)
				checkFixture(t, c.Expect, plan, err)
				checkPlanInvariants(t, plan, caps)
			})
		}
	}
}

func checkFixture(t *testing.T, want fixtureExpect, plan Plan, err error) {
	t.Helper()
	if want.Error != nil {
		var le *LimitError
		if !errors.As(err, &le) {
			t.Fatalf("Build error = %v, want a LimitError", err)
		}
		got := *le
		exp := LimitError{Limit: want.Error.Limit, Max: want.Error.Max, Got: want.Error.Got, BubbleID: want.Error.BubbleID}
		if got != exp {
			t.Fatalf("LimitError = %+v, want %+v", got, exp)
		}
		if len(plan.Units) != 0 {
			t.Fatalf("a rejected plan has %d units", len(plan.Units))
		}
		return
	}
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if string(plan.Outcome) != want.Outcome {
		t.Errorf("Outcome = %q, want %q", plan.Outcome, want.Outcome)
	}
	if want.Next != "" && string(plan.Next.Type) != want.Next {
		t.Errorf("Next.Type = %q, want %q", plan.Next.Type, want.Next)
	}
	var pe *ParseError
	gotProblem := errors.As(plan.Problem, &pe)
	switch {
	case want.Problem == nil && plan.Problem != nil:
		t.Errorf("Problem = %v, want none", plan.Problem)
	case want.Problem != nil && !gotProblem:
		t.Errorf("Problem = %v, want a ParseError %q", plan.Problem, *want.Problem)
	case want.Problem != nil && string(pe.Reason) != *want.Problem:
		t.Errorf("Problem reason = %q (%v), want %q", pe.Reason, pe, *want.Problem)
	case want.ProblemPath != nil && pe.Path != *want.ProblemPath:
		t.Errorf("Problem path = %q, want %q", pe.Path, *want.ProblemPath)
	}
	if want.Units != nil {
		if len(plan.Units) != len(want.Units) {
			t.Errorf("%d units, want %d: %+v", len(plan.Units), len(want.Units), plan.Units)
		}
		for i := range min(len(plan.Units), len(want.Units)) {
			if plan.Units[i].ID != want.Units[i].ID || plan.Units[i].Text != want.Units[i].Text || !reflect.DeepEqual(plan.Units[i].Media, want.Units[i].Media) {
				t.Errorf("unit %d = %s %q, want %s %q", i, plan.Units[i].ID, plan.Units[i].Text, want.Units[i].ID, want.Units[i].Text)
			}
		}
	}
	if want.UnitIDs != nil {
		var ids []string
		for _, u := range plan.Units {
			ids = append(ids, u.ID)
		}
		if !reflect.DeepEqual(ids, want.UnitIDs) {
			t.Errorf("unit ids = %q, want %q", ids, want.UnitIDs)
		}
	}
	if want.Units == nil && want.UnitIDs == nil {
		t.Error("the case states no units: add units or unit_ids")
	}
	if plan.React != want.React {
		t.Errorf("React = %q, want %q", plan.React, want.React)
	}
	if w := want.Wait; w != nil {
		if plan.Next.Wait == nil || plan.Next.Wait.Reason != w.Reason || plan.Next.Wait.Seconds != w.Seconds {
			t.Errorf("Wait = %+v, want %+v", plan.Next.Wait, w)
		}
	}
	if w := want.Tool; w != nil {
		tool := plan.Next.Tool
		if tool == nil || tool.Name != w.Name || !jsonEqual(tool.Arguments, w.Arguments) {
			t.Errorf("Tool = %+v, want %+v", tool, w)
		}
	}
	if w := want.Ask; w != nil {
		ask := plan.Next.Ask
		if ask == nil {
			t.Fatal("no Ask")
		}
		if ask.Message != w.Message || len(ask.Fields) != len(w.Fields) {
			t.Fatalf("Ask = %q with %d fields, want %q with %d", ask.Message, len(ask.Fields), w.Message, len(w.Fields))
		}
		for i, f := range ask.Fields {
			wf := w.Fields[i]
			var opts []string
			for _, o := range f.Options {
				opts = append(opts, o.Value)
			}
			if f.ID != wf.ID || f.Key != wf.Key || string(f.Kind) != wf.Kind || f.Required != wf.Required || !reflect.DeepEqual(opts, wf.Options) {
				t.Errorf("field %d = %s %s %s required=%v %q, want %+v", i, f.ID, f.Key, f.Kind, f.Required, opts, wf)
			}
		}
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// checkPlanInvariants holds for every plan: units fit the platform, ids are
// "<bubble>#<part>" numbered from 1 per bubble, no envelope JSON is visible,
// and errors hold no unit text.
func checkPlanInvariants(t *testing.T, plan Plan, caps message.Capabilities) {
	t.Helper()
	parts := map[string]int{}
	for _, u := range plan.Units {
		if caps.TextLimit > 0 && split.Count(u.Text, caps.Counting) > caps.TextLimit {
			t.Errorf("unit %s has %d units, over the limit %d", u.ID, split.Count(u.Text, caps.Counting), caps.TextLimit)
		}
		parts[u.BubbleID]++
		if u.Part != parts[u.BubbleID] || u.ID != u.BubbleID+"#"+itoa(u.Part) {
			t.Errorf("unit %s: bubble %q part %d out of sequence", u.ID, u.BubbleID, u.Part)
		}
		if u.Media != nil {
			if u.Text != "" || u.Part != 1 || holdsEnvelope(u.Media.Caption) {
				t.Errorf("media unit %s: text %q, part %d, caption %q", u.ID, u.Text, u.Part, u.Media.Caption)
			}
			continue
		}
		if strings.TrimSpace(u.Text) == "" {
			t.Errorf("unit %s is blank", u.ID)
		}
		if holdsEnvelope(u.Text) {
			t.Errorf("unit %s holds envelope JSON: %q", u.ID, u.Text)
		}
		if plan.Problem != nil && len(u.Text) > 3 && strings.Contains(plan.Problem.Error(), u.Text) {
			t.Errorf("Problem %q holds unit text", plan.Problem)
		}
	}
}

// holdsEnvelope reports whether s holds a complete envelope-shaped object or
// any object whose "schema" member has a complete openab.turn value (a
// truncated or broken envelope). A split may cut unrelated JSON such as
// {"schema": "my-db-schema"} after `{"schema": `; that piece is not an
// envelope's and is not reported.
func holdsEnvelope(s string) bool {
	b := []byte(s)
	for i := range b {
		if b[i] != '{' || !candidate(b, i) {
			continue
		}
		pr, st, _ := scan(b, i)
		if st == statusComplete && isFragment(&pr, st, detectStrong) {
			return true
		}
		if pr.schemaSeen && !pr.schemaPartial && hasPrefixFold(pr.schemaVal, envelopeMarker) {
			return true
		}
	}
	return encodedEnvelope(b)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
