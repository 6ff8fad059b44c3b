package urlfetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"time"

	"code.dny.dev/ssrf"
)

// Reason names the rule a fetch broke. Its value is safe to log and to show
// an agent.
type Reason string

const (
	ReasonInvalidURL Reason = "invalid_url"        // not an absolute URL with a host
	ReasonScheme     Reason = "scheme_not_https"   // http, ftp, file, …
	ReasonUserinfo   Reason = "credentials_in_url" // user:pass@host
	ReasonAddress    Reason = "address_refused"    // private, loopback, link-local, metadata, …
	ReasonPort       Reason = "port_refused"       // a port the policy does not allow
	ReasonRedirect   Reason = "too_many_redirects"
	ReasonTooLarge   Reason = "too_large"
	ReasonTruncated  Reason = "truncated" // the body ended before its Content-Length
	ReasonTimeout    Reason = "timeout"
	ReasonStatus     Reason = "status"  // the server answered other than 200
	ReasonNetwork    Reason = "network" // no connection, TLS refused, reset
)

// Error is a refused or failed fetch. URL is the URL without its query and
// fragment, so it can be logged.
type Error struct {
	Reason Reason
	URL    string
	Status int   // the HTTP status, for ReasonStatus
	Err    error // the cause, where there is one
}

func (e *Error) Error() string {
	msg := "fetch " + e.URL + ": " + string(e.Reason)
	if e.Status != 0 {
		msg += " " + strconv.Itoa(e.Status)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Options bound a Fetcher. The zero value of each field takes its default.
type Options struct {
	// MaxBytes is the largest body accepted; default 20 MiB.
	MaxBytes int64
	// Timeout bounds the whole fetch, redirects and body included; default 20 s.
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed; default 3.
	MaxRedirects int
	// AllowPrefixes are address ranges an operator opted into, checked
	// before the refused ranges (e.g. 127.0.0.1/32 for a local stack).
	AllowPrefixes []netip.Prefix
	// AllowPorts replaces the ports allowed, 443 by default.
	AllowPorts []uint16
	// RootCAs replaces the system's roots (a private CA); nil keeps them.
	RootCAs *x509.CertPool
}

const (
	defaultMaxBytes     = 20 << 20
	defaultTimeout      = 20 * time.Second
	defaultMaxRedirects = 3
)

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = defaultMaxBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = defaultMaxRedirects
	}
	if len(o.AllowPorts) == 0 {
		o.AllowPorts = []uint16{443}
	}
	return o
}

// Fetcher gets URLs under the rules of the package doc. It is safe for
// concurrent use.
type Fetcher struct {
	opts   Options
	guard  *ssrf.Guardian
	client *http.Client
}

// Body is a fetched body with what its server said of it.
type Body struct {
	Bytes       []byte
	ContentType string // as the server sent it; a caller that cares sniffs the bytes
}

// New builds a Fetcher.
func New(o Options) (*Fetcher, error) {
	o = o.withDefaults()
	var v4, v6 []netip.Prefix
	for _, p := range o.AllowPrefixes {
		if !p.IsValid() {
			return nil, fmt.Errorf("urlfetch: invalid allowed prefix %v", p)
		}
		if p.Addr().Is4() {
			v4 = append(v4, p.Masked())
		} else {
			v6 = append(v6, p.Masked())
		}
	}
	f := &Fetcher{opts: o}
	f.guard = ssrf.New(ssrf.WithPorts(o.AllowPorts...), ssrf.WithAllowedV4Prefixes(v4...), ssrf.WithAllowedV6Prefixes(v6...))
	dialer := &net.Dialer{Timeout: o.Timeout, Control: f.guard.Safe}
	transport := &http.Transport{
		// No Proxy: through a proxy, the proxy's address is the only one
		// the dialer would check.
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   o.Timeout,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	f.client = &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > o.MaxRedirects {
				return &Error{Reason: ReasonRedirect, URL: redact(req.URL)}
			}
			return f.check(req.URL)
		},
	}
	return f, nil
}

// Check refuses what raw gives away before any request: see the package doc.
// A nil answer is no promise: the address a name resolves to is checked when
// Get connects.
func (f *Fetcher) Check(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return &Error{Reason: ReasonInvalidURL, URL: "(unparsable)"}
	}
	return f.check(u)
}

func (f *Fetcher) check(u *url.URL) error {
	shown := redact(u)
	switch {
	case !u.IsAbs() || u.Opaque != "":
		return &Error{Reason: ReasonInvalidURL, URL: shown}
	case u.Scheme != "https":
		return &Error{Reason: ReasonScheme, URL: shown}
	case u.User != nil:
		return &Error{Reason: ReasonUserinfo, URL: shown}
	case u.Hostname() == "":
		return &Error{Reason: ReasonInvalidURL, URL: shown}
	}
	port := uint16(443)
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return &Error{Reason: ReasonInvalidURL, URL: shown}
		}
		port = uint16(n)
	}
	// A literal address is checked now, so a refusal needs no dial.
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		return classify(f.guard.SafeAddrPort(netip.AddrPortFrom(ip, port)), shown)
	}
	if !slices.Contains(f.opts.AllowPorts, port) {
		return &Error{Reason: ReasonPort, URL: shown}
	}
	return nil
}

// classify turns a Guardian's refusal into an *Error.
func classify(err error, shown string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ssrf.ErrProhibitedPort):
		return &Error{Reason: ReasonPort, URL: shown, Err: err}
	case errors.Is(err, ssrf.ErrProhibitedIP), errors.Is(err, ssrf.ErrProhibitedNetwork), errors.Is(err, ssrf.ErrInvalidHostPort):
		return &Error{Reason: ReasonAddress, URL: shown, Err: err}
	}
	return &Error{Reason: ReasonNetwork, URL: shown, Err: err}
}

// Get fetches raw under the rules, and answers its body or an *Error.
func (f *Fetcher) Get(ctx context.Context, raw string) (Body, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Body{}, &Error{Reason: ReasonInvalidURL, URL: "(unparsable)"}
	}
	if err := f.check(u); err != nil {
		return Body{}, err
	}
	shown := redact(u)
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Body{}, &Error{Reason: ReasonInvalidURL, URL: shown}
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return Body{}, f.failure(ctx, err, shown)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Body{}, &Error{Reason: ReasonStatus, URL: shown, Status: resp.StatusCode}
	}
	if resp.ContentLength > f.opts.MaxBytes {
		return Body{}, &Error{Reason: ReasonTooLarge, URL: shown}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, f.opts.MaxBytes+1))
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Body{}, &Error{Reason: ReasonTruncated, URL: shown, Err: err}
	case err != nil:
		return Body{}, f.failure(ctx, err, shown)
	case int64(len(b)) > f.opts.MaxBytes:
		return Body{}, &Error{Reason: ReasonTooLarge, URL: shown}
	case resp.ContentLength >= 0 && int64(len(b)) != resp.ContentLength:
		return Body{}, &Error{Reason: ReasonTruncated, URL: shown}
	}
	return Body{Bytes: b, ContentType: resp.Header.Get("Content-Type")}, nil
}

// failure classifies an error of the client: a refusal it carries (from the
// dialer or a redirect check), the deadline, or the network.
func (f *Fetcher) failure(ctx context.Context, err error, shown string) error {
	// A *url.Error's text holds the whole URL, query included: keep its cause.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	if errors.Is(err, ssrf.ErrProhibitedIP) || errors.Is(err, ssrf.ErrProhibitedPort) || errors.Is(err, ssrf.ErrProhibitedNetwork) {
		return classify(err, shown)
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Reason: ReasonTimeout, URL: shown}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Reason: ReasonTimeout, URL: shown}
	}
	return &Error{Reason: ReasonNetwork, URL: shown, Err: err}
}

// redact is u without credentials, query or fragment: what may be logged.
func redact(u *url.URL) string {
	c := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return c.String()
}
