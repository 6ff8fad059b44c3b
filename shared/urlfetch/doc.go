// Package urlfetch fetches a URL that someone outside Parley handed it — an
// agent's media link, say — without letting that someone point Parley at
// its own network.
//
// The rule (docs/security.md): Parley fetches a URL it was given only over
// HTTPS, never to a private, loopback, link-local or metadata address, checked
// after DNS resolution and again on every redirect, bounded in size and in
// time. A Fetcher enforces it in three places:
//
//   - before any request, Check refuses what the URL alone gives away: a
//     scheme other than https, credentials in the URL, no host, a port it
//     does not allow, a literal IP in a refused range;
//   - at every connection, the dialer's Control hook checks the address the
//     name resolved to (code.dny.dev/ssrf's Guardian: only public unicast
//     addresses pass, by the IANA special-purpose registries), so a name that
//     resolves to 127.0.0.1 or 169.254.169.254 — or rebinds to it between a
//     check and the connection — is refused at the socket; no proxy is used,
//     since a proxy would be the only address checked;
//   - every redirect is checked like the first URL, and there are at most
//     Options.MaxRedirects of them.
//
// A body over Options.MaxBytes is refused (by its Content-Length before it is
// read, or once it grows past the bound), and the whole fetch, body
// included, ends at Options.Timeout. Every refusal is an *Error whose Reason
// says which rule, so a caller can tell the agent or an operator why,
// without the URL's query (which may hold a token) ever reaching a log.
//
//	f, err := urlfetch.New(urlfetch.Options{MaxBytes: 20 << 20})
//	body, err := f.Get(ctx, agentURL)
//	var fe *urlfetch.Error
//	if errors.As(err, &fe) { unit fails with fe.Reason }
//
// An operator who must fetch from an address of their own (a local stack on
// loopback, a bucket behind a VPC endpoint) opts in with
// Options.AllowPrefixes and Options.AllowPorts; nothing is allowed by
// default.
package urlfetch
