package standardwebhooks_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/standardwebhooks"
)

// The test vector published with the reference libraries
// (standard-webhooks/standard-webhooks, libraries/go/webhook_test.go).
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorUnix      = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func mustSecret(t testing.TB, s string) standardwebhooks.Secret {
	t.Helper()
	sec, err := standardwebhooks.ParseSecret(s)
	if err != nil {
		t.Fatalf("ParseSecret: %v", err)
	}
	return sec
}

// handSign computes a signature the long way, independently of the package.
func handSign(key []byte, id string, unix int64, body string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(unix, 10) + "." + body))
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func TestSignPublishedVector(t *testing.T) {
	got := standardwebhooks.Sign(mustSecret(t, vectorSecret), vectorID, time.Unix(vectorUnix, 0), []byte(vectorBody))
	if got != vectorSignature {
		t.Fatalf("Sign = %q, want the published %q", got, vectorSignature)
	}
	// Unpadded base64 after whsec_ is the same key.
	unpadded := strings.TrimRight(vectorSecret, "=")
	if got := standardwebhooks.Sign(mustSecret(t, unpadded), vectorID, time.Unix(vectorUnix, 0), []byte(vectorBody)); got != vectorSignature {
		t.Fatalf("unpadded secret: Sign = %q, want %q", got, vectorSignature)
	}
}

func TestSignMatchesHandComputedHMAC(t *testing.T) {
	body := `{"turn_id":"t1","text":"héllo"}`
	ts := time.Unix(1700000000, 999_000_000) // sub-second part is dropped
	t.Run("RawSecretIsKeyBytes", func(t *testing.T) {
		got := standardwebhooks.Sign(mustSecret(t, "correct horse battery"), "t1", ts, []byte(body))
		if want := handSign([]byte("correct horse battery"), "t1", 1700000000, body); got != want {
			t.Fatalf("Sign = %q, want %q", got, want)
		}
	})
	t.Run("WhsecSecretIsBase64Key", func(t *testing.T) {
		key := []byte("0123456789abcdef01234567")
		secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
		got := standardwebhooks.Sign(mustSecret(t, secret), "t1", ts, []byte(body))
		if want := handSign(key, "t1", 1700000000, body); got != want {
			t.Fatalf("Sign = %q, want %q", got, want)
		}
		// The raw string would be a different key.
		if raw := handSign([]byte(secret), "t1", 1700000000, body); got == raw {
			t.Fatal("whsec_ secret was used as raw bytes")
		}
	})
}

func TestSetHeaders(t *testing.T) {
	h := http.Header{}
	sec := mustSecret(t, vectorSecret)
	standardwebhooks.SetHeaders(h, sec, vectorID, time.Unix(vectorUnix, 0), []byte(vectorBody))
	for name, want := range map[string]string{
		"webhook-id":        vectorID,
		"webhook-timestamp": strconv.Itoa(vectorUnix),
		"webhook-signature": vectorSignature,
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestParseSecret(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"Whsec", vectorSecret, true},
		{"WhsecUnpadded", "whsec_" + base64.RawStdEncoding.EncodeToString([]byte("abcd")), true},
		{"Raw", "plain-secret", true},
		{"RawThatLooksLikeBase64", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", true},
		{"Empty", "", false},
		{"PrefixOnly", "whsec_", false},
		{"WhsecNotBase64", "whsec_not base64!!", false},
		{"WhsecURLAlphabet", "whsec_-_-_", false},
		{"TrailingNewline", "plain-secret\n", false},
		{"LeadingSpace", " whsec_YWJjZA==", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sec, err := standardwebhooks.ParseSecret(tc.in)
			if tc.ok {
				if err != nil || sec.IsZero() {
					t.Fatalf("ParseSecret(%q) = zero %v, %v; want a key", tc.in, sec.IsZero(), err)
				}
				return
			}
			if !errors.Is(err, standardwebhooks.ErrBadSecret) {
				t.Fatalf("ParseSecret(%q) err = %v, want ErrBadSecret", tc.in, err)
			}
			if body := strings.TrimPrefix(strings.TrimSpace(tc.in), "whsec_"); len(body) > 3 && strings.Contains(err.Error(), body) {
				t.Fatalf("error %q holds the secret", err)
			}
		})
	}
	t.Run("RawIsNotDecoded", func(t *testing.T) {
		// Without the prefix, base64-looking text is still the key itself.
		raw := "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		got := standardwebhooks.Sign(mustSecret(t, raw), "id", time.Unix(1, 0), nil)
		if want := handSign([]byte(raw), "id", 1, ""); got != want {
			t.Fatalf("Sign = %q, want %q", got, want)
		}
	})
}

func TestSecretNeverPrints(t *testing.T) {
	const raw = "hunter2-super-secret"
	sec := mustSecret(t, raw)
	type config struct {
		Name   string
		Secret standardwebhooks.Secret
	}
	c := config{Name: "agent", Secret: sec}
	var outputs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%o", "%b"} {
		outputs = append(outputs, fmt.Sprintf(verb, sec), fmt.Sprintf(verb, c), fmt.Sprintf(verb, &c))
	}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(js))
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("cfg", "secret", sec, "config", c)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("cfg", "secret", sec, "config", c)
	outputs = append(outputs, buf.String())

	keyHex := fmt.Sprintf("%x", []byte(raw))
	keyDec := fmt.Sprint([]byte(raw))
	for _, out := range outputs {
		if strings.Contains(out, raw) || strings.Contains(out, keyHex) || strings.Contains(out, keyDec) ||
			strings.Contains(strings.ToLower(out), "68756e746572") {
			t.Errorf("output reveals the key: %s", out)
		}
		if !strings.Contains(out, "[redacted]") && !strings.Contains(out, "5b72656461637465645d") && !strings.Contains(out, "5B72656461637465645D") {
			t.Errorf("output lacks [redacted]: %s", out)
		}
	}
}

type signed struct {
	h    http.Header
	body []byte
}

func sign(t testing.TB, secret, id string, unix int64, body string) signed {
	h := http.Header{}
	standardwebhooks.SetHeaders(h, mustSecret(t, secret), id, time.Unix(unix, 0), []byte(body))
	return signed{h: h, body: []byte(body)}
}

func TestVerify(t *testing.T) {
	const (
		cur  = "whsec_" + "Y3VycmVudC1zZWNyZXQtMjQtYnl0ZXMh" // "current-secret-24-bytes!"
		old  = "old-plain-secret"
		body = `{"version":"parley.turn.v1","turn_id":"evt#telegram#1#2"}`
		id   = "evt#telegram#1#2"
		unix = 1_700_000_000
	)
	now := time.Unix(unix, 0)
	v := standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{mustSecret(t, cur), mustSecret(t, old)}}

	for _, tc := range []struct {
		name    string
		req     func() signed
		now     time.Time
		v       *standardwebhooks.Verifier
		wantErr error
	}{
		{name: "Valid", req: func() signed { return sign(t, cur, id, unix, body) }},
		{name: "RotationSecondSecretMatches", req: func() signed { return sign(t, old, id, unix, body) }},
		{name: "UnknownSecret", req: func() signed { return sign(t, "someone-else", id, unix, body) }, wantErr: standardwebhooks.ErrNoMatch},
		{name: "MultipleSignaturesOneValid", req: func() signed {
			s := sign(t, cur, id, unix, body)
			valid := s.h.Get("webhook-signature")
			s.h.Set("webhook-signature", strings.Join([]string{
				sign(t, "wrong", id, unix, body).h.Get("webhook-signature"),
				"v2," + strings.TrimPrefix(valid, "v1,"),
				"v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==",
				"garbage", "v1,", "v1,!!!",
				valid,
			}, " "))
			return s
		}},
		{name: "SignatureInSecondHeaderLine", req: func() signed {
			s := sign(t, cur, id, unix, body)
			valid := s.h.Get("webhook-signature")
			s.h.Set("webhook-signature", sign(t, "wrong", id, unix, body).h.Get("webhook-signature"))
			s.h.Add("webhook-signature", valid)
			return s
		}},
		{name: "ValidSignatureUnderOtherVersion", req: func() signed {
			s := sign(t, cur, id, unix, body)
			s.h.Set("webhook-signature", "v2,"+strings.TrimPrefix(s.h.Get("webhook-signature"), "v1,"))
			return s
		}, wantErr: standardwebhooks.ErrNoMatch},
		{name: "TamperedBody", req: func() signed {
			s := sign(t, cur, id, unix, body)
			s.body = bytes.Replace(s.body, []byte("#2"), []byte("#3"), 1)
			return s
		}, wantErr: standardwebhooks.ErrNoMatch},
		{name: "BodyWithTrailingNewline", req: func() signed {
			s := sign(t, cur, id, unix, body)
			s.body = append(s.body, '\n')
			return s
		}, wantErr: standardwebhooks.ErrNoMatch},
		{name: "TamperedID", req: func() signed {
			s := sign(t, cur, id, unix, body)
			s.h.Set("webhook-id", id+"x")
			return s
		}, wantErr: standardwebhooks.ErrNoMatch},
		{name: "TamperedTimestamp", req: func() signed {
			s := sign(t, cur, id, unix, body)
			s.h.Set("webhook-timestamp", strconv.Itoa(unix+1))
			return s
		}, wantErr: standardwebhooks.ErrNoMatch},
		{name: "NonCanonicalBase64", req: func() signed {
			// Flip the unused low bits of the last character: the same
			// bytes to a lax decoder, refused by a strict one.
			s := sign(t, cur, id, unix, body)
			sig := s.h.Get("webhook-signature") // 44 chars, "X=" at the end
			last := sig[len(sig)-2]
			alt := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", last) ^ 1
			s.h.Set("webhook-signature", sig[:len(sig)-2]+string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[alt])+"=")
			return s
		}, wantErr: standardwebhooks.ErrNoMatch},
		{name: "TruncatedSignature", req: func() signed {
			s := sign(t, cur, id, unix, body)
			s.h.Set("webhook-signature", s.h.Get("webhook-signature")[:20])
			return s
		}, wantErr: standardwebhooks.ErrNoMatch},
		{name: "MissingID", req: func() signed {
			s := sign(t, cur, id, unix, body)
			s.h.Del("webhook-id")
			return s
		}, wantErr: standardwebhooks.ErrMissingHeaders},
		{name: "MissingTimestamp", req: func() signed {
			s := sign(t, cur, id, unix, body)
			s.h.Del("webhook-timestamp")
			return s
		}, wantErr: standardwebhooks.ErrMissingHeaders},
		{name: "MissingSignature", req: func() signed {
			s := sign(t, cur, id, unix, body)
			s.h.Del("webhook-signature")
			return s
		}, wantErr: standardwebhooks.ErrMissingHeaders},
		{name: "BlankSignature", req: func() signed {
			s := sign(t, cur, id, unix, body)
			s.h.Set("webhook-signature", "   ")
			return s
		}, wantErr: standardwebhooks.ErrMissingHeaders},
		{name: "TimestampExactlyToleranceOld", req: func() signed { return sign(t, cur, id, unix-300, body) }},
		{name: "TimestampOneSecondTooOld", req: func() signed { return sign(t, cur, id, unix-301, body) }, wantErr: standardwebhooks.ErrStale},
		{name: "TimestampExactlyToleranceNew", req: func() signed { return sign(t, cur, id, unix+300, body) }},
		{name: "TimestampOneSecondTooNew", req: func() signed { return sign(t, cur, id, unix+301, body) }, wantErr: standardwebhooks.ErrStale},
		{name: "SubSecondPastTolerance", req: func() signed { return sign(t, cur, id, unix, body) },
			now: now.Add(5*time.Minute + time.Millisecond), wantErr: standardwebhooks.ErrStale},
		{name: "CustomTolerance", req: func() signed { return sign(t, cur, id, unix-31, body) },
			v: &standardwebhooks.Verifier{Secrets: v.Secrets, Tolerance: 30 * time.Second}, wantErr: standardwebhooks.ErrStale},
		{name: "CustomToleranceEdge", req: func() signed { return sign(t, cur, id, unix+30, body) },
			v: &standardwebhooks.Verifier{Secrets: v.Secrets, Tolerance: 30 * time.Second}},
		{name: "NoSecrets", req: func() signed { return sign(t, cur, id, unix, body) },
			v: &standardwebhooks.Verifier{}, wantErr: standardwebhooks.ErrNoSecrets},
		{name: "OnlyZeroSecrets", req: func() signed { return sign(t, cur, id, unix, body) },
			v: &standardwebhooks.Verifier{Secrets: make([]standardwebhooks.Secret, 2)}, wantErr: standardwebhooks.ErrNoSecrets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.req()
			vv := v
			if tc.v != nil {
				vv = *tc.v
			}
			at := now
			if !tc.now.IsZero() {
				at = tc.now
			}
			gotID, err := vv.Verify(s.h, s.body, at)
			if tc.wantErr == nil {
				if err != nil || gotID != id {
					t.Fatalf("Verify = %q, %v; want %q, nil", gotID, err, id)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || gotID != "" {
				t.Fatalf("Verify = %q, %v; want \"\", %v", gotID, err, tc.wantErr)
			}
			for _, secret := range []string{cur, old, strings.TrimPrefix(cur, "whsec_"), "current-secret"} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error %q holds a secret", err)
				}
			}
		})
	}
}

func TestVerifyBadTimestamp(t *testing.T) {
	v := standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{mustSecret(t, "k")}}
	for _, ts := range []string{"abc", "-5", "+1700000000", "1700000000.5", " 1700000000", "1700000000 ", "0x65", "1e9", "1234567890123456789", "１７"} {
		s := sign(t, "k", "id", 1_700_000_000, "{}")
		s.h.Set("webhook-timestamp", ts)
		if _, err := v.Verify(s.h, s.body, time.Unix(1_700_000_000, 0)); !errors.Is(err, standardwebhooks.ErrBadTimestamp) {
			t.Errorf("timestamp %q: err = %v, want ErrBadTimestamp", ts, err)
		}
	}
}

func TestVerifyPublishedVector(t *testing.T) {
	h := http.Header{}
	h.Set("Webhook-Id", vectorID)
	h.Set("Webhook-Timestamp", strconv.Itoa(vectorUnix))
	h.Set("Webhook-Signature", vectorSignature)
	v := standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{mustSecret(t, vectorSecret)}}
	if id, err := v.Verify(h, []byte(vectorBody), time.Unix(vectorUnix+10, 0)); err != nil || id != vectorID {
		t.Fatalf("Verify = %q, %v", id, err)
	}
}

func ExampleSign() {
	secret, _ := standardwebhooks.ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	fmt.Println(standardwebhooks.Sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`)))
	fmt.Println(secret)
	// Output:
	// v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
	// [redacted]
}

func ExampleVerifier_Verify() {
	current, _ := standardwebhooks.ParseSecret("new-secret")
	previous, _ := standardwebhooks.ParseSecret("old-secret")
	body := []byte(`{"hello":"world"}`)
	sent := time.Unix(1_700_000_000, 0)

	// A sender still on the old secret.
	h := http.Header{}
	standardwebhooks.SetHeaders(h, previous, "msg_1", sent, body)

	v := standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{current, previous}}
	id, err := v.Verify(h, body, sent.Add(2*time.Second))
	fmt.Println(id, err)

	_, err = v.Verify(h, body, sent.Add(10*time.Minute))
	fmt.Println(errors.Is(err, standardwebhooks.ErrStale))
	// Output:
	// msg_1 <nil>
	// true
}

func BenchmarkSign(b *testing.B) {
	sec := mustSecret(b, vectorSecret)
	body := bytes.Repeat([]byte("x"), 4096)
	ts := time.Unix(vectorUnix, 0)
	for b.Loop() {
		standardwebhooks.Sign(sec, vectorID, ts, body)
	}
}

func BenchmarkVerify(b *testing.B) {
	body := strings.Repeat("x", 4096)
	s := sign(b, vectorSecret, vectorID, vectorUnix, body)
	v := standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{mustSecret(b, "old"), mustSecret(b, vectorSecret)}}
	now := time.Unix(vectorUnix, 0)
	for b.Loop() {
		if _, err := v.Verify(s.h, s.body, now); err != nil {
			b.Fatal(err)
		}
	}
}
