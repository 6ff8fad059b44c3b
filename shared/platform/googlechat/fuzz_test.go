package googlechat

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// FuzzReceiverParse feeds any body through Parse after a true token, and
// the fuzzed token through VerifyContext: nothing panics, only the true
// token verifies, refusals wrap the sentinels, and whatever parses is
// well-formed events or ignored events, each answered {}.
func FuzzReceiverParse(f *testing.F) {
	platformtest.AddSamples(f, eventsDir, "*.json", "")
	for _, body := range malformed() {
		f.Add(body, "")
	}
	f.Add([]byte(`{"type":"MESSAGE","eventTime":"2025-11-29T16:00:00Z","space":{"name":"spaces/A"},"user":{"name":"users/1"},"message":{"name":"spaces/A/messages/m","sender":{"name":"users/1"},`+
		`"attachment":[{"source":"UPLOADED_CONTENT","attachmentDataRef":{"resourceName":"a/../b"}},{"source":"DRIVE_FILE"},{},{"contentType":7}]}}`), "")
	r := testReceiver(f)
	truth := signed(nil, sampleNow, sampleNow).Header
	f.Fuzz(func(t *testing.T, body []byte, tok string) {
		req := &platform.Request{Method: http.MethodPost, Header: truth.Clone(), Body: body, Now: sampleNow}
		if err := r.VerifyContext(t.Context(), req); err != nil {
			t.Fatalf("the true token: %v", err)
		}
		forged := &platform.Request{Method: http.MethodPost, Header: http.Header{"Authorization": {"Bearer " + tok}}, Body: body, Now: sampleNow}
		ferr := r.VerifyContext(t.Context(), forged)
		if "Bearer "+tok != truth.Get("Authorization") && (ferr == nil || platform.StatusOf(ferr) != http.StatusUnauthorized) {
			t.Fatalf("token %q: %v", tok, ferr)
		}
		p, err := r.Parse(req)
		if err != nil {
			if !errors.Is(err, platform.ErrMalformed) {
				t.Fatalf("Parse error %v is not ErrMalformed", err)
			}
			return
		}
		if len(p.Events)+len(p.Ignored) != 1 || p.Ack == nil || string(p.Ack.Body) != "{}" {
			t.Fatalf("Parse = %+v", p)
		}
		for _, ev := range p.Events {
			if ev.Platform != message.GoogleChat || ev.Account != testProject || !spaceName.MatchString(ev.Thread.Chat) ||
				strings.Contains(ev.Thread.Thread, "/") || !userName.MatchString(ev.Sender.ID) || ev.Sender.IsBot || ev.EventID == "" {
				t.Fatalf("bad event %+v", ev)
			}
			switch ev.Kind {
			case message.KindMessage:
				if strings.TrimSpace(ev.Text) == "" && len(ev.Attachments) == 0 {
					t.Fatalf("a message without text or file %+v", ev)
				}
				for i, a := range ev.Attachments {
					if a.PlatformID == "" || a.Index != i || i >= maxAttachments {
						t.Fatalf("bad attachment %+v", a)
					}
				}
			case message.KindAnswer:
				if ev.Press == nil || ev.Press.Data == "" || len(ev.Press.Data) > message.MaxControlData {
					t.Fatalf("bad answer %+v", ev)
				}
			default:
				t.Fatalf("kind %q", ev.Kind)
			}
		}
		platformtest.CheckIgnored(t, p.Ignored, platform.IgnoredBot, platform.IgnoredNoText, platform.IgnoredUnsupported, platform.IgnoredMembership)
	})
}

// FuzzVerifyToken feeds any bearer token to the verifier with its keys
// held: it never panics, accepts only tokens of the Chat issuer for this
// project, and refuses with 401 (or 503 for a key it would fetch).
func FuzzVerifyToken(f *testing.F) {
	api, _ := issuers()
	f.Add(strings.TrimPrefix(api.Sign(sampleNow).Get("Authorization"), "Bearer "))
	f.Add(strings.TrimPrefix(api.SignIDToken("https://parley.example/googlechat", sampleNow).Get("Authorization"), "Bearer "))
	f.Add("eyJhbGciOiJub25lIn0.eyJpc3MiOiJjaGF0QHN5c3RlbS5nc2VydmljZWFjY291bnQuY29tIn0.")
	f.Add("a.b.c")
	r := testReceiver(f)
	if err := r.VerifyContext(f.Context(), signed(nil, sampleNow, sampleNow)); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		req := bearer(tok, nil, sampleNow)
		err := r.Verify(req)
		if err == nil {
			var c tokenClaims
			if _, verr := r.Keys.VerifyHeld(tok, r.expect(sampleNow), &c); verr != nil || c.Issuer != "chat@system.gserviceaccount.com" {
				t.Fatalf("Verify accepted %q", tok)
			}
			return
		}
		if st := platform.StatusOf(err); st != http.StatusUnauthorized && st != http.StatusServiceUnavailable {
			t.Fatalf("Verify(%q) = %v", tok, err)
		}
	})
}

// TestFuzzSeedsAreTheSamples: the checked-in corpus holds every sample.
func TestFuzzSeedsAreTheSamples(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(eventsDir, "*.json"))
	for _, file := range files {
		body, _ := os.ReadFile(file)
		name := "sample-" + strings.TrimSuffix(filepath.Base(file), ".json")
		seed, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzReceiverParse", name))
		if err != nil {
			t.Errorf("no seed %s: %v", name, err)
			continue
		}
		if want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nstring(%q)\n", body, ""); string(seed) != want {
			t.Errorf("seed %s is not the sample %s", name, filepath.Base(file))
		}
	}
}
