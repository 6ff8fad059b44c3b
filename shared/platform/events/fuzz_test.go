package events

import (
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Fuzz modes: how the fuzzed body is sent.
const (
	fuzzStandard = iota // Standard Webhooks, signed right
	fuzzGitHub          // GitHub, signed right, event "push"
	fuzzGarbage         // the body as a header value too, signed wrong
)

// FuzzReceiverParse sends any body, signed right or wrong, through Verify and
// Parse: neither may panic, refusals wrap the ingress sentinels, a correct
// signature always verifies, and whatever parses is one well-formed
// proactive event aimed at a configured target.
func FuzzReceiverParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(samplesDir, "*.json"))
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		mode := uint8(fuzzStandard)
		if strings.HasPrefix(filepath.Base(file), "github-") {
			mode = fuzzGitHub
		}
		f.Add(body, mode, "")
	}
	f.Add([]byte(`{"source":"ci","text":"x","target":{"platform":"slack","account":"t0team0001","chat":"c0chan0001","thread":"1.2"},"data":{"a":[1,{"b":null}]}}`), uint8(fuzzStandard), "")
	f.Add([]byte(`{"source":"cron","text":"x","target":{"platform":"telegram","account":"07000000001","chat":"+42"}}`), uint8(fuzzStandard), "")
	f.Add([]byte(`{"action":"opened","issue":{"number":-1,"title":"\u0000"}}`), uint8(fuzzGitHub), "target=slack:T:C:")
	f.Add([]byte(`{"data":{"n":1e400}}`), uint8(fuzzGarbage), "target=%zz")

	r := newReceiver(f)
	sw, gh := secret(f, testSecret), secret(f, testGitHubSecret)
	f.Fuzz(func(t *testing.T, body []byte, mode uint8, query string) {
		var h http.Header
		switch mode % 3 {
		case fuzzStandard:
			h = SignRequest(sw, "msg_fuzz", sampleTime, body)
		case fuzzGitHub:
			h = SignGitHub(gh, "d1f4e3a0-fuzz", "push", body)
		default:
			h = SignRequest(sw, "msg_fuzz", sampleTime, body)
			h.Set(HeaderGitHubSignature, string(body))
			h.Set("webhook-signature", "v1,"+string(body))
		}
		q, _ := url.ParseQuery(query)
		req := &platform.Request{Method: http.MethodPost, Header: h, Query: q, Body: body, Now: sampleTime}
		err := r.Verify(req)
		switch {
		case mode%3 != fuzzGarbage && err != nil:
			t.Fatalf("Verify refused a right signature: %v", err)
		case err != nil && platform.StatusOf(err)/100 != 4:
			t.Fatalf("Verify error %v maps to %d", err, platform.StatusOf(err))
		case err != nil:
			return
		}
		p, err := r.Parse(req)
		if err != nil {
			if !errors.Is(err, platform.ErrMalformed) && !errors.Is(err, platform.ErrForbidden) && !errors.Is(err, platform.ErrTooLarge) {
				t.Fatalf("Parse error %v wraps no ingress sentinel", err)
			}
			return
		}
		if len(p.Events)+len(p.Ignored) != 1 || p.Reply != nil {
			t.Fatalf("Parse = %+v, want one event", p)
		}
		for _, ev := range p.Events {
			if ev.Platform != message.Events || !ev.Proactive() || ev.EventID == "" || !validSource(ev.Account) ||
				len(ev.Text) > MaxTextLen || !utf8.ValidString(ev.Text) || (ev.Text == "" && len(ev.Data) == 0) {
				t.Fatalf("bad event %+v", ev)
			}
			// Whatever parses reaches one of its source's targets, canonical.
			var src *Source
			for i := range r.Sources {
				if r.Sources[i].Name == ev.Account {
					src = &r.Sources[i]
				}
			}
			if src == nil || !slices.ContainsFunc(src.Targets, func(p Pattern) bool { return p.Match(ev.Thread) }) {
				t.Fatalf("event of %q aimed outside its targets: %+v", ev.Account, ev.Thread)
			}
			if c, err := r.Canonical[ev.Thread.Platform](ev.Thread, false); err != nil || c != ev.Thread {
				t.Fatalf("event target %+v is not canonical (%+v, %v)", ev.Thread, c, err)
			}
		}
	})
}

// FuzzParseSources feeds any sources and secrets configuration to
// ParseSources: it never panics, and whatever it accepts is usable: every
// source has a name, at least one secret of MinSecretBytes or more, and
// targets in canonical form that match themselves.
func FuzzParseSources(f *testing.F) {
	f.Add(testSources, testSecrets, "", "")
	f.Add(`{"gh":{"scheme":"github","targets":["telegram:7000000001:42"]}}`, `{"gh":"0123456789abcdef01234567"}`, "", "")
	f.Add("", "", testGitHubSecret+"-long-enough", testGitHubTarget.Key())
	f.Add(`{"a":{"targets":["slack:t0team0001:c1:*"]}}`, `{"a":["whsec_`+strings.Repeat("A", 40)+`"]}`, "", "")
	f.Add(`{"a":{"targets":["telegram:*"]}}`, `{"a":"x,y"}`, "", "")
	f.Fuzz(func(t *testing.T, sources, secrets, ghSecret, ghTarget string) {
		got, err := ParseSources(sources, secrets, ghSecret, ghTarget, testCanonical)
		if err != nil {
			if len(got) != 0 {
				t.Fatalf("an error and %d sources", len(got))
			}
			return
		}
		for _, s := range got {
			if s.Name == "" || len(s.Secrets) == 0 || len(s.Targets) == 0 {
				t.Fatalf("accepted an unusable source %+v", s)
			}
			for _, sec := range s.Secrets {
				if sec.Len() < MinSecretBytes {
					t.Fatalf("source %s: a %d-byte secret accepted", s.Name, sec.Len())
				}
			}
			for _, p := range s.Targets {
				c := testCanonical[p.Thread.Platform]
				if c == nil {
					t.Fatalf("source %s: target %s on a platform Parley does not send on", s.Name, p)
				}
				again, err := ParsePattern(p.String(), c)
				if err != nil || again != p {
					t.Fatalf("source %s: target %s does not parse back to itself: %+v, %v", s.Name, p, again, err)
				}
			}
		}
	})
}
