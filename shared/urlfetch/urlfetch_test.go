package urlfetch_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/urlfetch"
)

// server is a real TLS server on loopback that counts the requests reaching it.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) port(t *testing.T) uint16 {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.ParseUint(u.Port(), 10, 16)
	if err != nil {
		t.Fatal(err)
	}
	return uint16(p)
}

func (s *server) roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return pool
}

// optedIn is a fetcher whose operator allowed loopback and the server's port,
// as a local stack does.
func optedIn(t *testing.T, s *server, o urlfetch.Options) *urlfetch.Fetcher {
	t.Helper()
	o.AllowPrefixes = append(o.AllowPrefixes, netip.MustParsePrefix("127.0.0.1/32"))
	o.AllowPorts = append(o.AllowPorts, 443, s.port(t))
	o.RootCAs = s.roots()
	f, err := urlfetch.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func wantReason(t *testing.T, err error, want urlfetch.Reason) *urlfetch.Error {
	t.Helper()
	var fe *urlfetch.Error
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want an *urlfetch.Error with reason %s", err, want)
	}
	if fe.Reason != want {
		t.Fatalf("reason = %s (%v), want %s", fe.Reason, err, want)
	}
	return fe
}

func TestGetServesTheExactBytesOfAnAllowedURL(t *testing.T) {
	body := strings.Repeat("parley", 1000)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte(body))
	})
	got, err := optedIn(t, s, urlfetch.Options{}).Get(context.Background(), s.URL+"/a.png?sig=1")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Bytes) != body || got.ContentType != "image/png" {
		t.Fatalf("got %d bytes of %q, want %d of image/png", len(got.Bytes), got.ContentType, len(body))
	}
}

func TestRefusesPlainHTTP(t *testing.T) {
	var hits atomic.Int64
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer plain.Close()
	f, err := urlfetch.New(urlfetch.Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Get(context.Background(), plain.URL)
	wantReason(t, err, urlfetch.ReasonScheme)
	if hits.Load() != 0 {
		t.Fatal("a plain-HTTP URL was requested")
	}
}

// The address a name resolves to is checked at the connection: localhost
// passes every check of the URL itself.
func TestRefusesANameThatResolvesToLoopback(t *testing.T) {
	s := newServer(t, func(http.ResponseWriter, *http.Request) {})
	f, err := urlfetch.New(urlfetch.Options{AllowPorts: []uint16{s.port(t)}, RootCAs: s.roots()})
	if err != nil {
		t.Fatal(err)
	}
	raw := "https://localhost:" + strconv.Itoa(int(s.port(t))) + "/"
	if err := f.Check(raw); err != nil {
		t.Fatalf("Check(%s) = %v: a name is only refused once resolved", raw, err)
	}
	_, err = f.Get(context.Background(), raw)
	wantReason(t, err, urlfetch.ReasonAddress)
	if s.hits.Load() != 0 {
		t.Fatal("the loopback server was reached")
	}
}

func TestRefusesPrivateLoopbackLinkLocalAndMetadataAddresses(t *testing.T) {
	f, err := urlfetch.New(urlfetch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{
		"127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.0.1", "192.168.1.1", "100.64.0.1", "0.0.0.0",
		"169.254.169.254", // the EC2 and Lambda metadata service
		"169.254.170.2",   // the ECS task metadata endpoint
		"[::1]", "[fe80::1]", "[fc00::1]", "[fd00:ec2::254]", "[::ffff:127.0.0.1]", "[::ffff:169.254.169.254]", "[::]",
	} {
		raw := "https://" + host + "/file"
		wantReason(t, f.Check(raw), urlfetch.ReasonAddress)
		_, err := f.Get(context.Background(), raw)
		wantReason(t, err, urlfetch.ReasonAddress)
	}
}

func TestAllowsAPublicAddressByItsURL(t *testing.T) {
	f, err := urlfetch.New(urlfetch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"https://93.184.215.14/x.png", "https://[2606:4700::1]/x", "https://cdn.example.com/a/b.ogg?X-Amz-Signature=1"} {
		if err := f.Check(raw); err != nil {
			t.Errorf("Check(%s) = %v, want nil", raw, err)
		}
	}
}

func TestRefusesCredentialsAPortAndNonsense(t *testing.T) {
	f, err := urlfetch.New(urlfetch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]urlfetch.Reason{
		"https://user:pass@example.com/x": urlfetch.ReasonUserinfo,
		"https://example.com:8443/x":      urlfetch.ReasonPort,
		"https://example.com:99999/x":     urlfetch.ReasonInvalidURL,
		"file:///etc/passwd":              urlfetch.ReasonScheme,
		"gopher://example.com/":           urlfetch.ReasonScheme,
		"//example.com/x":                 urlfetch.ReasonInvalidURL,
		"https:///x":                      urlfetch.ReasonInvalidURL,
		"https:example.com":               urlfetch.ReasonInvalidURL,
		"https://exa mple.com/\x7f":       urlfetch.ReasonInvalidURL,
	} {
		wantReason(t, f.Check(raw), want)
	}
}

func TestRedirectsAreCheckedEveryTime(t *testing.T) {
	var target string
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/final" {
			_, _ = w.Write([]byte("ok"))
			return
		}
		http.Redirect(w, r, target, http.StatusFound)
	})
	f := optedIn(t, s, urlfetch.Options{})
	for dest, want := range map[string]urlfetch.Reason{
		strings.Replace(s.URL, "https:", "http:", 1) + "/final":        urlfetch.ReasonScheme,
		"https://127.0.0.2:" + strconv.Itoa(int(s.port(t))) + "/final": urlfetch.ReasonAddress,
		"https://169.254.169.254/latest/meta-data/":                    urlfetch.ReasonAddress,
	} {
		target = dest
		_, err := f.Get(context.Background(), s.URL+"/start")
		wantReason(t, err, want)
	}
	target = s.URL + "/final"
	if got, err := f.Get(context.Background(), s.URL+"/start"); err != nil || string(got.Bytes) != "ok" {
		t.Fatalf("a redirect to an allowed URL: %q, %v", got.Bytes, err)
	}
}

func TestRefusesTooManyRedirects(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		http.Redirect(w, r, "/loop?n="+strconv.Itoa(n+1), http.StatusFound)
	})
	_, err := optedIn(t, s, urlfetch.Options{MaxRedirects: 2}).Get(context.Background(), s.URL+"/loop?n=0")
	wantReason(t, err, urlfetch.ReasonRedirect)
	if got := s.hits.Load(); got != 3 {
		t.Fatalf("%d requests, want 3 (the first and two redirects)", got)
	}
}

func TestRefusesABodyOverTheBound(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			// No Content-Length: the bound holds while reading.
			for range 4 {
				_, _ = w.Write(make([]byte, 600))
				w.(http.Flusher).Flush()
			}
			return
		}
		_, _ = w.Write(make([]byte, 2001))
	})
	f := optedIn(t, s, urlfetch.Options{MaxBytes: 2000})
	for _, path := range []string{"/declared", "/chunked"} {
		_, err := f.Get(context.Background(), s.URL+path)
		wantReason(t, err, urlfetch.ReasonTooLarge)
	}
}

func TestATruncatedBodyIsAReasonNotData(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nContent-Length: 100\r\n\r\n0123456789")
		_ = buf.Flush()
	})
	s.Server.EnableHTTP2 = false
	_, err := optedIn(t, s, urlfetch.Options{}).Get(context.Background(), s.URL+"/doc.pdf")
	wantReason(t, err, urlfetch.ReasonTruncated)
}

func TestAServerTooSlowIsATimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	// The handler answers only when the test ends: not when its request's
	// context ends, since an answer written then could still reach a
	// client that has not given up yet on a loaded machine (CI saw the
	// fetch succeed once).
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	_, err := optedIn(t, s, urlfetch.Options{Timeout: 50 * time.Millisecond}).Get(context.Background(), s.URL)
	wantReason(t, err, urlfetch.ReasonTimeout)
}

func TestAnErrorStatusIsAReason(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	_, err := optedIn(t, s, urlfetch.Options{}).Get(context.Background(), s.URL+"/gone")
	if fe := wantReason(t, err, urlfetch.ReasonStatus); fe.Status != http.StatusNotFound {
		t.Fatalf("status %d, want 404", fe.Status)
	}
}

// A signed URL's query is a credential: no error text holds it.
func TestErrorsNeverHoldTheQuery(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	f := optedIn(t, s, urlfetch.Options{})
	closed := httptest.NewUnstartedServer(nil)
	addr := closed.Listener.Addr().String()
	closed.Listener.Close()
	for _, raw := range []string{
		s.URL + "/x?X-Amz-Signature=sekrit",                // a status
		"https://" + addr + "/x?X-Amz-Signature=sekrit",    // the network (a port that refuses)
		"http://example.com/x?X-Amz-Signature=sekrit",      // a scheme
		"https://10.0.0.1/x?X-Amz-Signature=sekrit#sekrit", // an address
	} {
		_, err := f.Get(context.Background(), raw)
		if err == nil || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("Get(%s) = %v: want an error without the query", raw, err)
		}
	}
}

func TestNewRefusesAnInvalidPrefix(t *testing.T) {
	if _, err := urlfetch.New(urlfetch.Options{AllowPrefixes: []netip.Prefix{{}}}); err == nil {
		t.Fatal("an invalid allowed prefix was accepted")
	}
}
