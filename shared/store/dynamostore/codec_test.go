package dynamostore

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/ddb"
	"github.com/parleyhq/parley/shared/ddb/ddbtest"
	"github.com/parleyhq/parley/shared/message"
)

// The store's items go through package ddb's codec, and the tables hold
// items the SDK's attributevalue wrote: each item shape, with its edge
// cases, must encode and decode as attributevalue does, both ways.

func storeItems() map[string]any {
	unit := unitItem{
		ID: "u1", Text: "héllo 👋 \x00 world", ContentKind: "prompt", Prompt: `{"q":"?"}`, ReplyTo: "r", Parley: true,
		Replaces: "m1", State: "sent", Attempt: 3, LeaseUntil: 1_700_000_000_000, Receipt: []string{"tg:1", "tg:2"},
		SentAt: -1, FailClass: "permanent", FailReason: "blocked", NextAt: math.MinInt64, Resent: true, Resends: 2,
		Reported: "yes", UpdatedAt: math.MaxInt64,
	}
	thread := message.Thread{Platform: "slack", Account: "T0", Chat: "C0", Thread: "1700000000.000100"}
	return map[string]any{
		"intent zero":     intentItem{},
		"intent empty":    intentItem{Units: []unitItem{}, Reply: &replyItem{}},
		"intent units":    intentItem{PK: "intent#1", Version: 2, Kind: "intent", ID: "1", Origin: "o", Thread: thread, Units: []unitItem{unit, {}, {Receipt: []string{}}, {Receipt: []string{""}}}, CreatedAt: 1, ExpiresAt: -1, Reply: &replyItem{"tok", 5}, Sweep: "0", SweepAt: 10},
		"intent negative": intentItem{Version: -2, CreatedAt: math.MinInt64, ExpiresAt: math.MaxInt64, SweepAt: -1},
		"unit zero":       unitItem{},
		"unit full":       unit,
		"unit pointer":    &unit,
		"reply zero":      replyItem{},
		"await zero":      awaitItem{},
		"await empty":     awaitItem{PostBody: []byte{}, Posts: map[string]int{}},
		"await full":      awaitItem{PK: "await#t", Kind: "await", TurnID: "t", Thread: thread, EventKey: "e", ClaimKey: "c", ClaimOwner: "o", Deadline: 9, State: "posted", Handle: "h", PostID: "p", PostType: "card", PostBody: []byte{0, 0xfe, 'x'}, PostAt: 4, PostEdit: "ed", Posts: map[string]int{"a": 0, "b": -1, "ü": math.MaxInt}, Bubbles: 3, CreatedAt: 1, ExpiresAt: 2},
		"question zero":   questionItem{},
		"question sel":    questionItem{PK: "q#1", Thread: thread, Selected: []string{"a", ""}, Field: -1, Version: 1},
		"question none":   questionItem{Selected: []string{}, Reason: "", Answers: "{}"},
	}
}

func TestItemsMatchAttributeValue(t *testing.T) {
	for name, v := range storeItems() {
		switch v := v.(type) {
		case intentItem:
			ddbtest.CheckCodec(t, name, v)
		case unitItem:
			ddbtest.CheckCodec(t, name, v)
		case *unitItem:
			ddbtest.CheckCodec(t, name, v)
		case replyItem:
			ddbtest.CheckCodec(t, name, v)
		case awaitItem:
			ddbtest.CheckCodec(t, name, v)
		case questionItem:
			ddbtest.CheckCodec(t, name, v)
		default:
			t.Fatalf("%s: no case for %T", name, v)
		}
	}
}

// FuzzItemsMatchAttributeValue builds each item shape from fuzzed fields
// and holds both codecs to the same items and values.
func FuzzItemsMatchAttributeValue(f *testing.F) {
	f.Add("u1", "hello", 3, int64(1_700_000_000_000), true, []byte("tg:1,tg:2"), uint8(0))
	f.Add("", "", 0, int64(0), false, []byte(nil), uint8(0xff))
	f.Add("ü👋", "\x00\xff", -1, int64(math.MinInt64), false, []byte{}, uint8(1))
	f.Add("id", "x", math.MaxInt, int64(math.MaxInt64), true, []byte(",,"), uint8(2))
	f.Add("a", "b", 1, int64(-1), false, []byte("only"), uint8(4))
	f.Add("a", "b", 1, int64(5), true, []byte("k,"), uint8(8|16))
	f.Add("", "t", 0, int64(0), false, []byte("\xff,\x00"), uint8(32|64|128))
	f.Add("p", "q", 2, int64(2), true, []byte("a"), uint8(3))
	f.Fuzz(func(t *testing.T, id, text string, attempt int, lease int64, parley bool, raw []byte, mode uint8) {
		// raw is the receipt list (comma-separated), the post body and
		// the posts' keys; mode's bits choose nil or empty or set.
		var receipt []string
		switch mode & 3 {
		case 1:
			receipt = []string{}
		case 2, 3:
			receipt = strings.Split(string(raw), ",")
		}
		u := unitItem{
			ID: id, Text: text, ReplyTo: text, Parley: parley, State: id, Attempt: attempt, LeaseUntil: lease,
			Receipt: receipt, SentAt: -lease, Resent: !parley, UpdatedAt: int64(attempt),
		}
		if mode&4 != 0 {
			u.ContentKind, u.Prompt, u.Replaces, u.Reported = text, id, text, id
			u.NextAt, u.Resends, u.FailClass, u.FailReason = lease, attempt, id, text
		}
		ddbtest.CheckCodec(t, "unit", u)

		in := intentItem{PK: id, Version: attempt, Thread: message.Thread{Platform: message.Platform(id), Account: text, Chat: id, Thread: text}, CreatedAt: lease}
		if mode&8 != 0 {
			in.Units = []unitItem{u, {}, u}
		} else if mode&16 != 0 {
			in.Units = []unitItem{}
		}
		if mode&32 != 0 {
			in.Reply = &replyItem{Token: text, Until: lease}
		}
		ddbtest.CheckCodec(t, "intent", in)

		aw := awaitItem{PK: id, PostBody: raw, Bubbles: attempt}
		if mode&64 != 0 {
			aw.Posts = map[string]int{}
			for i, k := range receipt {
				aw.Posts[k] = i * attempt
			}
		}
		ddbtest.CheckCodec(t, "await", aw)
		q := questionItem{ID: id, Selected: receipt, Field: attempt}
		ddbtest.CheckCodec(t, "question", q)

		if utf8.ValidString(id) && utf8.ValidString(text) && utf8.Valid(raw) {
			ddbtest.CheckRoundTrip(t, "unit", u)
			ddbtest.CheckRoundTrip(t, "intent", in)
			if _, err := ddb.MarshalItem(aw); err == nil { // an empty key is an error
				ddbtest.CheckRoundTrip(t, "await", aw)
			}
		}
	})
}
