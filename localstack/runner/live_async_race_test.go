package runner_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// An async preview update and the reply that ends the preview, close
// together: each interleaving is forced with a hook on the update's own
// DynamoDB calls (awsfault's OnFire, run just before the call), never by
// sleeping. The person must end with the final alone: no stale preview
// beside it, nothing posted or edited after it, nothing no one will clear.

// previewRecordWrite matches the write of the preview record of turnID,
// whichever call carries it: a put, or a put inside a transaction.
func previewRecordWrite(turnID string) func(any) bool {
	return func(in any) bool {
		switch in := in.(type) {
		case *dynamodb.PutItemInput:
			return pkOf(in.Item) == "pv#"+turnID
		case *dynamodb.TransactWriteItemsInput:
			for _, it := range in.TransactItems {
				if it.Put != nil && pkOf(it.Put.Item) == "pv#"+turnID {
					return true
				}
			}
		}
		return false
	}
}

// previewTake matches a preview update's take on turnID's await record.
func previewTake(turnID string) func(any) bool {
	return func(in any) bool {
		u, ok := in.(*dynamodb.UpdateItemInput)
		if !ok || pkOf(u.Key) != "await#"+turnID {
			return false
		}
		_, take := u.ExpressionAttributeValues[":max"]
		return take
	}
}

// heldPreview posts a preview of text (webhook-id id) whose first write of
// turnID's preview record is held, and returns once it holds: the update
// took its lease and made its platform call. Closing release lets the write
// go; answered then gives the preview's answer.
func (h *harness) heldPreview(turnID, id, text string) (answered <-chan agentapi.PreviewAnswer, release chan<- struct{}) {
	held, rel := make(chan struct{}), make(chan struct{})
	for _, op := range []string{"DynamoDB.PutItem", "DynamoDB.TransactWriteItems"} {
		h.faults.Add(awsfault.Fault{Op: op, Match: previewRecordWrite(turnID), Pass: true, OnFire: func(any) {
			select {
			case <-held:
				return // the other call's hook fired first
			default:
			}
			close(held)
			<-rel
		}})
	}
	ans := make(chan agentapi.PreviewAnswer, 1)
	go func() {
		_, a := h.postPreview(id, previewBody(turnID, text, ""))
		ans <- a
	}()
	<-held
	return ans, rel
}

// asyncGroupTurn starts a turn in a Telegram group whose agent answers 202,
// and returns its id once it waits for the agent's post.
func (h *harness) asyncGroupTurn(update int, chat, user int64, text string) string {
	h.t.Helper()
	h.agent.fail = later
	turnID := intent.IDFor("evt#telegram#" + tgBotID + "#" + strconv.Itoa(update))
	if code, body := h.postTelegram(telegramGroupUpdate(update, chat, user, text)); code != 200 {
		h.t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitAwait(turnID)
	return turnID
}

// awaitVisible waits until chat shows want, then lets everything settle
// and checks it still does.
func (h *harness) awaitVisible(p message.Platform, chat string, want ...string) {
	h.t.Helper()
	rec := h.fake.Recorder()
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if slices.Equal(texts(rec.Visible(p, chat)), want) {
			break
		}
	}
	h.quiesce(20 * time.Second)
	if v := texts(rec.Visible(p, chat)); !slices.Equal(v, want) {
		h.t.Fatalf("%s %s shows %q, want %q", p, chat, v, want)
	}
}

// Preview taken → the turn ends → the preview's post lands late: the
// update's platform call created its message, and its record write is held
// until the turn ended (its final sent, a silent final, or its deadline
// passed). The late update may not record a message the turn never saw: it
// deletes it, and the final, if any, stands alone.
func TestLiveAsyncRaceLatePreviewAfterFinal(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name  string
		env   map[string]string
		final []byte // %s: the turn id; nil: none, the turn times out
		want  []string
	}{
		{name: "Final", final: []byte(`{"turn_id":"%s","text":"Gate B12"}`), want: []string{"Gate B12"}},
		{name: "SilentFinal", final: []byte(`{"turn_id":"%s","envelope":{"schema":"openab.turn.v1","messages":[],"next":{"type":"silent"}}}`)},
		{name: "TimedOut", env: map[string]string{"PARLEY_ASYNC_TIMEOUT": "6s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, options{env: tc.env})
			chat := int64(-1001000000301 - 10*i)
			turnID := h.asyncGroupTurn(930101+i, chat, 5550301, "later: the gate")
			answered, release := h.heldPreview(turnID, "msg_rpv_1", "looking")
			if tc.final != nil {
				body := []byte(fmt.Sprintf(string(tc.final), turnID))
				if code, resp := h.postReply("msg_rfinal", body); code != http.StatusOK {
					t.Fatalf("final: %d %s", code, resp)
				}
			}
			// The turn settles the preview once the update's lease is
			// over, sees no preview (its record is not written yet), and
			// ends: the final sent beside the preview's message.
			for deadline := time.Now().Add(45 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				a, err := h.store.GetAwait(t.Context(), turnID)
				if err == nil && a.PreviewSettled != "" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the turn never settled the preview: %+v, %v", a, err)
				}
			}
			if tc.want != nil {
				h.waitDelivered(2, 45*time.Second)
			}
			h.quiesce(20 * time.Second)
			close(release)
			if ans := <-answered; ans.Shown {
				t.Fatalf("the late preview: %+v, want not shown", ans)
			}
			h.awaitVisible(message.Telegram, strconv.FormatInt(chat, 10), tc.want...)
			if d := h.fake.Recorder().Deletions(); len(d) != 1 {
				t.Fatalf("deletions %+v: want the late preview's message deleted", d)
			}
			if _, err := h.store.GetPreview(t.Context(), turnID, h.clock.Now()); err == nil {
				t.Fatal("the late preview's record was written after the turn ended")
			}
		})
	}
}

// Final first, then a preview whose read found the turn still waiting: the
// final is recorded between the preview's read and its take. The take is
// refused 409 answered: no update taken, no platform call, no record.
func TestLiveAsyncRaceFinalBeforeTake(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	const chat = -1001000000302
	turnID := h.asyncGroupTurn(930201, chat, 5550302, "later: the gate")
	h.faults.Add(awsfault.Fault{Op: "DynamoDB.UpdateItem", Match: previewTake(turnID), Pass: true, OnFire: func(any) {
		if code, body := h.postReply("msg_tfinal", replyBody(turnID, "Gate C3")); code != http.StatusOK {
			t.Errorf("final: %d %s", code, body)
		}
	}})
	calls := h.platformCalls()
	body := previewBody(turnID, "looking", "")
	code, resp := h.post("/reply/preview", h.agentSigned("msg_tpv_1", body), body)
	if code != http.StatusConflict || !strings.Contains(resp, "answered") {
		t.Fatalf("a preview the final overtook: %d %s, want 409 answered", code, resp)
	}
	if c := h.platformCalls(); c != calls {
		t.Fatalf("the refused preview made %d platform calls", c-calls)
	}
	if a, err := h.store.GetAwait(t.Context(), turnID); err != nil || a.PreviewUpdates != 0 {
		t.Fatalf("the await record after the refused preview: %+v, %v", a, err)
	}
	h.awaitVisible(message.Telegram, strconv.Itoa(chat), "Gate C3")
	if n := len(h.fake.Delivered()); n != 1 {
		t.Fatalf("%d messages, want the final alone", n)
	}
}

// Two previews at once: the first's record write is held past the
// interval, and the second arrives then. Only one update runs at a time:
// the second is throttled until the first is over (on main it created a
// second message, and the first's record then hid it from every clear).
// The final finalizes the one preview.
func TestLiveAsyncRaceTwoPreviews(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	const chat = -1001000000303
	turnID := h.asyncGroupTurn(930301, chat, 5550303, "later: the gate")
	answered, release := h.heldPreview(turnID, "msg_2pv_1", "looking")
	h.clock.Advance(3500 * time.Millisecond) // past the group's 3 s interval
	code, second := h.postPreview("msg_2pv_2", previewBody(turnID, "looking at the board", ""))
	close(release)
	if first := <-answered; !first.Shown {
		t.Fatalf("the first preview: %+v", first)
	}
	if code != http.StatusOK || second.Shown || second.Reason != "throttled" || second.RetryAfterMS <= 0 {
		t.Fatalf("the second preview, while the first was in flight: %d %+v, want throttled", code, second)
	}
	if n := len(h.fake.Delivered()); n != 1 {
		t.Fatalf("%d preview messages, want one", n)
	}
	if code, body := h.postReply("msg_2final", replyBody(turnID, "Gate D4")); code != http.StatusOK {
		t.Fatalf("final: %d %s", code, body)
	}
	h.awaitVisible(message.Telegram, strconv.Itoa(chat), "Gate D4")
	if n, d := len(h.fake.Delivered()), h.fake.Recorder().Deletions(); n != 1 || len(d) != 0 {
		t.Fatalf("%d messages, deletions %+v: want the one preview, finalized", n, d)
	}
}

// Sequential posts ("final": false) with a preview open: the first posted
// reply settles the preview exactly as a final does. Its first bubble,
// when text, finalizes it in place; otherwise (an image first) the
// preview is cleared before the post's bubbles go. Previews end there (409
// posted), and the final's bubbles follow fresh. The sweeper, later, finds
// the finalized preview's unit in the post's intent and only drops the
// record. However the turn ends after it (an empty final, a final with
// text, the deadline), the turn leaves the post's preview alone: the
// person keeps the post's bubble where the preview was.
func TestLiveAsyncSequentialPostSettlesThePreview(t *testing.T) {
	t.Parallel()
	const textFirst = `[{"id":"s1","text":"Found two flights"},{"id":"s2","text":"checking seats"}]`
	for i, tc := range []struct {
		name, first string // the first post's envelope messages
		final       string // the final post's text; "" an empty final; "-" none (the deadline ends the turn)
		env         map[string]string
		want        []string
		finalized   bool
	}{
		{name: "TextFinalizes", first: textFirst,
			want: []string{"Found two flights", "checking seats", "Seat 12C"}, finalized: true},
		{name: "TextFinalizesThenAFinalWithText", first: textFirst, final: "Booked",
			want: []string{"Found two flights", "checking seats", "Seat 12C", "Booked"}, finalized: true},
		{name: "TextFinalizesThenTheDeadline", first: textFirst, final: "-", env: map[string]string{"PARLEY_ASYNC_TIMEOUT": "8s"},
			want: []string{"Found two flights", "checking seats", "Seat 12C"}, finalized: true},
		{name: "ImageFirstClears", first: `[{"id":"s1","media":{"kind":"image","url":"https://example.com/map.png"}},{"id":"s2","text":"the map"}]`,
			want: []string{"", "the map", "Seat 12C"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, options{env: tc.env})
			chat := int64(-1001000000401 - i)
			turnID := h.asyncGroupTurn(930401+i, chat, 5550401, "later: flights")
			h.shownPreview("msg_spv_1", previewBody(turnID, "Found two", "searching"))
			pv := h.waitDelivered(1, 20*time.Second)[0].MessageID
			first := []byte(`{"turn_id":"` + turnID + `","final":false,"envelope":{"schema":"openab.turn.v1","messages":` + tc.first + `}}`)
			if a := h.postSeq("msg_seq1", first); a.Bubbles != 2 {
				t.Fatalf("first post: %+v", a)
			}
			// Previews end with the first posted reply.
			body := previewBody(turnID, "more", "")
			if code, resp := h.post("/reply/preview", h.agentSigned("msg_spv_2", body), body); code != http.StatusConflict || !strings.Contains(resp, "posted") {
				t.Fatalf("a preview after the first post: %d %s, want 409 posted", code, resp)
			}
			if a := h.postSeq("msg_seq2", seqBody(turnID, false, "Seat 12C")); a.Bubbles != 1 {
				t.Fatalf("second post: %+v", a)
			}
			switch tc.final {
			case "-":
				for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(100 * time.Millisecond) {
					if a, err := h.store.GetAwait(t.Context(), turnID); err == nil && a.State == store.AwaitExpired {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the turn's deadline never ended it")
					}
				}
			case "":
				if code, resp := h.postReply("msg_sfin", []byte(`{"turn_id":"`+turnID+`"}`)); code != http.StatusOK {
					t.Fatalf("final: %d %s", code, resp)
				}
			default:
				if code, resp := h.postReply("msg_sfin", replyBody(turnID, tc.final)); code != http.StatusOK {
					t.Fatalf("final: %d %s", code, resp)
				}
			}
			h.awaitVisible(message.Telegram, strconv.FormatInt(chat, 10), tc.want...)
			rec := h.fake.Recorder()
			if tc.finalized {
				if d := rec.Deletions(); len(d) != 0 {
					t.Fatalf("deletions %+v: want the preview finalized", d)
				}
				for _, e := range rec.Edits() {
					if e.MessageID == pv && e.Text != "Found two flights" {
						t.Fatalf("the preview, finalized by the post, was edited to %q after", e.Text)
					}
				}
				in, err := h.store.GetIntent(t.Context(), agentapi.PostIntentID(turnID, "msg_seq1"))
				if err != nil || in.Units[0].State != message.UnitSent || in.Units[0].Receipt[0] != pv {
					t.Fatalf("the first post's first unit: %+v, %v; want sent as the preview's message %s", in.Units, err, pv)
				}
				// The sweeper, once the record is due, keeps the message.
				h.clock.Advance(3 * time.Minute)
				for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
					if _, err := h.store.GetPreview(t.Context(), turnID, h.clock.Now()); err != nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the sweeper never dropped the finalized preview's record")
					}
				}
				if d := rec.Deletions(); len(d) != 0 {
					t.Fatalf("the sweeper deleted %+v", d)
				}
			} else if d := rec.Deletions(); len(d) != 1 || d[0].MessageID != pv {
				t.Fatalf("deletions %+v: want the preview %s cleared", d, pv)
			}
		})
	}
}

// Slack, an assistant app (SLACK_ASSISTANT) in its thread: an async
// preview's status line goes to the thread's status
// (assistant.threads.setStatus), not under the text, and is cleared in
// every outcome: a final, a silent final, the turn's deadline, and the
// first sequential post that settles the preview.
func TestLiveAsyncSlackAssistantStatus(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name string
		env  map[string]string
		end  func(h *harness, turnID string)
	}{
		{name: "Final", end: func(h *harness, turnID string) {
			if code, resp := h.postReply("msg_afin", replyBody(turnID, "Three flights")); code != http.StatusOK {
				h.t.Fatalf("final: %d %s", code, resp)
			}
		}},
		{name: "SilentFinal", end: func(h *harness, turnID string) {
			body := []byte(`{"turn_id":"` + turnID + `","envelope":{"schema":"openab.turn.v1","messages":[],"next":{"type":"silent"}}}`)
			if code, resp := h.postReply("msg_asil", body); code != http.StatusOK {
				h.t.Fatalf("final: %d %s", code, resp)
			}
		}},
		{name: "TimedOut", env: map[string]string{"PARLEY_ASYNC_TIMEOUT": "6s"}, end: func(*harness, string) {}},
		{name: "SequentialPost", end: func(h *harness, turnID string) {
			h.postSeq("msg_aseq", seqBody(turnID, false, "Three flights"))
			if code, resp := h.postReply("msg_aseqfin", []byte(`{"turn_id":"`+turnID+`"}`)); code != http.StatusOK {
				h.t.Fatalf("final: %d %s", code, resp)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"SLACK_ASSISTANT": "true"}
			for k, v := range tc.env {
				env[k] = v
			}
			h := start(t, options{env: env})
			h.agent.fail = later
			channel, thread := fmt.Sprintf("D0ASYNC%03d", i), "1764900000.000100"
			ts := fmt.Sprintf("1764900000.%06d", 200+i)
			body, _ := json.Marshal(map[string]any{
				"type": "event_callback", "team_id": "T0TEAM0001", "api_app_id": "A0APP00001",
				"event_id": "Ev" + strings.ReplaceAll(ts, ".", ""), "event_time": time.Now().Unix(),
				"authorizations": []map[string]any{{"team_id": "T0TEAM0001", "user_id": "U0BOT00001", "is_bot": true}},
				"event": map[string]any{
					"type": "message", "channel": channel, "channel_type": "im", "user": "U0ADA00001",
					"text": "later: find flights", "ts": ts, "thread_ts": thread,
				},
			})
			if code, answer := h.postSlack(body); code != 200 {
				t.Fatalf("webhook: %d %s", code, answer)
			}
			turnID := intent.IDFor("evt#slack#T0TEAM0001#" + channel + ":" + ts)
			h.waitAwait(turnID)
			h.shownPreview("msg_apv_1", previewBody(turnID, "Three", "searching flights"))
			api, _ := h.fake.For(message.Slack)
			fs := api.(*fakeslack.API)
			for _, d := range h.fake.Delivered() {
				if strings.Contains(d.Text, "searching") {
					t.Fatalf("the status line shows under the text: %q", d.Text)
				}
			}
			tc.end(h, turnID)
			settled := func() bool {
				st := fs.Statuses()
				i := slices.IndexFunc(st, func(s fakeslack.Status) bool { return s.Status == "searching flights" })
				return i >= 0 && slices.ContainsFunc(st[i+1:], func(s fakeslack.Status) bool { return s.Status == "" })
			}
			for deadline := time.Now().Add(45 * time.Second); !settled(); time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("statuses %+v: want the preview's set, then cleared", fs.Statuses())
				}
			}
			h.quiesce(20 * time.Second)
			st := fs.Statuses()
			if last := st[len(st)-1]; last.Status != "" || last.Channel != channel || last.Thread != thread {
				t.Fatalf("statuses %+v: want the thread's status cleared last", st)
			}
		})
	}
}

// On Discord an async preview is the interaction's response (@original).
// The first sequential post's first bubble finalizes it there; every later
// bubble (the post's next, the next post's, the final's) follows as a
// follow-up, in order: none is an edit of @original, which would replace
// the post's bubble with another.
// Without a preview, the first post's first bubble replaces the
// "thinking" response the same way.
func TestLiveAsyncDiscordPostsFollowTheOriginal(t *testing.T) {
	t.Parallel()
	for _, previewed := range []bool{true, false} {
		t.Run(map[bool]string{true: "Previewed", false: "NoPreview"}[previewed], func(t *testing.T) {
			t.Parallel()
			discordPostsFollowTheOriginal(t, previewed)
		})
	}
}

func discordPostsFollowTheOriginal(t *testing.T, previewed bool) {
	h := start(t, options{})
	h.agent.fail = func(agent.TurnRequest) (int, bool) { return http.StatusAccepted, true }
	key, _ := h.discordCommand()
	turnID := intent.IDFor(key)
	h.waitAwait(turnID)
	if previewed {
		h.shownPreview("msg_dpv_1", previewBody(turnID, "Found two", "searching"))
	}
	if a := h.postSeq("msg_dseq1", seqBody(turnID, false, "Found two flights", "checking seats")); a.Bubbles != 2 {
		t.Fatalf("first post: %+v", a)
	}
	if a := h.postSeq("msg_dseq2", seqBody(turnID, false, "Seat 12C")); a.Bubbles != 1 {
		t.Fatalf("second post: %+v", a)
	}
	if code, resp := h.postReply("msg_dfin", replyBody(turnID, "Booked")); code != http.StatusOK {
		t.Fatalf("final: %d %s", code, resp)
	}
	const channel = "1309000000000000200"
	h.awaitVisible(message.Discord, channel, "Found two flights", "checking seats", "Seat 12C", "Booked")
	rec := h.fake.Recorder()
	if d := rec.Deletions(); len(d) != 0 {
		t.Fatalf("deletions %+v", d)
	}
	in, err := h.store.GetIntent(t.Context(), agentapi.PostIntentID(turnID, "msg_dseq1"))
	if err != nil || len(in.Units) == 0 || in.Units[0].State != message.UnitSent {
		t.Fatalf("the first post's intent: %+v, %v", in, err)
	}
	// The posts answer the interaction in order, the final after them: the
	// fake places @original where it is first written, so the order alone
	// cannot show a final's first bubble replacing "thinking" above the
	// posts; the intents' places in the reply do.
	second, err := h.store.GetIntent(t.Context(), agentapi.PostIntentID(turnID, "msg_dseq2"))
	if err != nil {
		t.Fatal(err)
	}
	final := h.intentFor(key)
	if in.ReplyContext == nil || in.Sequence != 0 || second.ReplyContext == nil || second.Sequence != 2 || final.Sequence != 3 {
		t.Fatalf("places in the reply: posts %d (reply context %v), %d (%v), final %d; want 0, 2, 3, the posts answering the interaction",
			in.Sequence, in.ReplyContext != nil, second.Sequence, second.ReplyContext != nil, final.Sequence)
	}
	original := in.Units[0].Receipt[0]
	for _, e := range rec.Edits() {
		if e.MessageID == original && e.Text != "Found two flights" && e.Text != "Found two" {
			t.Fatalf("the response, finalized by the first post, was edited to %q", e.Text)
		}
	}
}

// An early post on Discord (before the turn read its 202) went as a plain
// channel message, with no interaction token: the turn that adopts its
// record takes no preview base then, so the final still answers the
// interaction (its first bubble replaces "thinking"), rather than counting
// the early post and leaving the response unanswered.
func TestLiveAsyncDiscordEarlyPostLeavesTheOriginalToTheFinal(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.fail = func(req agent.TurnRequest) (int, bool) {
		if code, body := h.postReply("msg_dearly", seqBody(req.TurnID, false, "on it")); code != http.StatusOK {
			t.Errorf("early post: %d %s", code, body)
		}
		return http.StatusAccepted, true
	}
	key, _ := h.discordCommand()
	turnID := intent.IDFor(key)
	h.waitAwait(turnID)
	if code, resp := h.postReply("msg_dlate", replyBody(turnID, "here it is")); code != http.StatusOK {
		t.Fatalf("final: %d %s", code, resp)
	}
	h.awaitVisible(message.Discord, "1309000000000000200", "on it", "here it is")
	if final := h.intentFor(key); final.Sequence != 0 {
		t.Fatalf("the final's place in the reply %d, want 0: the early post did not answer the interaction", final.Sequence)
	}
}
