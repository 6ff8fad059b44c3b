package teams

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeissuer"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/platformtest"
)

// FuzzReceiverParse feeds any body through VerifyContext, with the
// connector's true token and with any other, and through Parse: nothing
// panics, only the true token is accepted, refusals wrap the sentinels,
// and whatever parses is well-formed events or ignored activities.
func FuzzReceiverParse(f *testing.F) {
	platformtest.AddSamples(f, eventsDir, "*.json", "")
	for _, body := range malformed() {
		f.Add(body, "")
	}
	f.Add([]byte(`{"type":"message","channelId":"msteams","serviceUrl":"`+sampleSvc+`","value":{"parley":"`+strings.Repeat("x", 65)+`"}}`), "a.b.c")
	f.Add([]byte(`{"type":"message","channelId":"msteams","serviceUrl":"`+sampleSvc+`","attachments":[{"contentType":"image/*"},{"contentType":"IMAGE/PNG","contentUrl":"x"},`+
		`{"contentType":"application/vnd.microsoft.teams.file.download.info","content":"no"},{"contentType":"application/vnd.microsoft.teams.file.download.info","name":"a.","content":{"downloadUrl":7}}]}`), "")
	r := testReceiver(f)
	// A token depends on the body's serviceUrl alone: signed once for
	// each (RSA signing, coverage-instrumented, is slow).
	var mu sync.Mutex
	tokens := map[string]http.Header{}
	sign := func(body []byte) *platform.Request {
		var head struct {
			ServiceURL string `json:"serviceUrl"`
		}
		_ = json.Unmarshal(body, &head)
		mu.Lock()
		h, ok := tokens[head.ServiceURL]
		if !ok {
			h = signed(body, sampleNow, sampleNow).Header
			tokens[head.ServiceURL] = h
		}
		mu.Unlock()
		return &platform.Request{Method: http.MethodPost, Header: h.Clone(), Body: body, Now: sampleNow}
	}
	f.Fuzz(func(t *testing.T, body []byte, tok string) {
		req := sign(body)
		truth := req.Header.Get("Authorization")
		err := r.VerifyContext(t.Context(), req)
		if err != nil {
			// The true token fails only on a body that is no activity,
			// or one whose serviceUrl or channel the token does not
			// vouch for.
			if !errors.Is(err, platform.ErrMalformed) && !errors.Is(err, platform.ErrUnauthorized) {
				t.Fatalf("VerifyContext refused the true token with %v", err)
			}
			return
		}
		forged := sign(body)
		forged.Header.Set("Authorization", "Bearer "+tok)
		if ferr := r.VerifyContext(t.Context(), forged); "Bearer "+tok != truth && ferr == nil {
			t.Fatalf("a token other than the true one verified: %q", tok)
		} else if ferr != nil && platform.StatusOf(ferr) != http.StatusUnauthorized && platform.StatusOf(ferr) != http.StatusBadRequest {
			t.Fatalf("a bad token was refused with %v", ferr)
		}
		p, err := r.Parse(req)
		if err != nil {
			if !errors.Is(err, platform.ErrMalformed) && !errors.Is(err, platform.ErrForbidden) {
				t.Fatalf("Parse error %v wraps neither ErrMalformed nor ErrForbidden", err)
			}
			return
		}
		if len(p.Events)+len(p.Ignored) != 1 || p.Reply != nil {
			t.Fatalf("Parse = %+v: one activity is one event or one ignored", p)
		}
		for _, ev := range p.Events {
			if ev.Platform != message.Teams || ev.Account != testApp || ev.Thread.Account != testApp || ev.Thread.Chat == "" ||
				ev.Sender.ID == "" || ev.Sender.IsBot || ev.EventID == "" || ev.ReplyContext == nil ||
				strings.ContainsAny(ev.Thread.Chat, "/?#") || strings.ContainsAny(ev.Thread.Thread, "/?#;") {
				t.Fatalf("bad event %+v", ev)
			}
			switch ev.Kind {
			case message.KindMessage:
				if (strings.TrimSpace(ev.Text) == "" && len(ev.Attachments) == 0) || len(ev.Attachments) > maxAttachments || ev.Press != nil {
					t.Fatalf("bad message %+v", ev)
				}
			case message.KindAnswer:
				if ev.Press == nil || ev.Press.Data == "" || len(ev.Press.Data) > message.MaxControlData {
					t.Fatalf("bad answer %+v", ev)
				}
			default:
				t.Fatalf("kind %q", ev.Kind)
			}
		}
		platformtest.CheckIgnored(t, p.Ignored, platform.IgnoredBot, platform.IgnoredNoText, platform.IgnoredUnsupported,
			platform.IgnoredMembership, platform.IgnoredEdited, platform.IgnoredDeleted)
	})
}

// FuzzVerifyToken feeds any bearer token to the verifier, with keys held:
// it never panics, never accepts a token the issuer did not sign for this
// bot, and refuses with 401 (or 503 for a key it would have to fetch).
func FuzzVerifyToken(f *testing.F) {
	iss, _ := issuer()
	body := []byte(`{"type":"message","channelId":"msteams","serviceUrl":"` + sampleSvc + `"}`)
	f.Add(token(iss, testApp, sampleSvc, sampleNow, nil))
	f.Add(token(iss, testApp, sampleSvc, sampleNow.Add(-3*60*60*1e9), nil))
	f.Add(fakeissuer.SignWith(fakeissuer.NewKey(), iss.KeyID(), iss.Claims(testApp, sampleNow, 3600*1e9)))
	f.Add("eyJhbGciOiJub25lIiwia2lkIjoia2V5LTAifQ.eyJpc3MiOiJodHRwczovL2FwaS5ib3RmcmFtZXdvcmsuY29tIn0.")
	f.Add("a.b.c")
	f.Add("")
	r := testReceiver(f)
	if err := r.VerifyContext(f.Context(), bearer(token(iss, testApp, sampleSvc, sampleNow, nil), body)); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		req := bearer(tok, body)
		err := r.Verify(req)
		if err == nil {
			// Only a token the issuer signed, for this bot, can pass.
			var c connectorClaims
			if _, verr := r.Keys.VerifyHeld(tok, expect(testApp, sampleNow), &c); verr != nil || c.ServiceURL != sampleSvc {
				t.Fatalf("Verify accepted %q", tok)
			}
			return
		}
		switch platform.StatusOf(err) {
		case http.StatusUnauthorized, http.StatusServiceUnavailable:
		default:
			t.Fatalf("Verify(%q) = %v", tok, err)
		}
		if req.Verified != nil {
			t.Fatal("a refused token left Verified")
		}
	})
}

// TestFuzzSeedsAreTheSamples: the checked-in corpus holds every sample,
// byte for byte, so the fuzzer starts from what Teams sends.
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
