package platformtest

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/parleyhq/parley/shared/platform"
)

// fatals is a testing.TB whose Fatalf is recorded, not fatal to the test.
type fatals struct {
	testing.TB
	msg string
}

func (f *fatals) Helper() {}

func (f *fatals) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failure is what check made t fail with, "" when nothing.
func failure(t *testing.T, check func(testing.TB)) string {
	f := &fatals{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(f)
	}()
	<-done
	return f.msg
}

// TestCheckVerify: the true signature must pass, any other must be
// refused as unauthorized, and no error may name the secret.
func TestCheckVerify(t *testing.T) {
	t.Parallel()
	unauth := fmt.Errorf("%w: bad signature", platform.ErrUnauthorized)
	for name, c := range map[string]struct {
		err    error
		isTrue bool
		fails  bool
	}{
		"TrueAccepted":      {nil, true, false},
		"TrueRefused":       {unauth, true, true},
		"FalseRefused":      {unauth, false, false},
		"FalseAccepted":     {nil, false, true},
		"FalseOtherError":   {errors.New("boom"), false, true},
		"SecretInTheError":  {fmt.Errorf("%w: want s3cret", platform.ErrUnauthorized), false, true},
		"NoSecretToCompare": {fmt.Errorf("%w: want s3cret", platform.ErrUnauthorized), false, false},
	} {
		secret := "s3cret"
		if name == "NoSecretToCompare" {
			secret = ""
		}
		if got := failure(t, func(tb testing.TB) { CheckVerify(tb, c.err, "sig", c.isTrue, secret) }); (got != "") != c.fails {
			t.Errorf("%s: failure %q, want failing %v", name, got, c.fails)
		}
	}
}

func TestCheckIgnored(t *testing.T) {
	t.Parallel()
	ig := []platform.Ignored{{Reason: platform.IgnoredBot}, {Reason: "surprise"}}
	if got := failure(t, func(tb testing.TB) { CheckIgnored(tb, ig, platform.IgnoredBot) }); got == "" {
		t.Error("an unknown reason passed")
	}
	if got := failure(t, func(tb testing.TB) { CheckIgnored(tb, ig, platform.IgnoredBot, "surprise") }); got != "" {
		t.Errorf("known reasons failed: %s", got)
	}
}
