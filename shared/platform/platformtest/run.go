package platformtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Run checks h's adapter against the contract every chat adapter keeps, as
// parallel subtests of t, one per check (see the package doc).
func Run(t *testing.T, h Harness) {
	t.Helper()
	s := &suite{h: h}
	s.check(t)
	t.Run("Settings", s.settings)
	t.Run("Capabilities", s.capabilities)
	t.Run("Signatures", s.signatures)
	t.Run("Handshakes", s.handshakes)
	t.Run("Samples", s.samples)
	t.Run("Garbage", s.garbage)
	t.Run("SendReceipt", s.sendReceipt)
	t.Run("Faults", s.faults)
	t.Run("Limits", s.limits)
	t.Run("InertText", s.inertText)
	t.Run("ForeignThread", s.foreignThread)
	t.Run("Content", s.content)
	t.Run("Replies", s.replies)
}

type suite struct{ h Harness }

// check refuses a harness that would make checks pass vacuously.
func (s *suite) check(t *testing.T) {
	t.Helper()
	h := s.h
	var missing []string
	for name, unset := range map[string]bool{
		"Adapter":        h.Adapter == nil,
		"Env":            len(h.Env) == 0,
		"BaseURLSetting": h.BaseURLSetting == "",
		"Fake":           h.Fake == nil,
		"Sign":           h.Sign == nil,
		"SecretSetting":  h.SecretSetting == "" || h.Env[h.SecretSetting] == "",
		"AuthHeaders":    len(h.AuthHeaders) == 0,
		"Samples.Dir":    h.Samples.Dir == "",
		"Samples.At":     h.Samples.At.IsZero(),
		"Samples.Want":   len(h.Samples.Want) == 0,
		"Thread":         h.Thread.Chat == "" || h.Thread.Account == "",
		"Inert":          h.Inert == nil,
	} {
		if unset {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Fatalf("platformtest: the harness lacks %s", strings.Join(missing, ", "))
	}
	if h.Thread.Platform != h.Adapter.Platform() {
		t.Fatalf("platformtest: Harness.Thread is on %q, the adapter is %q", h.Thread.Platform, h.Adapter.Platform())
	}
}

// env is the harness's settings with overrides; an override of "" unsets.
func (s *suite) env(over map[string]string) platform.Env {
	return func(k string) string {
		if v, ok := over[k]; ok {
			return v
		}
		return s.h.Env[k]
	}
}

// secrets are the values of Env's secret settings: no error may hold one.
func (s *suite) secrets() []string {
	var out []string
	for _, set := range s.h.Adapter.Settings() {
		if v := s.h.Env[set.Key]; set.Secret && v != "" {
			out = append(out, v)
		}
	}
	return out
}

func (s *suite) receiver(t *testing.T) platform.Receiver {
	t.Helper()
	r, err := s.h.Adapter.NewReceiver(s.env(nil))
	if err != nil {
		t.Fatalf("NewReceiver: %v", err)
	}
	return r
}

// request is a request as the webhook core hands it over.
func request(method string, body []byte, header http.Header, now time.Time) *platform.Request {
	if header == nil {
		header = http.Header{}
	}
	return &platform.Request{Method: method, Header: header.Clone(), Query: url.Values{}, Body: bytes.Clone(body), Now: now}
}

// signed is body as the platform sends it at at, received at now.
func (s *suite) signed(body []byte, at, now time.Time) *platform.Request {
	return request(http.MethodPost, body, s.h.Sign(s.h.Env[s.h.SecretSetting], body, at), now)
}

// fake is one fresh fake API with the adapter's sender pointed at it.
type fake struct {
	rec    *fakeapi.Recorder
	sender platform.Sender
	// api is the platform's fake itself (Harness.Fake's).
	api http.Handler
	// requests counts every request that reached the fake, whatever its
	// path, but those of Harness.FakeURLSettings: "without a call" means
	// it stays 0.
	requests atomic.Int64
	// credentials counts the requests of Harness.FakeURLSettings (a
	// token endpoint's).
	credentials atomic.Int64
}

func (s *suite) fake(t *testing.T, over map[string]string) *fake {
	t.Helper()
	f := &fake{rec: fakeapi.New(fakeapi.Options{})}
	api := s.h.Fake(f.rec)
	f.api = api
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		credential := false
		for _, path := range s.h.FakeURLSettings {
			credential = credential || r.URL.Path == path || strings.HasPrefix(r.URL.Path, path+"/")
		}
		if credential {
			f.credentials.Add(1)
		} else {
			f.requests.Add(1)
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{s.h.BaseURLSetting: srv.URL}
	for k, path := range s.h.FakeURLSettings {
		env[k] = srv.URL + path
	}
	for k, v := range over {
		env[k] = v
	}
	sender, err := s.h.Adapter.NewSender(s.env(env), srv.Client())
	if err != nil {
		t.Fatalf("NewSender: %v", err)
	}
	f.sender = sender
	return f
}

// sendError asserts err is a *message.SendError of class, free of the
// secrets and of text.
func (s *suite) sendError(t *testing.T, err error, class message.FailureClass, text string) *message.SendError {
	t.Helper()
	var se *message.SendError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *message.SendError", err, err)
	}
	if se.Class != class {
		t.Fatalf("class %s, want %s: %v", se.Class, class, err)
	}
	for _, secret := range s.secrets() {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("the error shows a secret: %v", err)
		}
	}
	if text != "" && strings.Contains(err.Error(), text) {
		t.Fatalf("the error holds the message text: %v", err)
	}
	return se
}

// show renders v for a failure message: JSON, so pointers show what they
// point at.
func show(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// sampleFiles lists the samples: every regular file of dir but dotfiles
// and READMEs.
func sampleFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("samples: %v", err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || strings.HasPrefix(strings.ToUpper(name), "README") {
			continue
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		t.Fatalf("no samples in %s", dir)
	}
	return out
}

func readSample(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// anySample is a sample that parses to events: the body the signature
// checks sign.
func (s *suite) anySample(t *testing.T) []byte {
	t.Helper()
	for _, name := range sampleFiles(t, s.h.Samples.Dir) {
		if len(s.h.Samples.Want[name].Events) > 0 {
			return readSample(t, s.h.Samples.Dir, name)
		}
	}
	t.Fatal("no sample parses to an event")
	return nil
}
