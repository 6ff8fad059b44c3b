package urlfetch_test

import (
	"errors"
	"net/netip"
	"net/url"
	"testing"

	"github.com/parleyhq/parley/shared/urlfetch"
)

// FuzzCheck: whatever an agent writes as a URL, Check answers without
// panicking, and what it accepts is an https URL with a host, no credentials,
// on port 443, and no literal address outside public unicast.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		"https://example.com/a.png", "http://example.com/", "https://127.0.0.1/", "https://[::ffff:10.0.0.1]/",
		"https://user@example.com/", "https://example.com:444/", "https://169.254.169.254/latest",
		"https://0x7f.0.0.1/", "https://2130706433/", "https://[fe80::1%25eth0]/", "HTTPS://EXAMPLE.COM/",
		"https://example.com:0443/", "", "%", "https://", "https://[::1]:443/",
	} {
		f.Add(seed)
	}
	fetcher, err := urlfetch.New(urlfetch.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := fetcher.Check(raw)
		if err != nil {
			var fe *urlfetch.Error
			if !errors.As(err, &fe) || fe.Reason == "" {
				t.Fatalf("Check(%q) = %v, not a reasoned *Error", raw, err)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil {
			t.Fatalf("Check accepted %q, which does not parse: %v", raw, perr)
		}
		if u.Scheme != "https" || u.Hostname() == "" || u.User != nil {
			t.Fatalf("Check accepted %q", raw)
		}
		if p := u.Port(); p != "" && p != "443" && p != "0443" && p != "00443" {
			t.Fatalf("Check accepted %q on port %s", raw, p)
		}
		if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
			ip = ip.Unmap()
			if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() || ip.IsMulticast() {
				t.Fatalf("Check accepted %q, a refused address", raw)
			}
		}
	})
}
