package queue_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/queue"
)

// texts SQS or fauxqs would refuse in a body as they are, and their
// neighbours that both accept.
var awkwardTexts = []string{
	"emoji 😀🎉 and a flag 🇯🇵",
	"U+FFFF \uffff in a display name",
	"U+FFFE \ufffe",
	"U+FFFD \ufffd stays",
	"the last character \U0010ffff",
	"music 𝄞 and CJK 你好, combining e\u0301",
	"markup <b>&amp;</b> \" \\ \u2028",
}

// sqsAccepts reports whether SQS takes r in a body, and fauxqs too (nothing
// above U+FFFF).
func sqsAccepts(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD)
}

// checkBody fails unless body holds only characters SQS and fauxqs accept
// and decodes, as JSON, to want.
func checkBody(t *testing.T, body string, want string) {
	t.Helper()
	if !utf8.ValidString(body) {
		t.Errorf("body %q is not UTF-8", body)
	}
	if i := strings.IndexFunc(body, func(r rune) bool { return !sqsAccepts(r) }); i >= 0 {
		t.Errorf("body %q holds %U, which SQS or fauxqs refuses", body, []rune(body[i:])[0])
	}
	var got struct{ Text string }
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.Text != want {
		t.Errorf("body %q decodes to %q (%v), want %q", body, got.Text, err, want)
	}
}

// TestQueueBodyHoldsOnlySQSCharacters_Finding1: a body holding U+FFFE,
// U+FFFF or (for fauxqs) any character above U+FFFF was refused whole
// (InvalidMessageContents), and the message lost. Every body Send and
// SendBatch put on the queue now holds only characters both accept, and
// decodes to exactly the text it was given.
func TestQueueBodyHoldsOnlySQSCharacters_Finding1(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	q := queue.New(env.SQS, env.Resources.InboundURL)
	var batch []queue.Message
	for i, s := range awkwardTexts {
		body, err := json.Marshal(map[string]string{"text": s})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Send(t.Context(), queue.Message{Group: "g", Dedup: fmt.Sprint("one#", i), Body: body}); err != nil {
			t.Fatalf("Send %q: %v", s, err)
		}
		batch = append(batch, queue.Message{Group: "g", Dedup: fmt.Sprint("batch#", i), Body: body})
	}
	if err := q.SendBatch(t.Context(), batch); err != nil {
		t.Fatalf("SendBatch: %v", err)
	}
	got := drain(t, env.SQS, env.Resources.InboundURL)
	if len(got) != 2*len(awkwardTexts) {
		t.Fatalf("received %d messages, want %d", len(got), 2*len(awkwardTexts))
	}
	for i, m := range got {
		checkBody(t, m.body, awkwardTexts[i%len(awkwardTexts)])
	}
}

func TestBody(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"text":"plain ascii"}`, `{"text":"plain ascii"}`},
		{`{"text":"é 你好 \ufffd"}`, `{"text":"é 你好 \ufffd"}`},
		{"{\"text\":\"\uffff\"}", `{"text":"\uffff"}`},
		{"{\"text\":\"\ufffe\"}", `{"text":"\ufffe"}`},
		{`{"text":"😀"}`, `{"text":"\ud83d\ude00"}`},
		{"{\"text\":\"\U00010000\U0010ffff\"}", `{"text":"\ud800\udc00\udbff\udfff"}`},
		{"{\"text\":\"a\xffb\"}", `{"text":"a\ufffdb"}`},
		{`{"text":"\\😀"}`, `{"text":"\\\ud83d\ude00"}`},
	} {
		if got := string(queue.Body([]byte(tc.in))); got != tc.want {
			t.Errorf("Body(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	plain := []byte(`{"text":"nothing to escape, é"}`)
	if got := queue.Body(plain); &got[0] != &plain[0] {
		t.Error("Body copied a body it need not change")
	}
}

// FuzzBody: for any text, the encoded JSON of it holds only characters SQS
// and fauxqs accept, and decodes to the same text (encoding/json's own
// reading of invalid UTF-8, U+FFFD, included).
func FuzzBody(f *testing.F) {
	for _, s := range awkwardTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		body, err := json.Marshal(map[string]string{"text": s})
		if err != nil {
			t.Skip()
		}
		var want struct{ Text string }
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		checkBody(t, string(queue.Body(body)), want.Text)
	})
}
