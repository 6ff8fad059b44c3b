package stack

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/parleyhq/parley/shared/platform/registry"
)

// Synthesizing costs seconds, so each configuration is synthesized once per
// test binary and shared by the tests (read-only).

var (
	scratch string // temporary folder for zips and cloud assemblies

	defaultOnce sync.Once
	defaultFx   *fixture
	defaultErr  error

	optionsOnce sync.Once
	optionsFx   *fixture
	optionsErr  error
)

func TestMain(m *testing.M) {
	var err error
	if scratch, err = os.MkdirTemp("", "parley-infra-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	jsii.Close()
	os.RemoveAll(scratch)
	os.Exit(code)
}

// fixture is one synthesized stack.
type fixture struct {
	stack    *Stack
	assets   string // the asset folder the stack was built from
	outdir   string // the cloud assembly
	template assertions.Template
	json     map[string]any // the template as JSON
	nag      []string       // unsuppressed cdk-nag errors and warnings
}

// defaultFixture is the stack as `cdk synth` builds it with cdk.json alone.
func defaultFixture(t *testing.T) *fixture {
	t.Helper()
	defaultOnce.Do(func() { defaultFx, defaultErr = synthesize("default", nil) })
	if defaultErr != nil {
		t.Fatal(defaultErr)
	}
	return defaultFx
}

// cdkJSONContext is cdk.json's "context": the CLI passes it to the app, the
// test must do so itself, or its feature flags (and so its template) differ.
func cdkJSONContext() (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join("..", "cdk.json"))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("cdk.json: %w", err)
	}
	return doc.Context, nil
}

// writeZips writes a small, valid deployment package per function into dir,
// each with different content so each function gets its own asset.
func writeZips(dir string) error {
	for _, fn := range registry.Functions() {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate}
		h.SetMode(0o755)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "#!/bin/sh\necho %s\n", fn.Name)
		if err := zw.Close(); err != nil {
			return err
		}
		if err := os.WriteFile(AssetPath(dir, fn.Name), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// synthesize builds the stack the way main.go does, with cdk.json's context,
// a fresh asset folder and extra context on top, and runs cdk-nag.
func synthesize(name string, extra map[string]any) (fx *fixture, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("synthesize %s: %v", name, r)
		}
	}()
	fx = &fixture{
		assets: filepath.Join(scratch, name, "build"),
		outdir: filepath.Join(scratch, name, "cdk.out"),
	}
	if err := os.MkdirAll(fx.assets, 0o755); err != nil {
		return nil, err
	}
	if err := writeZips(fx.assets); err != nil {
		return nil, err
	}
	ctx, err := cdkJSONContext()
	if err != nil {
		return nil, err
	}
	// What the CLI adds to every synthesis (its contextFromSettings), so
	// the template carries the same metadata as `cdk synth`'s.
	ctx["aws:cdk:enable-path-metadata"] = true
	ctx["aws:cdk:enable-asset-metadata"] = true
	ctx["aws:cdk:version-reporting"] = true
	ctx[ContextAssetDir] = fx.assets
	maps.Copy(ctx, extra)

	app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(fx.outdir)})
	awscdk.Aspects_Of(app).Add(Checks(), nil)
	cfg, err := ConfigFromContext(app.Node())
	if err != nil {
		return nil, err
	}
	if fx.stack, err = New(app, StackName(app.Node()), nil, cfg); err != nil {
		return nil, err
	}
	fx.template = assertions.Template_FromStack(fx.stack.Stack, nil)
	fx.json = *fx.template.ToJSON()

	ann := assertions.Annotations_FromStack(fx.stack.Stack)
	rule := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))
	for _, found := range [][]string{
		messages("error", ann.FindError(jsii.String("*"), rule)),
		messages("warning", ann.FindWarning(jsii.String("*"), rule)),
	} {
		fx.nag = append(fx.nag, found...)
	}
	return fx, nil
}

func messages(level string, found any) []string {
	b, _ := json.Marshal(found)
	var msgs []struct {
		ID    string `json:"id"`
		Entry struct {
			Data any `json:"data"`
		} `json:"entry"`
	}
	_ = json.Unmarshal(b, &msgs)
	var out []string
	for _, m := range msgs {
		out = append(out, fmt.Sprintf("%s %s: %v", level, m.ID, m.Entry.Data))
	}
	return out
}

// must runs an assertions-module check; a failed assertion panics (it is a
// JavaScript exception), which must become a test failure.
func must(t *testing.T, check func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%v", r)
		}
	}()
	check()
}

// resourcesOf returns the template's resources of type typ by logical id.
func (fx *fixture) resourcesOf(typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range fx.json["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] == typ {
			out[id] = r
		}
	}
	return out
}

// resource returns the resource with logical id, failing t if absent.
func (fx *fixture) resource(t *testing.T, id string) map[string]any {
	t.Helper()
	r, ok := fx.json["Resources"].(map[string]any)[id].(map[string]any)
	if !ok {
		t.Fatalf("no resource %s in the template", id)
	}
	return r
}

// logicalID is the template id of a construct's CloudFormation resource.
func (fx *fixture) logicalID(c constructs.IConstruct) string {
	return *fx.stack.Stack.GetLogicalId(c.Node().DefaultChild().(awscdk.CfnElement))
}

func props(r map[string]any) map[string]any {
	p, _ := r["Properties"].(map[string]any)
	return p
}

// ref and getAtt build the intrinsic functions the template uses.
func ref(id string) map[string]any { return map[string]any{"Ref": id} }
func getAtt(id, attr string) map[string]any {
	return map[string]any{"Fn::GetAtt": []any{id, attr}}
}

// equalJSON compares two values by their JSON form.
func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// list normalizes a template value that may be one item or a list of them.
func list(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func hasWildcard(s string) bool { return strings.Contains(s, "*") }

// render flattens a template value of literal strings, Refs and Fn::Joins
// into one string, each Ref written as ${LogicalId}: what the value reads as
// at deploy time, with placeholders for what only CloudFormation knows.
func render(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case map[string]any:
		if len(v) != 1 {
			break
		}
		if id, ok := v["Ref"].(string); ok {
			return "${" + id + "}", nil
		}
		if j, ok := v["Fn::Join"].([]any); ok && len(j) == 2 {
			sep, ok1 := j[0].(string)
			parts, ok2 := j[1].([]any)
			if !ok1 || !ok2 {
				break
			}
			out := make([]string, len(parts))
			for i, p := range parts {
				s, err := render(p)
				if err != nil {
					return "", err
				}
				out[i] = s
			}
			return strings.Join(out, sep), nil
		}
	}
	return "", fmt.Errorf("cannot render %s", asJSON(v))
}

// secretARNPattern is the ARN pattern a grant on the operator's secret name
// covers: the name and the six random characters Secrets Manager appends.
func secretARNPattern(name string) string {
	return "arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:" + name + "-??????"
}
