package history_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/message"
)

var t0 = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

func person(id, text string, at time.Duration, msgID string) history.Entry {
	return history.Entry{ID: id, Role: history.RolePerson, Kind: history.KindMessage, Text: text, Time: t0.Add(at),
		Sender: &message.Sender{ID: "42"}, MessageIDs: []string{msgID}}
}

func bubble(id, text string, at time.Duration, msgID, turn string) history.Entry {
	return history.Entry{ID: id, Role: history.RoleAgent, Kind: history.KindBubble, Text: text, Time: t0.Add(at),
		MessageIDs: []string{msgID}, TurnID: turn}
}

func ids(t []history.Entry) string {
	var out []string
	for _, e := range t {
		out = append(out, e.ID)
	}
	return strings.Join(out, ",")
}

func TestParse(t *testing.T) {
	for in, want := range map[string]history.Config{
		"": {}, "off": {}, "20": {Entries: 20}, "20,32768": {Entries: 20, Bytes: 32768}, " 5 , 2048 ": {Entries: 5, Bytes: 2048},
	} {
		got, err := history.Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"on", "-1", "0", "20,", "20,x", "x,20", "20,0", "1.5"} {
		if _, err := history.Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
	for _, c := range []history.Config{{Entries: 20, Bytes: 100}, {Entries: 20, Bytes: history.MaxBytes + 1}, {Entries: history.MaxEntries + 1}} {
		if err := c.WithDefaults().Validate(); err == nil {
			t.Errorf("Validate(%+v) accepted", c)
		}
	}
	if err := (history.Config{Entries: 20}).WithDefaults().Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}

func TestMergeKeepsTimeOrderAndDedupes(t *testing.T) {
	c := history.Config{Entries: 10}
	tr := c.Merge(nil, person("m1", "hi", 0, "1"), bubble("i1#b1#1", "hello", 2*time.Second, "2", "i1"))
	// A bubble recorded late, after the next message, keeps its time's place.
	tr = c.Merge(tr, person("m2", "and?", 5*time.Second, "4"), bubble("i1#b2#1", "there", 3*time.Second, "3", "i1"))
	// The same entries again change nothing.
	tr = c.Merge(tr, person("m1", "hi", 0, "1"), bubble("i1#b2#1", "there", 3*time.Second, "3", "i1"))
	if got, want := ids(tr), "m1,i1#b1#1,i1#b2#1,m2"; got != want {
		t.Fatalf("transcript %s, want %s", got, want)
	}
}

func TestTrimDropsTheOldestFirst(t *testing.T) {
	c := history.Config{Entries: 3}
	var tr []history.Entry
	for i := range 5 {
		tr = c.Merge(tr, person(string(rune('a'+i)), "x", time.Duration(i)*time.Second, ""))
	}
	if got := ids(tr); got != "c,d,e" {
		t.Fatalf("kept %s, want the newest three", got)
	}
	c = history.Config{Entries: 100, Bytes: history.MinBytes}
	tr = nil
	for i := range 50 {
		tr = c.Merge(tr, person(string(rune('A'+i)), strings.Repeat("y", 100), time.Duration(i)*time.Second, ""))
	}
	if history.Size(tr) > c.Bytes {
		t.Fatalf("transcript of %d bytes, bound %d", history.Size(tr), c.Bytes)
	}
	if tr[len(tr)-1].ID != string(rune('A'+49)) || len(tr) > 8 {
		t.Fatalf("kept %s: want only the newest that fit", ids(tr))
	}
}

func TestAnEntryOverTheBoundKeepsItsStart(t *testing.T) {
	c := history.Config{Entries: 5, Bytes: history.MinBytes}
	long := strings.Repeat("é👍", 2000)
	tr := c.Merge(nil, person("old", "earlier", 0, "1"), person("big", long, time.Second, "2"))
	if len(tr) != 1 || tr[0].ID != "big" || !tr[0].Truncated {
		t.Fatalf("got %+v, want the one big entry, truncated", ids(tr))
	}
	if n := history.Size(tr); n > c.Bytes || n < c.Bytes-16 {
		t.Fatalf("truncated to %d bytes, want just under %d", n, c.Bytes)
	}
	if !utf8.ValidString(tr[0].Text) || !strings.HasPrefix(long, tr[0].Text) {
		t.Fatal("truncated text is not a valid prefix of the original")
	}
}

func TestFindEditDelete(t *testing.T) {
	tr := []history.Entry{person("m1", "hi", 0, "10"), bubble("i1#b1#1", "hello", time.Second, "11", "i1")}
	e, ok := history.Find(tr, "11")
	if !ok || e.TurnID != "i1" {
		t.Fatalf("Find bubble: %+v %v", e, ok)
	}
	q := history.Quote(e, "11")
	if !q.Parley || q.TurnID != "i1" || q.Text != "hello" {
		t.Fatalf("quote of a bubble: %+v", q)
	}
	if q := history.Quote(tr[0], "10"); q.Parley || q.TurnID != "" || q.Sender.ID != "42" {
		t.Fatalf("quote of a person's message: %+v", q)
	}
	if _, ok := history.Find(tr, "nope"); ok {
		t.Fatal("found an unknown message")
	}
	ed, ok := history.Edit(tr, "10", "hi there")
	if !ok || ed[0].Text != "hi there" || !ed[0].Edited || tr[0].Text != "hi" {
		t.Fatalf("Edit: %+v (original %+v)", ed[0], tr[0])
	}
	if _, ok := history.Edit(tr, "11", "x"); ok {
		t.Fatal("edited a bubble: only a person's own message is theirs to edit")
	}
	del, ok := history.Delete(tr, "10")
	if !ok || ids(del) != "i1#b1#1" || len(tr) != 2 {
		t.Fatalf("Delete: %s", ids(del))
	}
}

func TestRecentFitsTheBudgetNewestFirst(t *testing.T) {
	var tr []history.Entry
	for i := range 10 {
		tr = append(tr, person(string(rune('a'+i)), strings.Repeat("z", 50), time.Duration(i)*time.Second, ""))
	}
	got := history.Recent(tr, 400, func(e history.Entry) bool { return e.ID == "j" })
	if history.Size(got) > 400 || got[len(got)-1].ID != "i" || len(got) == 0 {
		t.Fatalf("recent %s (%d bytes)", ids(got), history.Size(got))
	}
	if ids(history.Recent(tr, 1, nil)) != "" {
		t.Fatal("an entry over the budget was kept")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "off", "20", "20,32768", "-1", "1,", ",", "999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := history.Parse(s)
		if err != nil {
			return
		}
		if c.Entries < 0 || c.Bytes < 0 {
			t.Fatalf("Parse(%q) = %+v", s, c)
		}
	})
}

func TestNewFileBoundsItsNameAtACharacter(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", history.MaxFileName-1) + "é.pdf" // é straddles the bound
	f := history.NewFile("file", long, "application/pdf")
	if len(f.Name) != history.MaxFileName-1 || !utf8.ValidString(f.Name) {
		t.Fatalf("name of %d bytes (valid %v), want %d", len(f.Name), utf8.ValidString(f.Name), history.MaxFileName-1)
	}
	if short := history.NewFile("image", "a.png", ""); short.Name != "a.png" || short.Kind != "image" {
		t.Fatalf("a short name changed: %+v", short)
	}
}

// An entry whose files alone are over the bound (ten long names and
// types) still fits it: its newest files go first, then its text is cut,
// and it says it was truncated. A file's type and kind are bounded as its
// name is.
func TestAnEntryOverTheBoundByItsFilesFits(t *testing.T) {
	t.Parallel()
	c := history.Config{Entries: 5, Bytes: history.MinBytes}
	e := person("files", "the tickets", 0, "1")
	for range 10 {
		e.Files = append(e.Files, history.NewFile("document", strings.Repeat("n", 400), "application/"+strings.Repeat("x", 400)))
	}
	tr := c.Merge(nil, e)
	if len(tr) != 1 || !tr[0].Truncated {
		t.Fatalf("got %d entries, truncated %v: want the entry, truncated", len(tr), len(tr) == 1 && tr[0].Truncated)
	}
	if n := history.Size(tr); n > c.Bytes {
		t.Fatalf("the entry keeps %d bytes, over the bound %d", n, c.Bytes)
	}
	if tr[0].Text != "the tickets" || len(tr[0].Files) == 0 {
		t.Fatalf("kept text %q and %d files: want the text whole and the first files that fit", tr[0].Text, len(tr[0].Files))
	}
	if f := tr[0].Files[0]; len(f.MIME) > history.MaxFileType || len(f.Kind) > history.MaxFileType {
		t.Fatalf("a file's type of %d bytes, kind of %d", len(f.MIME), len(f.Kind))
	}
}
