package jwks

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
)

// Errors a Set answers with. ErrUnavailable is the one a caller must not
// answer as a refusal: the keys could not be had, and the same request may
// verify once they can.
var (
	// ErrUnknownKey: the key set, as fresh as the refresh limit allows,
	// holds no key of that id.
	ErrUnknownKey = errors.New("jwks: no such key")
	// ErrUnavailable: the keys could not be fetched (the endpoint is
	// unreachable, slow, or answers something that is no key set).
	ErrUnavailable = errors.New("jwks: keys unavailable")
)

// Defaults of a Source.
const (
	// DefaultMaxAge is how long fetched keys are used before they are
	// fetched again. Microsoft says its keys may be cached for days (the
	// Bot Framework SDK keeps them 5 days); a day keeps a retired key from
	// lingering, at one fetch a day.
	DefaultMaxAge = 24 * time.Hour
	// DefaultMinRefresh is the least time between two fetches caused by
	// an unknown key id: a flood of tokens with forged key ids costs the
	// key endpoint one request per this interval, whatever its size.
	DefaultMinRefresh = 5 * time.Minute
	// DefaultNewKeyRefresh is the least time between fetches caused by an
	// unknown key id in a token issued after the last fetch: a key newer
	// than the set, as a rotation makes. Forged tokens can claim any issue
	// time, so this too is a floor: one fetch per this interval at most.
	DefaultNewKeyRefresh = 2 * time.Second
	// MaxDocument bounds a metadata document or key set, in bytes.
	MaxDocument = 256 << 10
	// DefaultFetchTimeout bounds one fetch when the caller's context has
	// no deadline of its own.
	DefaultFetchTimeout = 5 * time.Second
	// failedRetry is how long a failed fetch answers for the next ones.
	failedRetry = time.Second
)

// Source says where a platform publishes its signing keys.
type Source struct {
	// MetadataURL is an OpenID configuration document whose jwks_uri
	// names the key set (Bot Framework). Either it or KeysURL is set.
	MetadataURL string
	// KeysURL is the key set itself (Google's certs).
	KeysURL string
	// HTTP fetches them. Defaults to a client with DefaultFetchTimeout.
	HTTP *http.Client
	// MaxAge is how long keys are used before they are fetched again.
	// Defaults to DefaultMaxAge.
	MaxAge time.Duration
	// MinRefresh is the least time between fetches an unknown key id
	// causes. Defaults to DefaultMinRefresh.
	MinRefresh time.Duration
	// NewKeyRefresh is MinRefresh for a token issued after the last
	// fetch. Defaults to DefaultNewKeyRefresh.
	NewKeyRefresh time.Duration
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
}

// Key is one published signing key.
type Key struct {
	// ID is its kid.
	ID string
	// Public is the key, as jwkset parsed it (*rsa.PublicKey, …).
	Public crypto.PublicKey
	// Endorsements are the Bot Framework's extension to a JWK: the
	// channels the key may sign for ("msteams"). Empty elsewhere.
	Endorsements []string
}

// Set is a cached key set: fetched on first use, used until MaxAge, and
// fetched again when a token names a key it does not hold, at most once
// per MinRefresh. One fetch runs at a time; callers that need it wait for
// it, each no longer than its own context. It is safe for concurrent use.
type Set struct {
	src Source

	mu        sync.Mutex
	keys      map[string]Key
	fetchedAt time.Time     // last successful fetch
	triedAt   time.Time     // last fetch, successful or not
	inflight  chan struct{} // closed when the running fetch ends
	lastErr   error         // the running or last fetch's error
}

// New returns the key set src publishes. Nothing is fetched before it is
// needed.
func New(src Source) *Set { return &Set{src: src} }

func (s *Set) now() time.Time {
	if s.src.Now != nil {
		return s.src.Now()
	}
	return time.Now()
}

// Held returns the key of id if the set holds it now, without any I/O.
func (s *Set) Held(id string) (Key, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	return k, ok && s.fresh()
}

func (s *Set) fresh() bool {
	maxAge := s.src.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	return !s.fetchedAt.IsZero() && s.now().Sub(s.fetchedAt) < maxAge
}

// Key returns the key of id: from the cache while it is fresh, else after
// a fetch bounded by ctx. An id the cache lacks is fetched again unless a
// fetch ran less than MinRefresh ago, or NewKeyRefresh for a token issued
// after that fetch (issued, zero when unknown): ErrUnknownKey then. A fetch
// that fails is ErrUnavailable, unless stale keys hold the id: a key
// endpoint that is down does not stop verification with the keys already
// known.
func (s *Set) Key(ctx context.Context, id string, issued time.Time) (Key, error) {
	s.mu.Lock()
	k, held := s.keys[id]
	if held && s.fresh() {
		s.mu.Unlock()
		return k, nil
	}
	if s.inflight != nil {
		wait := s.inflight
		s.mu.Unlock()
		select {
		case <-wait:
			s.mu.Lock()
			k, held = s.keys[id]
			err := s.lastErr
			s.mu.Unlock()
			switch {
			case held:
				return k, nil
			case err != nil:
				return Key{}, err
			}
			return Key{}, fmt.Errorf("%w: %q", ErrUnknownKey, id)
		case <-ctx.Done():
			return Key{}, fmt.Errorf("%w: waiting for the key set: %v", ErrUnavailable, ctx.Err())
		}
	}
	minRefresh := s.src.MinRefresh
	if minRefresh <= 0 {
		minRefresh = DefaultMinRefresh
	}
	since := s.now().Sub(s.triedAt)
	if !issued.IsZero() && issued.After(s.fetchedAt) {
		// A key newer than the set may exist: a rotation.
		minRefresh = s.src.NewKeyRefresh
		if minRefresh <= 0 {
			minRefresh = DefaultNewKeyRefresh
		}
	}
	if s.fresh() && since < minRefresh && s.lastErr == nil {
		// Fresh keys, and a fetch ran a moment ago: an unknown id is
		// not worth another. (After a failed fetch, the pause below
		// applies instead: the endpoint's return is no new request.)
		s.mu.Unlock()
		return Key{}, fmt.Errorf("%w: %q", ErrUnknownKey, id)
	}
	if !held && s.lastErr != nil && since < failedRetry {
		// The endpoint failed a moment ago: every request that needs
		// it does not try it again at once.
		err := s.lastErr
		s.mu.Unlock()
		return Key{}, err
	}
	done := make(chan struct{})
	s.inflight, s.triedAt = done, s.now()
	s.mu.Unlock()

	keys, err := s.fetch(ctx)

	s.mu.Lock()
	if err == nil {
		s.keys, s.fetchedAt = keys, s.now()
	}
	s.lastErr = err
	s.inflight = nil
	close(done)
	k, held = s.keys[id]
	s.mu.Unlock()
	switch {
	case held:
		return k, nil
	case err != nil:
		return Key{}, err
	}
	return Key{}, fmt.Errorf("%w: %q", ErrUnknownKey, id)
}

// fetch reads the metadata document, when there is one, then the key set.
func (s *Set) fetch(ctx context.Context) (map[string]Key, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultFetchTimeout)
		defer cancel()
	}
	keysURL := s.src.KeysURL
	if s.src.MetadataURL != "" {
		var meta struct {
			JWKSURI string `json:"jwks_uri"`
		}
		if err := s.get(ctx, s.src.MetadataURL, &meta); err != nil {
			return nil, err
		}
		u, err := url.Parse(meta.JWKSURI)
		if err != nil || u.Host == "" || (u.Scheme != "https" && !sameOrigin(u, s.src.MetadataURL)) {
			// The keys are where the metadata says, over HTTPS (or where
			// the configured metadata itself is: a local fake).
			return nil, fmt.Errorf("%w: the metadata's jwks_uri is no https URL", ErrUnavailable)
		}
		keysURL = meta.JWKSURI
	}
	if keysURL == "" {
		return nil, fmt.Errorf("%w: no key set configured", ErrUnavailable)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := s.get(ctx, keysURL, &doc); err != nil {
		return nil, err
	}
	keys := map[string]Key{}
	for _, raw := range doc.Keys {
		k, ok := parseKey(raw)
		if ok {
			keys[k.ID] = k
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: the key set holds no usable key", ErrUnavailable)
	}
	return keys, nil
}

// parseKey reads one JWK with jwkset, and the endorsements beside it. A
// key jwkset refuses, or one without an id, is skipped: one bad key does
// not void the others.
func parseKey(raw json.RawMessage) (Key, bool) {
	var m jwkset.JWKMarshal
	var extra struct {
		Endorsements []string `json:"endorsements"`
	}
	if json.Unmarshal(raw, &m) != nil || json.Unmarshal(raw, &extra) != nil || m.KID == "" {
		return Key{}, false
	}
	if m.D != "" || m.K != "" {
		return Key{}, false // private or symmetric material has no place in a published set
	}
	// The certificate chain adds nothing to the key it carries (the set
	// is trusted as fetched over TLS), and jwkset would check it against
	// the key's thumbprint: only the public parameters are used.
	m.X5C, m.X5T, m.X5TS256, m.X5U = nil, "", "", ""
	jwk, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
	if err != nil || jwk.Key() == nil {
		return Key{}, false
	}
	return Key{ID: m.KID, Public: jwk.Key(), Endorsements: extra.Endorsements}, true
}

// get fetches u's JSON into v, bounded by ctx and MaxDocument.
func (s *Set) get(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("Accept", "application/json")
	client := s.src.HTTP
	if client == nil {
		client = &http.Client{Timeout: DefaultFetchTimeout}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnavailable, host(u), unwrapURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s answered HTTP %d", ErrUnavailable, host(u), resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocument+1))
	switch {
	case err != nil:
		return fmt.Errorf("%w: %s: %v", ErrUnavailable, host(u), err)
	case len(body) > MaxDocument:
		return fmt.Errorf("%w: %s sent more than %d bytes", ErrUnavailable, host(u), MaxDocument)
	case json.Unmarshal(body, v) != nil:
		return fmt.Errorf("%w: %s sent no JSON document", ErrUnavailable, host(u))
	}
	return nil
}

func host(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "the key endpoint"
	}
	return p.Scheme + "://" + p.Host
}

func unwrapURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

func sameOrigin(u *url.URL, other string) bool {
	o, err := url.Parse(other)
	return err == nil && strings.EqualFold(o.Scheme, u.Scheme) && strings.EqualFold(o.Host, u.Host)
}
