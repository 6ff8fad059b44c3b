// Package fakeissuer is a fake OpenID token issuer, the part of a platform
// that signs the tokens its webhooks carry (the Bot Framework's connector,
// Google's): RSA keys it can rotate, its JWKS and OpenID configuration
// served over HTTP, and real RS256 tokens signed with golang-jwt. It counts
// the fetches of its keys, and can be made unreachable, so that tests see
// what a verifier does with them.
package fakeissuer

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Paths the issuer serves below its root.
const (
	MetadataPath = "/v1/.well-known/openidconfiguration"
	KeysPath     = "/v1/.well-known/keys"
)

// Options configure an Issuer.
type Options struct {
	// Issuer is the iss of its tokens and its metadata.
	Issuer string
	// Endorsements are put on every key (the Bot Framework's channel
	// endorsements, "msteams"); none when empty.
	Endorsements []string
	// Key, when set, is its first signing key and KeyID that key's kid
	// (tokens checked in as fuzz seeds are signed with a fixed test key).
	// Unset: a new random key, "key-0". Rotations make random keys.
	Key   *rsa.PrivateKey
	KeyID string
}

// Issuer is a fake token issuer. It is safe for concurrent use.
type Issuer struct {
	opt Options

	mu      sync.Mutex
	keys    []*rsa.PrivateKey // the published keys, the signing key last
	ids     []string
	next    int
	root    string
	fetches atomic.Int64
	down    atomic.Bool
}

// New returns an issuer publishing one key.
func New(opt Options) *Issuer {
	iss := &Issuer{opt: opt}
	iss.Rotate(false)
	return iss
}

// SetRoot tells the issuer the URL it is served at (its metadata names
// its key set there).
func (iss *Issuer) SetRoot(root string) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.root = root
}

// Rotate publishes a new signing key. keepOld keeps the previous keys
// published beside it (a rotation with overlap); otherwise they are
// withdrawn at once.
func (iss *Issuer) Rotate(keepOld bool) string {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	var k *rsa.PrivateKey
	id := "key-" + strconv.Itoa(iss.next)
	if iss.next == 0 && iss.opt.Key != nil {
		k = iss.opt.Key
		if iss.opt.KeyID != "" {
			id = iss.opt.KeyID
		}
	} else {
		k = NewKey()
	}
	iss.next++
	if !keepOld {
		iss.keys, iss.ids = nil, nil
	}
	iss.keys = append(iss.keys, k)
	iss.ids = append(iss.ids, id)
	return id
}

// KeyID is the id of the current signing key.
func (iss *Issuer) KeyID() string {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	return iss.ids[len(iss.ids)-1]
}

// SetDown makes the key endpoints answer 503 (down) or work again.
func (iss *Issuer) SetDown(down bool) { iss.down.Store(down) }

// Fetches is how many times the key set was fetched.
func (iss *Issuer) Fetches() int64 { return iss.fetches.Load() }

// Sign signs claims with the current key, RS256, its kid in the header.
func (iss *Issuer) Sign(claims jwt.Claims) string {
	iss.mu.Lock()
	k, id := iss.keys[len(iss.keys)-1], iss.ids[len(iss.ids)-1]
	iss.mu.Unlock()
	return SignWith(k, id, claims)
}

// SignWith signs claims with key, RS256, kid in the header: a token of a
// key the issuer never published (a forgery), when key is not its own.
func SignWith(key *rsa.PrivateKey, kid string, claims jwt.Claims) string {
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = kid
	s, err := t.SignedString(key)
	if err != nil {
		panic(err) // an RSA key of Parley's own making always signs
	}
	return s
}

// Claims are the registered claims of a token issued at at for aud,
// valid for life.
func (iss *Issuer) Claims(aud string, at time.Time, life time.Duration) jwt.RegisteredClaims {
	return jwt.RegisteredClaims{
		Issuer:    iss.opt.Issuer,
		Audience:  jwt.ClaimStrings{aud},
		IssuedAt:  jwt.NewNumericDate(at),
		NotBefore: jwt.NewNumericDate(at),
		ExpiresAt: jwt.NewNumericDate(at.Add(life)),
	}
}

// ServeHTTP serves the metadata and the key set.
func (iss *Issuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if iss.down.Load() {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	switch r.URL.Path {
	case MetadataPath:
		iss.mu.Lock()
		root := iss.root
		iss.mu.Unlock()
		if root == "" {
			// Where the request came in, below any prefix it was
			// mounted under.
			path, _, _ := strings.Cut(r.RequestURI, "?")
			root = "http://" + r.Host + strings.TrimSuffix(path, MetadataPath)
		}
		writeJSON(w, map[string]any{
			"issuer":                                iss.opt.Issuer,
			"jwks_uri":                              root + KeysPath,
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	case KeysPath:
		iss.fetches.Add(1)
		writeJSON(w, iss.JWKS())
	default:
		http.NotFound(w, r)
	}
}

// JWKS is the published key set, as the issuer serves it.
func (iss *Issuer) JWKS() map[string]any {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	var keys []map[string]any
	for i, k := range iss.keys {
		jwk := map[string]any{
			"kty": "RSA", "use": "sig", "alg": "RS256", "kid": iss.ids[i],
			"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes()),
		}
		if len(iss.opt.Endorsements) > 0 {
			jwk["endorsements"] = iss.opt.Endorsements
		}
		keys = append(keys, jwk)
	}
	return map[string]any{"keys": keys}
}

// NewKey is a new 2048-bit RSA key.
func NewKey() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
