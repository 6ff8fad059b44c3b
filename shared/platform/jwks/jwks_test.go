package jwks_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeissuer"
	"github.com/parleyhq/parley/shared/platform/jwks"
)

const (
	testIssuer = "https://api.botframework.com"
	testAud    = "00000000-0000-0000-0000-00000000a001"
)

var now = time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)

type fixture struct {
	iss *fakeissuer.Issuer
	srv *httptest.Server
	set *jwks.Set
	at  time.Time
}

func setup(t *testing.T) *fixture {
	t.Helper()
	iss := fakeissuer.New(fakeissuer.Options{Issuer: testIssuer, Endorsements: []string{"msteams"}})
	srv := httptest.NewServer(iss)
	t.Cleanup(srv.Close)
	f := &fixture{iss: iss, srv: srv, at: now}
	f.set = jwks.New(jwks.Source{MetadataURL: srv.URL + fakeissuer.MetadataPath, HTTP: srv.Client(), Now: func() time.Time { return f.at }})
	return f
}

func (f *fixture) expect() jwks.Expect {
	return jwks.Expect{Issuers: []string{testIssuer}, Audience: testAud, Leeway: 5 * time.Minute, Now: f.at}
}

func (f *fixture) verify(t *testing.T, token string) (jwks.Key, error) {
	t.Helper()
	return f.set.Verify(t.Context(), token, f.expect(), &jwt.RegisteredClaims{})
}

func TestVerify(t *testing.T) {
	t.Parallel()
	f := setup(t)
	good := f.iss.Sign(f.iss.Claims(testAud, now, time.Hour))
	k, err := f.verify(t, good)
	if err != nil {
		t.Fatalf("a true token: %v", err)
	}
	if k.ID != f.iss.KeyID() || len(k.Endorsements) != 1 || k.Endorsements[0] != "msteams" {
		t.Fatalf("key %+v", k)
	}
	forger := fakeissuer.NewKey()
	wrongIss := f.iss.Claims(testAud, now, time.Hour)
	wrongIss.Issuer = "https://evil.example"
	for name, c := range map[string]struct {
		token string
		want  error
	}{
		"Forged":        {fakeissuer.SignWith(forger, f.iss.KeyID(), f.iss.Claims(testAud, now, time.Hour)), jwks.ErrInvalid},
		"ForgedKid":     {fakeissuer.SignWith(forger, "forged", f.iss.Claims(testAud, now, time.Hour)), jwks.ErrUnknownKey},
		"Expired":       {f.iss.Sign(f.iss.Claims(testAud, now.Add(-2*time.Hour), time.Hour)), jwks.ErrExpired},
		"NotYetValid":   {f.iss.Sign(f.iss.Claims(testAud, now.Add(time.Hour), time.Hour)), jwks.ErrExpired},
		"WrongAudience": {f.iss.Sign(f.iss.Claims(testAud+"x", now, time.Hour)), jwks.ErrInvalid},
		"WrongIssuer":   {f.iss.Sign(wrongIss), jwks.ErrInvalid},
		"NoExpiry":      {f.iss.Sign(jwt.RegisteredClaims{Issuer: testIssuer, Audience: jwt.ClaimStrings{testAud}}), jwks.ErrInvalid},
		"AlgNone":       {unsigned(f.iss.Claims(testAud, now, time.Hour), f.iss.KeyID()), jwks.ErrInvalid},
		"Garbage":       {"a.b.c", jwks.ErrInvalid},
		"Empty":         {"", jwks.ErrInvalid},
		"Huge":          {strings.Repeat("a", jwks.MaxToken) + ".b.c", jwks.ErrInvalid},
		"TamperedBody":  {tamper(good), jwks.ErrInvalid},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := f.verify(t, c.token); !errors.Is(err, c.want) {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
		})
	}
	t.Run("WithinTheLeeway", func(t *testing.T) {
		if _, err := f.verify(t, f.iss.Sign(f.iss.Claims(testAud, now.Add(-time.Hour-4*time.Minute), time.Hour))); err != nil {
			t.Fatalf("a token expired 4 minutes ago, leeway 5: %v", err)
		}
	})
}

// A token with alg none, which golang-jwt refuses unless told otherwise.
func unsigned(c jwt.Claims, kid string) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodNone, c)
	tok.Header["kid"] = kid
	s, _ := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
	return s
}

func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	claims, _ := jwt.NewParser().DecodeSegment(parts[1])
	changed := strings.Replace(string(claims), testAud, testAud[:len(testAud)-1]+"2", 1)
	parts[1] = base64.RawURLEncoding.EncodeToString([]byte(changed))
	return strings.Join(parts, ".")
}

// TestKeysAreCached: many verifications, one fetch.
func TestKeysAreCached(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.iss.Sign(f.iss.Claims(testAud, now, time.Hour))
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := f.set.Verify(context.Background(), tok, f.expect(), &jwt.RegisteredClaims{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := f.iss.Fetches(); n != 1 {
		t.Fatalf("%d fetches, want 1", n)
	}
	f.at = f.at.Add(jwks.DefaultMaxAge + time.Minute)
	_, _ = f.set.Verify(t.Context(), f.iss.Sign(f.iss.Claims(testAud, f.at, time.Hour)), jwks.Expect{Issuers: []string{testIssuer}, Audience: testAud, Now: f.at}, &jwt.RegisteredClaims{})
	if n := f.iss.Fetches(); n != 2 {
		t.Fatalf("%d fetches after the keys' max age, want 2", n)
	}
}

// TestRotationIsFetchedOnAnUnknownKid: a token of a new key verifies at
// once, without a restart.
func TestRotationIsFetchedOnAnUnknownKid(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if _, err := f.verify(t, f.iss.Sign(f.iss.Claims(testAud, now, time.Hour))); err != nil {
		t.Fatal(err)
	}
	f.iss.Rotate(false)
	f.at = f.at.Add(jwks.DefaultNewKeyRefresh + time.Second)
	if _, err := f.verify(t, f.iss.Sign(f.iss.Claims(testAud, f.at, time.Hour))); err != nil {
		t.Fatalf("a token of the rotated key, issued after the last fetch: %v", err)
	}
	if n := f.iss.Fetches(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}
	// A token of an unknown key issued before the last fetch waits for
	// MinRefresh: its key would have been in that fetch.
	old := fakeissuer.SignWith(fakeissuer.NewKey(), "older", f.iss.Claims(testAud, now, 3*time.Hour))
	f.at = f.at.Add(jwks.DefaultNewKeyRefresh + time.Second)
	if _, err := f.verify(t, old); !errors.Is(err, jwks.ErrUnknownKey) || f.iss.Fetches() != 2 {
		t.Fatalf("old token of an unknown key: %v after %d fetches", err, f.iss.Fetches())
	}
}

// TestForgedKidsAreRateLimited: a flood of tokens naming keys nobody
// published costs the key endpoint one fetch per MinRefresh.
func TestForgedKidsAreRateLimited(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if _, err := f.verify(t, f.iss.Sign(f.iss.Claims(testAud, now, time.Hour))); err != nil {
		t.Fatal(err)
	}
	forger := fakeissuer.NewKey()
	for i := range 100 {
		f.at = now.Add(time.Duration(i) * time.Second)
		tok := fakeissuer.SignWith(forger, "forged-"+string(rune('a'+i%26)), f.iss.Claims(testAud, f.at, time.Hour))
		if _, err := f.verify(t, tok); !errors.Is(err, jwks.ErrUnknownKey) {
			t.Fatalf("forged kid: %v", err)
		}
	}
	// 100 s of forgeries, each claiming to be issued now (after the last
	// fetch): at most one fetch per NewKeyRefresh.
	if n, most := f.iss.Fetches(), int64(1+100*time.Second/jwks.DefaultNewKeyRefresh+1); n > most {
		t.Fatalf("%d fetches for 100 forged kids, want at most %d", n, most)
	}
}

// TestUnreachableKeysAreUnavailable: no key set, no verdict: the error is
// ErrUnavailable (a retryable 5xx), never ErrInvalid.
func TestUnreachableKeysAreUnavailable(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.iss.SetDown(true)
	if _, err := f.verify(t, f.iss.Sign(f.iss.Claims(testAud, now, time.Hour))); !errors.Is(err, jwks.ErrUnavailable) || errors.Is(err, jwks.ErrInvalid) {
		t.Fatalf("Verify with the issuer down = %v, want ErrUnavailable", err)
	}
	f.iss.SetDown(false)
	f.at = f.at.Add(2 * time.Second)
	if _, err := f.verify(t, f.iss.Sign(f.iss.Claims(testAud, f.at, time.Hour))); err != nil {
		t.Fatalf("once the issuer is back: %v", err)
	}
	// A dead address, and a deadline shorter than a slow endpoint.
	dead := jwks.New(jwks.Source{KeysURL: "http://127.0.0.1:1/keys"})
	if _, err := dead.Key(t.Context(), "k", time.Time{}); !errors.Is(err, jwks.ErrUnavailable) {
		t.Fatalf("dead endpoint: %v", err)
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := jwks.New(jwks.Source{KeysURL: slow.URL}).Key(ctx, "k", time.Time{}); !errors.Is(err, jwks.ErrUnavailable) {
		t.Fatalf("slow endpoint: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("the fetch outlived its deadline")
	}
}

// TestStaleKeysServeWhileTheEndpointIsDown: keys past their max age still
// verify when the refresh fails.
func TestStaleKeysServeWhileTheEndpointIsDown(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if _, err := f.verify(t, f.iss.Sign(f.iss.Claims(testAud, now, time.Hour))); err != nil {
		t.Fatal(err)
	}
	f.iss.SetDown(true)
	f.at = f.at.Add(jwks.DefaultMaxAge + time.Hour)
	if _, err := f.verify(t, f.iss.Sign(f.iss.Claims(testAud, f.at, time.Hour))); err != nil {
		t.Fatalf("stale key, endpoint down: %v", err)
	}
}

func TestOversizedKeySetIsUnavailable(t *testing.T) {
	t.Parallel()
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"keys":["` + strings.Repeat("a", jwks.MaxDocument) + `"]}`))
	}))
	defer big.Close()
	if _, err := jwks.New(jwks.Source{KeysURL: big.URL}).Key(t.Context(), "k", time.Time{}); !errors.Is(err, jwks.ErrUnavailable) {
		t.Fatalf("oversized key set: %v", err)
	}
}

// TestRotationDuringAnOutageIsFetchedOnceBack: a failed fetch does not use
// up the refresh an unknown key id is owed: once the endpoint is back, the
// new key is fetched (not refused for a second).
func TestRotationDuringAnOutageIsFetchedOnceBack(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if _, err := f.verify(t, f.iss.Sign(f.iss.Claims(testAud, now, time.Hour))); err != nil {
		t.Fatal(err)
	}
	f.iss.Rotate(false)
	f.iss.SetDown(true)
	f.at = f.at.Add(jwks.DefaultNewKeyRefresh + time.Second)
	if _, err := f.verify(t, f.iss.Sign(f.iss.Claims(testAud, f.at, time.Hour))); !errors.Is(err, jwks.ErrUnavailable) {
		t.Fatalf("new key, endpoint down: %v", err)
	}
	f.iss.SetDown(false)
	f.at = f.at.Add(1100 * time.Millisecond)
	if _, err := f.verify(t, f.iss.Sign(f.iss.Claims(testAud, f.at, time.Hour))); err != nil {
		t.Fatalf("new key, endpoint back: %v", err)
	}
}
