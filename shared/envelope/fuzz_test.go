package envelope

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
)

// Seed corpora live in testdata/fuzz/<Target>/ (generated from
// docs/fixtures); the f.Add seeds below add the shared fixtures themselves,
// so a new fixture is fuzzed from day one.

func addFixtureSeeds(f *testing.F, add func([]byte)) {
	f.Helper()
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "manifest.json" || e.Name() == "README.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(fixtureDir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		add(b)
	}
}

// FuzzParse: Parse and Build never panic, errors are typed, and no plan
// ever shows envelope JSON or breaks a platform limit.
func FuzzParse(f *testing.F) {
	addFixtureSeeds(f, func(b []byte) { f.Add(b, uint8(0)) })
	f.Add([]byte(`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"hi"}]}`), uint8(1))
	f.Add([]byte(`prose {"schema": "my-db-schema"} prose`), uint8(2))
	f.Add([]byte(`{"schema":"openab.turn.v1","messages":[{"id":"m","media":{"kind":"image","url":"https://example.com/a.png","caption":"hi"}}]}`), uint8(3))
	f.Add([]byte(`{"schema":"openab.turn.v1","messages":[{"id":"m","media":{"kind":"voice","upload_id":"0123456789abcdef0123456789abcdef","name":"a.ogg"}}]}`), uint8(5))
	f.Add([]byte(`{"schema":"openab.turn.v1","messages":[{"id":"m","media":{"kind":"file","url":"http://10.0.0.1/x","upload_id":"x"}}]}`), uint8(6))
	caps := []message.Capabilities{
		{TextLimit: 4096, Counting: message.CountUTF16},
		{TextLimit: 17, Counting: message.CountRunes},
		{TextLimit: 23, Counting: message.CountBytes},
		{TextLimit: 0},
	}
	configs := []Config{{}, {Mode: ModeText}, {OnParseError: PolicyErrorMessage}, {OnParseError: PolicySilent}}
	f.Fuzz(func(t *testing.T, body []byte, sel uint8) {
		env, err := Parse(body)
		var pe *ParseError
		switch {
		case err == nil:
			for _, b := range env.Messages {
				if checkID(b.ID) != "" || hasFragment(b.shown(), detectStrong) {
					t.Fatalf("accepted an invalid bubble %+v", b)
				}
				if m := b.Media; m != nil {
					if b.Text != "" || !m.Kind.Known() || (m.URL == "") == (m.UploadID == "") ||
						(m.URL != "" && message.CheckMediaURL(m.URL) != "") || (m.UploadID != "" && !message.ValidUploadID(m.UploadID)) {
						t.Fatalf("accepted an invalid media bubble %+v %+v", b, *m)
					}
				} else if strings.TrimSpace(b.Text) == "" {
					t.Fatalf("accepted a blank bubble %+v", b)
				}
			}
		case !errors.As(err, &pe):
			t.Fatalf("Parse error %T is not a ParseError", err)
		}
		c := caps[int(sel)%len(caps)]
		cfg := configs[int(sel/4)%len(configs)]
		plan, err := Build(Reply{Body: body}, cfg, c)
		var le *LimitError
		if err != nil && !errors.As(err, &le) {
			t.Fatalf("Build error %v is neither nil nor a LimitError", err)
		}
		checkPlanInvariants(t, plan, c)
	})
}

// FuzzStrip: stripping leaves no fragment behind and never panics.
func FuzzStrip(f *testing.F) {
	addFixtureSeeds(f, func(b []byte) { f.Add(string(b)) })
	f.Add(`x {"next":{"q":"\U0001"}, "schema":"openab.turn.v1"} y`)
	f.Fuzz(func(t *testing.T, s string) {
		out, _ := stripFragments(s)
		if hasFragment(out, detectProse) {
			t.Fatalf("stripFragments(%q) = %q still holds a fragment", s, out)
		}
	})
}
