package teams

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeissuer"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/jwks"
)

func sample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(eventsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// token signs claims for body as iss would, with overrides.
func token(iss *fakeissuer.Issuer, aud, svc string, at time.Time, edit func(*jwt.RegisteredClaims)) string {
	c := iss.Claims(aud, at, time.Hour)
	if edit != nil {
		edit(&c)
	}
	return iss.Sign(struct {
		jwt.RegisteredClaims
		ServiceURL string `json:"serviceurl,omitempty"`
	}{c, svc})
}

func bearer(tok string, body []byte) *platform.Request {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+tok)
	return &platform.Request{Method: http.MethodPost, Header: h, Body: body, Now: sampleNow}
}

// TestVerifyRefusesEveryBadToken: each way a token can be wrong is a 401,
// and nothing is left for Parse.
func TestVerifyRefusesEveryBadToken(t *testing.T) {
	t.Parallel()
	iss, _ := issuer()
	r := testReceiver(t)
	body := sample(t, "message-personal.json")
	other := fakeissuer.New(fakeissuer.Options{Issuer: Issuer, Endorsements: []string{"msteams"}, KeyID: iss.KeyID()})
	noEndorse := fakeissuer.New(fakeissuer.Options{Issuer: Issuer})
	noEndorseSrv := httptest.NewServer(noEndorse)
	defer noEndorseSrv.Close()
	for name, c := range map[string]struct {
		req  *platform.Request
		r    *Receiver
		want error
	}{
		"Forged":            {req: bearer(token(other, testApp, sampleSvc, sampleNow, nil), body), want: platform.ErrUnauthorized},
		"Expired":           {req: bearer(token(iss, testApp, sampleSvc, sampleNow.Add(-2*time.Hour), nil), body), want: platform.ErrStale},
		"WrongAudience":     {req: bearer(token(iss, "00000000-0000-4000-8000-00000000b002", sampleSvc, sampleNow, nil), body), want: platform.ErrUnauthorized},
		"WrongIssuer":       {req: bearer(token(iss, testApp, sampleSvc, sampleNow, func(c *jwt.RegisteredClaims) { c.Issuer = "https://sts.windows.net/x/" }), body), want: platform.ErrUnauthorized},
		"OtherServiceURL":   {req: bearer(token(iss, testApp, "https://evil.example/", sampleNow, nil), body), want: platform.ErrUnauthorized},
		"NoServiceURLClaim": {req: bearer(token(iss, testApp, "", sampleNow, nil), body), want: platform.ErrUnauthorized},
		"NotBearer":         {req: &platform.Request{Header: http.Header{"Authorization": {"Basic eDp5"}}, Body: body, Now: sampleNow}, want: platform.ErrUnauthorized},
		"KeyEndorsesNoTeams": {
			req:  bearer(token(noEndorse, testApp, sampleSvc, sampleNow, nil), body),
			r:    &Receiver{AppID: testApp, Keys: jwks.New(jwks.Source{MetadataURL: noEndorseSrv.URL + fakeissuer.MetadataPath})},
			want: platform.ErrUnauthorized,
		},
	} {
		t.Run(name, func(t *testing.T) {
			rr := r
			if c.r != nil {
				rr = c.r
			}
			err := rr.VerifyContext(t.Context(), c.req)
			if !errors.Is(err, c.want) || platform.StatusOf(err) != http.StatusUnauthorized {
				t.Fatalf("VerifyContext = %v, want %v (401)", err, c.want)
			}
			if c.req.Verified != nil {
				t.Fatal("a refused request carries Verified")
			}
		})
	}
}

// TestOtherTenantIsForbidden: a single-tenant bot takes its own tenant's
// activities only.
func TestOtherTenantIsForbidden(t *testing.T) {
	t.Parallel()
	body := []byte(strings.ReplaceAll(string(sample(t, "message-personal.json")), testTenant, "00000000-0000-4000-8000-0000000000e2"))
	r := testReceiver(t)
	req := signed(body, sampleNow, sampleNow)
	if err := r.VerifyContext(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Parse(req); !errors.Is(err, platform.ErrForbidden) {
		t.Fatalf("Parse = %v, want ErrForbidden", err)
	}
}

// TestKeysUnreachableIs503NotA401: with the Bot Framework's keys out of
// reach, a genuine request is answered retryable, never refused.
func TestKeysUnreachableIs503NotA401(t *testing.T) {
	t.Parallel()
	iss := fakeissuer.New(fakeissuer.Options{Issuer: Issuer, Endorsements: []string{"msteams"}})
	srv := httptest.NewServer(iss)
	defer srv.Close()
	r := &Receiver{AppID: testApp, Keys: jwks.New(jwks.Source{MetadataURL: srv.URL + fakeissuer.MetadataPath})}
	iss.SetDown(true)
	req := bearer(token(iss, testApp, sampleSvc, sampleNow, nil), sample(t, "message-personal.json"))
	err := r.VerifyContext(t.Context(), req)
	if !errors.Is(err, platform.ErrUnavailable) || platform.StatusOf(err) != http.StatusServiceUnavailable {
		t.Fatalf("VerifyContext with the keys down = %v, want ErrUnavailable (503)", err)
	}
	// Verify, which does no I/O, holds no key yet: unavailable too.
	if err := r.Verify(req); !errors.Is(err, platform.ErrUnavailable) {
		t.Fatalf("Verify without held keys = %v", err)
	}
	iss.SetDown(false)
	time.Sleep(1100 * time.Millisecond) // past the failed fetch's pause
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if err := r.VerifyContext(ctx, req); err != nil {
		t.Fatalf("once the keys are back: %v", err)
	}
	if err := r.Verify(req); err != nil {
		t.Fatalf("Verify with the keys held: %v", err)
	}
}

// TestKeyRotationWithoutRestart: the issuer withdraws its key for a new
// one; the next activity, signed with the new key, verifies at once.
func TestKeyRotationWithoutRestart(t *testing.T) {
	t.Parallel()
	iss := fakeissuer.New(fakeissuer.Options{Issuer: Issuer, Endorsements: []string{"msteams"}})
	srv := httptest.NewServer(iss)
	defer srv.Close()
	r := &Receiver{AppID: testApp, Keys: jwks.New(jwks.Source{MetadataURL: srv.URL + fakeissuer.MetadataPath})}
	body := sample(t, "message-personal.json")
	now := func(req *platform.Request) *platform.Request { req.Now = time.Now(); return req }
	if err := r.VerifyContext(t.Context(), now(bearer(token(iss, testApp, sampleSvc, time.Now(), nil), body))); err != nil {
		t.Fatal(err)
	}
	iss.Rotate(false)
	// A rotation is fetched at most every jwks.DefaultNewKeyRefresh.
	time.Sleep(jwks.DefaultNewKeyRefresh + 100*time.Millisecond)
	if err := r.VerifyContext(t.Context(), now(bearer(token(iss, testApp, sampleSvc, time.Now(), nil), body))); err != nil {
		t.Fatalf("after the rotation: %v", err)
	}
	if n := iss.Fetches(); n != 2 {
		t.Fatalf("%d fetches of the keys, want 2", n)
	}
}

func TestFakeSignIsTheConnectors(t *testing.T) {
	t.Parallel()
	// faketeams.API.Sign is what make run and the runner use.
	api := faketeams.New(faketeams.Options{})
	srv := httptest.NewServer(api)
	defer srv.Close()
	r := &Receiver{AppID: faketeams.AppID, Keys: jwks.New(jwks.Source{MetadataURL: srv.URL + faketeams.MetadataPath})}
	body := sample(t, "message-personal.json")
	req := &platform.Request{Method: http.MethodPost, Header: api.Sign(body, time.Now()), Body: body, Now: time.Now()}
	if err := r.VerifyContext(t.Context(), req); err != nil {
		t.Fatal(err)
	}
}
