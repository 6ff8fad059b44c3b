package standardwebhooks_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// FuzzVerify feeds arbitrary header values and bodies to Verify. It must never
// panic, must only fail with its sentinels, and may only succeed when one of
// the listed signatures is exactly what the secret gives for this message.
func FuzzVerify(f *testing.F) {
	f.Add(vectorID, "1614265330", vectorSignature, vectorBody)
	f.Add("msg_1", "1614265330", "v1,abc v1a,def v1,"+strings.Repeat("A", 43)+"=", "{}")
	f.Add("", "", "", "")
	f.Add("id", "-1", "v1,,,, v1", "x")
	f.Add("a.b", "99999999999999999999", "v2,x", "\x00\xff")
	secret := mustSecret(f, vectorSecret)
	v := standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{mustSecret(f, "other"), secret}}
	now := time.Unix(1614265330, 0)

	f.Fuzz(func(t *testing.T, id, ts, sig, body string) {
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", ts)
		h.Set("webhook-signature", sig)
		got, err := v.Verify(h, []byte(body), now)
		if err != nil {
			for _, want := range []error{standardwebhooks.ErrMissingHeaders, standardwebhooks.ErrBadTimestamp, standardwebhooks.ErrStale, standardwebhooks.ErrNoMatch} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("unclassified error %v", err)
		}
		if got != id {
			t.Fatalf("Verify returned id %q, header held %q", got, id)
		}
		// Success: some listed v1 signature must be the expected one for
		// the canonical timestamp.
		unix, perr := strconv.ParseInt(ts, 10, 64)
		if perr != nil {
			t.Fatalf("accepted timestamp %q", ts)
		}
		ok := false
		for _, s := range []standardwebhooks.Secret{secret, mustSecret(t, "other")} {
			for _, entry := range strings.Fields(sig) {
				if entry == standardwebhooks.Sign(s, id, time.Unix(unix, 0), []byte(body)) {
					ok = true
				}
			}
		}
		if !ok {
			t.Fatalf("accepted a signature nobody computed: id=%q ts=%q sig=%q", id, ts, sig)
		}
	})
}

// FuzzSignVerifyRoundTrip: whatever the id and body, what SetHeaders writes
// verifies, and flipping any body byte breaks it.
func FuzzSignVerifyRoundTrip(f *testing.F) {
	f.Add("turn_1", []byte(`{"a":1}`), int64(1_700_000_000), uint(3))
	f.Add("evt#slack#T1#C1:1700000000.000100", []byte{}, int64(0), uint(0))
	f.Fuzz(func(t *testing.T, id string, body []byte, unix int64, flip uint) {
		if id == "" || unix < 0 || unix > 1e15 {
			return
		}
		sec := mustSecret(t, vectorSecret)
		h := http.Header{}
		standardwebhooks.SetHeaders(h, sec, id, time.Unix(unix, 0), body)
		v := standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{sec}}
		if got, err := v.Verify(h, body, time.Unix(unix, 0)); err != nil || got != id {
			t.Fatalf("round trip: %q, %v", got, err)
		}
		if len(body) == 0 {
			return
		}
		tampered := append([]byte(nil), body...)
		tampered[flip%uint(len(body))] ^= 0x01
		if _, err := v.Verify(h, tampered, time.Unix(unix, 0)); !errors.Is(err, standardwebhooks.ErrNoMatch) {
			t.Fatalf("tampered body: err = %v, want ErrNoMatch", err)
		}
	})
}

// FuzzParseSecret: any configured string either parses into a usable key or
// fails with ErrBadSecret; never a panic.
func FuzzParseSecret(f *testing.F) {
	f.Add(vectorSecret)
	f.Add("whsec_")
	f.Add("whsec_YWJj")
	f.Add("plain")
	f.Add(" x ")
	f.Fuzz(func(t *testing.T, s string) {
		sec, err := standardwebhooks.ParseSecret(s)
		if err != nil {
			if !errors.Is(err, standardwebhooks.ErrBadSecret) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if sec.IsZero() {
			t.Fatal("parsed a zero secret")
		}
		_ = standardwebhooks.Sign(sec, "id", time.Unix(1, 0), []byte(s))
	})
}
