package googlechat

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeissuer"
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

func bearer(tok string, body []byte, now time.Time) *platform.Request {
	return &platform.Request{Method: http.MethodPost, Header: http.Header{"Authorization": {"Bearer " + tok}}, Body: body, Now: now}
}

// TestVerifyRefusesEveryBadToken: in both token forms, each way a token
// can be wrong is a 401 and leaves nothing for Parse.
func TestVerifyRefusesEveryBadToken(t *testing.T) {
	t.Parallel()
	api, _ := issuers()
	body := sample(t, "message-dm.json")
	chat, google := api.ChatIssuer(), api.GoogleIssuer()
	forger := fakeissuer.New(fakeissuer.Options{Issuer: fakegooglechat.ChatIssuer, KeyID: chat.KeyID()})
	claims := func(iss *fakeissuer.Issuer, aud string, at time.Time, edit func(*jwt.RegisteredClaims)) jwt.RegisteredClaims {
		c := iss.Claims(aud, at, time.Hour)
		if edit != nil {
			edit(&c)
		}
		return c
	}
	project := testReceiver(t)
	const endpoint = "https://parley.example/googlechat"
	idMode := &Receiver{ProjectNumber: testProject, Audience: endpoint, Keys: jwks.New(jwks.Source{KeysURL: googleKeysURL()})}
	idToken := func(email string, verified bool, aud string, edit func(*jwt.RegisteredClaims)) string {
		return google.Sign(struct {
			jwt.RegisteredClaims
			Email         string `json:"email"`
			EmailVerified bool   `json:"email_verified"`
		}{claims(google, aud, sampleNow, edit), email, verified})
	}
	for name, c := range map[string]struct {
		r    *Receiver
		tok  string
		want error
	}{
		"Forged":             {project, forger.Sign(claims(forger, testProject, sampleNow, nil)), platform.ErrUnauthorized},
		"Expired":            {project, chat.Sign(claims(chat, testProject, sampleNow.Add(-2*time.Hour), nil)), platform.ErrStale},
		"WrongAudience":      {project, chat.Sign(claims(chat, "999999999999", sampleNow, nil)), platform.ErrUnauthorized},
		"WrongIssuer":        {project, chat.Sign(claims(chat, testProject, sampleNow, func(c *jwt.RegisteredClaims) { c.Issuer = "evil@example.com" })), platform.ErrUnauthorized},
		"IDTokenInChatMode":  {project, idToken(fakegooglechat.ChatIssuer, true, testProject, nil), platform.ErrUnauthorized},
		"IDTokenOtherEmail":  {idMode, idToken("someone@example.com", true, endpoint, nil), platform.ErrUnauthorized},
		"IDTokenUnverified":  {idMode, idToken(fakegooglechat.ChatIssuer, false, endpoint, nil), platform.ErrUnauthorized},
		"IDTokenOtherURL":    {idMode, idToken(fakegooglechat.ChatIssuer, true, endpoint+"x", nil), platform.ErrUnauthorized},
		"ChatTokenInURLMode": {idMode, chat.Sign(claims(chat, endpoint, sampleNow, nil)), platform.ErrUnauthorized},
	} {
		t.Run(name, func(t *testing.T) {
			req := bearer(c.tok, body, sampleNow)
			err := c.r.VerifyContext(t.Context(), req)
			if !errors.Is(err, c.want) || platform.StatusOf(err) != http.StatusUnauthorized || req.Verified != nil {
				t.Fatalf("VerifyContext = %v, want %v (401)", err, c.want)
			}
		})
	}
	t.Run("IDTokenOfChat", func(t *testing.T) {
		for _, email := range []string{fakegooglechat.ChatIssuer, "service-" + testProject + "@gcp-sa-gsuiteaddons.iam.gserviceaccount.com"} {
			if err := idMode.VerifyContext(t.Context(), bearer(idToken(email, true, endpoint, nil), body, sampleNow)); err != nil {
				t.Fatalf("%s: %v", email, err)
			}
		}
	})
}

// TestKeysUnreachableIs503AndRotationNeedsNoRestart: Chat's keys out of
// reach answer retryable; a rotated key verifies without a restart.
func TestKeysUnreachableIs503AndRotationNeedsNoRestart(t *testing.T) {
	t.Parallel()
	iss := fakeissuer.New(fakeissuer.Options{Issuer: fakegooglechat.ChatIssuer})
	srv := httptest.NewServer(iss)
	defer srv.Close()
	r := &Receiver{ProjectNumber: testProject, Keys: jwks.New(jwks.Source{KeysURL: srv.URL + fakeissuer.KeysPath})}
	body := sample(t, "message-dm.json")
	now := func() *platform.Request {
		return &platform.Request{Method: http.MethodPost, Header: fakegooglechat.SignFor(iss, testProject, time.Now()), Body: body, Now: time.Now()}
	}
	iss.SetDown(true)
	if err := r.VerifyContext(t.Context(), now()); !errors.Is(err, platform.ErrUnavailable) || platform.StatusOf(err) != http.StatusServiceUnavailable {
		t.Fatalf("keys down: %v", err)
	}
	iss.SetDown(false)
	time.Sleep(1100 * time.Millisecond)
	if err := r.VerifyContext(t.Context(), now()); err != nil {
		t.Fatal(err)
	}
	iss.Rotate(false)
	time.Sleep(jwks.DefaultNewKeyRefresh + 100*time.Millisecond)
	if err := r.VerifyContext(t.Context(), now()); err != nil {
		t.Fatalf("after the rotation: %v", err)
	}
}
