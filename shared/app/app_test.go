package app

import (
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/store"
)

// TestTurnClaimsLastAsLongAsTheKeys: ingress sends every duplicate again,
// so a late redelivery is stopped by the turn's claim alone, which must be
// kept as long as the ingress keys, whatever PARLEY_DEDUPE_TTL says.
func TestTurnClaimsLastAsLongAsTheKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  string
		want time.Duration
	}{
		{"", store.DedupeTTL},
		{"240h", 240 * time.Hour},
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
		if c.DedupeTTL != tc.want || turnTTL != tc.want {
			t.Errorf("PARLEY_DEDUPE_TTL=%q: ingress keys %v, turn claims %v; want both %v", tc.env, c.DedupeTTL, turnTTL, tc.want)
		}
	}
}
