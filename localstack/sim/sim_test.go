package sim

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	seedFlag     = flag.Uint64("seed", 0, "replay one seed, with its trace")
	seedsFlag    = flag.Int("seeds", 0, "how many seeds to run (0: the bounded set make test runs)")
	firstFlag    = flag.Uint64("first", 1, "the first seed of a run of -seeds")
	durationFlag = flag.Duration("duration", 0, "stop starting new seeds after this long (0: no limit)")
	shrinkFlag   = flag.Bool("shrink", true, "shrink a failing seed's schedule before printing its trace")
	stopFlag     = flag.Bool("stopfirst", false, "stop at the first failing seed")
)

// testSeeds is how many seeds make test runs: well within its minute on
// two cores under -race.
const testSeeds = 100

// TestSim runs the whole pipeline under seeded faults and checks every
// invariant. A failure prints its seed, a command that replays it, and the
// shrunk schedule's trace.
func TestSim(t *testing.T) {
	if *seedFlag != 0 {
		r := report(t, *seedFlag)
		if !r.Failed() {
			t.Logf("seed %d: no invariant broken (%d steps, %d checks)", *seedFlag, r.Steps, r.Checks)
		}
		return
	}
	n := *seedsFlag
	if n == 0 {
		n = testSeeds
	}
	var sum Summary
	start := time.Now()
	progress := *seedsFlag > 0
	for i := range n {
		if *durationFlag > 0 && time.Since(start) > *durationFlag {
			break
		}
		seed := *firstFlag + uint64(i)
		r := Run(DefaultConfig(seed))
		sum.Add(r)
		if r.Failed() {
			if *stopFlag {
				t.Errorf("FIRST seed %d after %d seeds: %s", seed, i+1, r.Violations[0])
				break
			}
			report(t, seed)
		}
		if progress && (i+1)%1000 == 0 {
			fmt.Fprintf(os.Stderr, "sim: %d/%d seeds, %d failed, %s\n", i+1, n, sum.Failed, time.Since(start).Round(time.Second))
		}
	}
	var b strings.Builder
	sum.Write(&b)
	if progress {
		fmt.Fprint(os.Stdout, b.String())
	} else {
		t.Log(b.String())
	}
}

// report reruns a failing seed, shrinks it and prints what a person needs
// to replay and read it.
func report(t *testing.T, seed uint64) Result {
	t.Helper()
	r := Run(DefaultConfig(seed))
	if !r.Failed() {
		return r
	}
	cfg, shrunk := DefaultConfig(seed), r
	if *shrinkFlag {
		cfg, shrunk = Shrink(cfg)
	} else {
		cfg.Trace = true
		shrunk = Run(cfg)
	}
	t.Errorf("seed %d broke an invariant: %s\nreplay: go test ./localstack/sim -run 'TestSim$' -seed=%d   (or make sim SEED=%d)\nshrunk to %d faults (masked %d); trace:\n%s",
		seed, r.Violations[0], seed, seed, len(shrunk.Fired), len(cfg.Mask), strings.Join(shrunk.Trace, "\n"))
	return r
}

// TestSimReproducible: a seed replays exactly, faults, steps and what each
// person saw, so a failing seed's replay is the failure.
func TestSimReproducible(t *testing.T) {
	for _, seed := range []uint64{3, 17, 29, 41, 58} {
		a, b := Run(DefaultConfig(seed)), Run(DefaultConfig(seed))
		slices.Sort(a.Fired)
		slices.Sort(b.Fired)
		if a.Steps != b.Steps || a.Checks != b.Checks || !maps.Equal(a.Faults, b.Faults) ||
			!slices.Equal(a.Fired, b.Fired) || !slices.Equal(a.Screens, b.Screens) {
			t.Fatalf("seed %d ran twice differently:\n%+v\n%+v", seed, a, b)
		}
		if len(a.Fired) == 0 || strings.Count(strings.Join(a.Screens, ","), "r|") == 0 {
			t.Fatalf("seed %d injected no fault or showed no reply: %+v", seed, a)
		}
	}
}

// TestSimSeed311_PostedReplyCommittedUnderAStaleOwner: a turn's posted
// reply was committed under the owner its await record named; when the
// claim was taken since by an attempt that died (its answer lost), the
// commit met that claim and dropped the message as "the holder decides",
// and nothing was left to deliver the accepted post. Found at seed 311;
// the turn now comes back when the holder's lease ends.
func TestSimSeed311_PostedReplyCommittedUnderAStaleOwner(t *testing.T) {
	if r := Run(DefaultConfig(311)); r.Failed() {
		t.Fatalf("seed 311: %s", r.Violations[0])
	}
}

// TestSimSeed24_NothingToSendSettleLost: a turn whose agent chose to say
// nothing has its settled claim as its only record; its settle was
// throttled, the turn reported success all the same, and its message was
// deleted with the claim pending for good (I1: acknowledged, neither a
// reply nor an outcome). Found at seed 582 first; with today's models the
// defect put back breaks seed 24. The turn now returns the failed settle,
// so the message comes back (shared/turn
// TestNothingToSendIsSettledBeforeTheMessageGoes_Seed582).
func TestSimSeed24_NothingToSendSettleLost(t *testing.T) {
	if r := Run(DefaultConfig(24)); r.Failed() {
		t.Fatalf("seed 24: %s", r.Violations[0])
	} else if r.Faults["agent_silent"] == 0 || r.Faults["store_throttle"] == 0 {
		t.Fatalf("seed 24 no longer has a silent reply and a throttled write: %v (pick the seed again: the models changed)", r.Faults)
	}
}

// TestSimSeed2_RefusedQuestionNotAskedAgain: with the question's form
// unbounded and the store's refusal of it taken as an outage (the defect
// of issue 23's finding 4, put back by the mutation check), the agent was
// asked again and again for a reply the store can never hold. The agent
// model answers a message with the same oversized question every time,
// and the check on refused writes catches the second call at seed 2; with
// the fix the seed passes and its oversized question was drawn.
func TestSimSeed2_RefusedQuestionNotAskedAgain(t *testing.T) {
	if r := Run(DefaultConfig(2)); r.Failed() {
		t.Fatalf("seed 2: %s", r.Violations[0])
	} else if r.Faults["agent_oversized_question"] == 0 {
		t.Fatalf("seed 2 no longer draws an oversized question: %v (pick the seed again: the models changed)", r.Faults)
	}
}
