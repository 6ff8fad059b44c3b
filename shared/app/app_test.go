package app

import (
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/store"
)

// TestTurnClaimsLastAsLongAsTheKeys: ingress sends every duplicate again,
// so a late redelivery is stopped by the turn's claim alone, which must be
// kept as long as the ingress keys, whatever PARLEY_DEDUPE_TTL says, and
// never less than store.DedupeTTL: a shorter setting may forget ingress
// keys sooner, never a turn that was answered.
func TestTurnClaimsLastAsLongAsTheKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env           string
		keys, turnTTL time.Duration
	}{
		{"", store.DedupeTTL, store.DedupeTTL},
		{"240h", 240 * time.Hour, 240 * time.Hour},
		{"72h", 72 * time.Hour, store.DedupeTTL},
	} {
		c, err := config.FromEnv(func(k string) string {
			if k == "PARLEY_DEDUPE_TTL" {
				return tc.env
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		d := Deps{Config: c}
		turnTTL := d.turnConfig().WithDefaults().ClaimTTL
		if c.DedupeTTL != tc.keys || turnTTL != tc.turnTTL {
			t.Errorf("PARLEY_DEDUPE_TTL=%q: ingress keys %v, turn claims %v; want %v and %v", tc.env, c.DedupeTTL, turnTTL, tc.keys, tc.turnTTL)
		}
	}
}
