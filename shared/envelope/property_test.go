package envelope

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/split"
)

// Property tests over generated envelopes and prose. The generator is
// seeded, so a failure reproduces; raise propertyRounds locally to search
// further.
const propertyRounds = 1500

var proseAtoms = []string{
	"the", "flight", "moved", "to", "8pm", "gate", "B12", "ok", "über", "naïve", "日本語", "テキスト",
	"😀", "👩‍👩‍👧", "🇯🇵", "e\u0301", "\u0301", " ", " ", " ", "  ", "\n", "\n", "\n\n", "\r\n", "\t",
	"{", "}", "[", "]", `"`, ":", ",", "`", "```", "```go\n", "\n```\n", "~~~\n",
	`{"schema": "my-db-schema"}`, `{"a": 1}`, `{"messages": [{"role": "user"}]}`, `{"next": 1, "x": 2}`,
	`{"schema": "other", "messages": [{"text": "x"}]}`, "func f() { return }", "{}",
}

func randProse(r *rand.Rand, n int) string {
	var sb strings.Builder
	for range r.IntN(n + 1) {
		sb.WriteString(proseAtoms[r.IntN(len(proseAtoms))])
		if r.IntN(3) == 0 {
			sb.WriteByte(' ')
		}
	}
	return sb.String()
}

// randBubbleText is prose that is valid as a bubble: not blank, no
// envelope JSON.
func randBubbleText(r *rand.Rand, n int) string {
	for {
		s := randProse(r, n)
		if strings.TrimSpace(s) != "" && !hasFragment(s, detectStrong) {
			return s
		}
	}
}

type genEnvelope struct {
	body     string
	bubbles  []Bubble
	nextType NextType
}

// randEnvelope writes a valid envelope the way an agent might: members in
// any order, any whitespace.
func randEnvelope(r *rand.Rand, maxText int) genEnvelope {
	ws := func() string { return []string{"", " ", "\n  ", "\t"}[r.IntN(4)] }
	q := func(s string) string {
		b, _ := json.Marshal(s)
		if r.IntN(2) == 0 {
			return string(b)
		}
		// Escape non-ASCII as some encoders do.
		var sb strings.Builder
		for _, c := range string(b) {
			if c < 0x80 {
				sb.WriteRune(c)
				continue
			}
			for _, u := range utf16.Encode([]rune{c}) {
				fmt.Fprintf(&sb, `\u%04x`, u)
			}
		}
		return sb.String()
	}
	var g genEnvelope
	var msgs []string
	for i := range r.IntN(5) {
		b := Bubble{ID: "b" + strconv.Itoa(i) + []string{"", "_x", "-é", " id"}[r.IntN(4)], Text: randBubbleText(r, maxText)}
		g.bubbles = append(g.bubbles, b)
		kv := []string{`"id":` + ws() + q(b.ID), `"text":` + ws() + q(b.Text)}
		r.Shuffle(len(kv), func(i, j int) { kv[i], kv[j] = kv[j], kv[i] })
		msgs = append(msgs, "{"+ws()+strings.Join(kv, ","+ws())+ws()+"}")
	}
	members := []string{`"schema":` + ws() + `"openab.turn.v1"`}
	if len(msgs) > 0 || r.IntN(2) == 0 {
		members = append(members, `"messages":`+ws()+"["+strings.Join(msgs, ","+ws())+"]")
	}
	g.nextType = NextStop
	switch r.IntN(6) {
	case 0:
	case 1:
		members = append(members, `"next":{"type":"stop"}`)
	case 2:
		g.nextType = NextSilent
		members = append(members, `"next":{"type":"silent"}`)
	case 3:
		g.nextType = NextWait
		members = append(members, `"next":{"type":"wait","wait":{"seconds":`+strconv.Itoa(1+r.IntN(100))+`}}`)
	case 4:
		g.nextType = NextTool
		members = append(members, `"next":{"type":"tool","tool":{"name":"t","arguments":{"q":`+q(randProse(r, 3))+`}}}`)
	case 5:
		g.nextType = NextAsk
		members = append(members, `"next":{"type":"ask","request":{"message":"Which?","requestedSchema":{"type":"object","properties":{"c":{"type":"string","enum":["a","b"]}}}}}`)
	}
	r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	g.body = ws() + "{" + ws() + strings.Join(members, ","+ws()) + ws() + "}" + ws()
	return g
}

var propertyCaps = []message.Capabilities{
	{TextLimit: 4096, Counting: message.CountUTF16},
	{TextLimit: 2000, Counting: message.CountRunes},
	{TextLimit: 37, Counting: message.CountUTF16},
	{TextLimit: 24, Counting: message.CountRunes},
	{TextLimit: 61, Counting: message.CountBytes},
	{TextLimit: 0, Counting: message.CountRunes},
}

func TestPropertyEnvelopesRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range propertyRounds {
		g := randEnvelope(r, 40)
		env, err := Parse([]byte(g.body))
		if err != nil {
			t.Fatalf("generated envelope rejected: %v\n%s", err, g.body)
		}
		if len(env.Messages) != len(g.bubbles) || env.Next.Type != g.nextType {
			t.Fatalf("parsed %+v from\n%s", env, g.body)
		}
		for i := range g.bubbles {
			if env.Messages[i] != g.bubbles[i] {
				t.Fatalf("bubble %d = %+v, want %+v", i, env.Messages[i], g.bubbles[i])
			}
		}
		caps := propertyCaps[r.IntN(len(propertyCaps))]
		plan, err := Build(Reply{Body: []byte(g.body)}, Config{MaxBubbleChars: 100000, MaxUnits: 1 << 20}, caps)
		var limit *LimitError
		if errors.As(err, &limit) && limit.Limit == LimitPromptChars && g.nextType == NextAsk {
			// A question one message of these caps cannot show.
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		checkPlanInvariants(t, plan, caps)
		if g.nextType == NextSilent {
			if len(plan.Units) != 0 {
				t.Fatal("silent plan has units")
			}
			continue
		}
		// A bubble's units are its parts as split.Text makes them, in
		// order, bubble after bubble (package split holds the parts to the
		// text and the limit).
		k := 0
		for _, b := range g.bubbles {
			for _, part := range split.Text(b.Text, caps) {
				if k >= len(plan.Units) || plan.Units[k].BubbleID != b.ID || plan.Units[k].Text != part {
					t.Fatalf("unit %d does not match bubble %q part %q", k, b.ID, part)
				}
				k++
			}
		}
		if k != len(plan.Units) {
			t.Fatalf("%d units for %d pieces", len(plan.Units), k)
		}
	}
}

// No unit ever holds a parseable envelope or a truncated one, under any
// policy and mode, however envelope and prose are mixed.
func TestPropertyEnvelopeNeverVisible(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	configs := []Config{
		{}, {Mode: ModeText}, {OnParseError: PolicyErrorMessage}, {OnParseError: PolicySilent},
	}
	for range propertyRounds {
		g := randEnvelope(r, 12)
		before, after := randProse(r, 8), randProse(r, 8)
		cut := 1 + r.IntN(len(g.body)-1)
		truncated := g.body[:cut]
		bodies := []string{
			before + g.body + after,
			before + truncated,
			truncated,
			before + "```json\n" + g.body + "\n```" + after,
			before + truncated + "\n\n" + g.body,
			// Broken: an invalid escape or stray byte anywhere.
			before + g.body[:cut] + "\\q" + g.body[cut:] + after,
		}
		cfg := configs[r.IntN(len(configs))]
		caps := propertyCaps[r.IntN(len(propertyCaps))]
		for bi, body := range bodies {
			plan, err := Build(Reply{Body: []byte(body)}, cfg.WithDefaults(), caps)
			if err != nil {
				continue // over a limit: nothing is delivered
			}
			checkPlanInvariants(t, plan, caps)
			var joined strings.Builder
			for _, u := range plan.Units {
				if strings.Contains(u.Text, strings.TrimSpace(g.body)) {
					t.Fatalf("body %d: unit %q holds the envelope\nbody: %q", bi, u.Text, body)
				}
				joined.WriteString(u.Text)
			}
			if plan.Outcome == OutcomeEnvelope || plan.Outcome == OutcomeSilent {
				continue // the envelope was used as one, not shown
			}
			frag := strings.TrimSpace(truncated)
			if bi >= 1 && bi <= 2 && frag != "" && !strings.Contains(before, frag) && strings.Contains(joined.String(), frag) {
				t.Fatalf("body %d: units %q hold the truncated envelope %q\nbody: %q", bi, joined.String(), frag, body)
			}
			if holdsEnvelope(joined.String()) || (bi == 5 && strings.Contains(joined.String(), `"openab.turn.v1"`)) {
				t.Fatalf("body %d: units hold envelope JSON: %q", bi, joined.String())
			}
		}
	}
}

// Random prose that holds no envelope is delivered as written in text mode.
func TestPropertyProseUntouched(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for range propertyRounds {
		prose := randProse(r, 30)
		if strings.TrimSpace(prose) == "" || hasFragment(prose, detectProse) {
			continue
		}
		caps := propertyCaps[r.IntN(len(propertyCaps))]
		plan, err := Build(Reply{Body: []byte(prose), ContentType: "text/plain"}, Config{MaxUnits: 1 << 20}, caps)
		if err != nil {
			t.Fatal(err)
		}
		checkPlanInvariants(t, plan, caps)
		if plan.Outcome != OutcomeText {
			t.Fatalf("outcome %q for %q (%v)", plan.Outcome, prose, plan.Problem)
		}
		want := split.Text(strings.TrimSpace(prose), caps)
		if got := texts(plan); len(got) != len(want) {
			t.Fatalf("%d units for %d parts of %q", len(got), len(want), prose)
		}
		for i, u := range plan.Units {
			if u.Text != want[i] {
				t.Fatalf("unit %d = %q, want part %q of %q", i, u.Text, want[i], prose)
			}
		}
	}
}
