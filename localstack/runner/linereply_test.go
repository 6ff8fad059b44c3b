package runner_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/shared/message"
)

// postLineFresh posts a person's LINE message whose reply token the fake
// honours, as LINE issues one with each event.
func (h *harness) postLineFresh(tb testing.TB, eventID, text string) {
	tb.Helper()
	api, _ := h.fake.For(message.LINE)
	api.(*fakeline.API).RegisterReplyToken("tok"+eventID, lineAda)
	if code, body := h.postLine(lineText(eventID, lineAda, text, h.clock.Now())); code != http.StatusOK {
		tb.Fatalf("webhook: %d %s", code, body)
	}
}

// lineCalls counts the fake's LINE calls by kind: replies (and the bubbles
// they carried) and pushes.
func lineCalls(ds []fakeplatform.Delivery) (replies, replied, pushes int) {
	for _, d := range ds {
		if d.Platform != message.LINE {
			continue
		}
		if _, ok := d.Args["replyToken"]; ok {
			replies++
			replied += strings.Count(d.Text, "\n\n") + 1
			continue
		}
		pushes++
	}
	return replies, replied, pushes
}

// TestLINEFreeReply: the first up to 5 bubbles of a reply go in one free
// reply call, each unit with its own message id; the rest are pushed; a
// redelivered webhook adds nothing.
func TestLINEFreeReply(t *testing.T) {
	t.Parallel()
	// Up to 8 bubbles, where 4 is the default.
	h := start(t, options{env: map[string]string{"PARLEY_MAX_BUBBLES": "8"}})
	h.postLineFresh(t, "01KR00000000000000000000A1", "/bubbles one | two | three")
	h.waitDelivered(1, 30*time.Second)
	h.quiesce(30 * time.Second)
	if replies, replied, pushes := lineCalls(h.fake.Delivered()); replies != 1 || replied != 3 || pushes != 0 {
		t.Fatalf("%d replies of %d bubbles and %d pushes; want one reply of 3", replies, replied, pushes)
	}
	in := h.intentFor("evt#line#" + lineBot + "#01KR00000000000000000000A1")
	seen := map[string]bool{}
	for _, u := range in.Units {
		if u.State != message.UnitSent || len(u.Receipt) != 1 || seen[u.Receipt[0]] {
			t.Fatalf("unit %+v: want sent with a message id of its own", u)
		}
		seen[u.Receipt[0]] = true
	}
	if code, _ := h.postLine(lineText("01KR00000000000000000000A1", lineAda, "/bubbles one | two | three", h.clock.Now())); code != http.StatusOK {
		t.Fatal("redelivery")
	}

	h.postLineFresh(t, "01KR00000000000000000000A2", "/bubbles 1 | 2 | 3 | 4 | 5 | 6 | 7")
	h.waitDelivered(4, 30*time.Second)
	h.quiesce(30 * time.Second)
	d := h.fake.Delivered()
	if replies, replied, pushes := lineCalls(d); replies != 2 || replied != 8 || pushes != 2 {
		t.Fatalf("%d replies of %d bubbles and %d pushes; want 2 replies of 3 and 5, then 2 pushes (%q)", replies, replied, pushes, texts(d))
	}
	if !strings.HasSuffix(d[len(d)-1].Text, "7") || !strings.HasSuffix(d[len(d)-2].Text, "6") {
		t.Fatalf("the pushes are out of order: %q", texts(d))
	}
}

// BenchmarkLINEPushesPerMessage counts LINE's monthly-quota pushes per
// message for 3- and 7-bubble replies to a person's message, with the
// first bubbles in one free reply (PARLEY_REPLY_BUBBLES 5, the default)
// and, as the baseline in the same run, the first alone (1), with the AWS
// calls per message of each (docs/capacity.md).
func BenchmarkLINEPushesPerMessage(b *testing.B) {
	for _, bubbles := range []int{3, 7} {
		for _, together := range []string{"5", "1"} {
			b.Run(fmt.Sprintf("%d-bubble/reply-bubbles-%s", bubbles, together), func(b *testing.B) {
				h := start(b, options{env: map[string]string{"PARLEY_QUESTIONS": "off", "PARLEY_REPLY_BUBBLES": together, "PARLEY_MAX_BUBBLES": "8"}})
				parts := make([]string, bubbles)
				for i := range parts {
					parts[i] = fmt.Sprint("part ", i+1)
				}
				h.calls.Reset()
				before := h.fake.Delivered()
				n := 0
				for b.Loop() {
					n++
					h.postLineFresh(b, fmt.Sprintf("01KB%022d", n), "/bubbles "+strings.Join(parts, " | "))
					deadline := time.Now().Add(time.Minute)
					for {
						if _, replied, pushes := lineCalls(h.fake.Delivered()[len(before):]); replied+pushes >= n*bubbles {
							break
						}
						if time.Now().After(deadline) {
							b.Fatalf("message %d not delivered", n)
						}
						time.Sleep(20 * time.Millisecond)
					}
				}
				b.StopTimer()
				h.quiesce(30 * time.Second)
				replies, _, pushes := lineCalls(h.fake.Delivered()[len(before):])
				b.ReportMetric(float64(pushes)/float64(n), "pushes/msg")
				b.ReportMetric(float64(replies)/float64(n), "replies/msg")
				reportCalls(b, totalsOf(h), n, "msg")
				if want := max(0, bubbles-5); together == "5" && pushes > want*n {
					b.Errorf("%.1f pushes per message, want at most %d", float64(pushes)/float64(n), want)
				}
			})
		}
	}
}
