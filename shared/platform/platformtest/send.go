package platformtest

import (
	"cmp"
	"context"
	"errors"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/split"
)

// settings: every setting is named, documented, read by a half, of a
// known kind with a valid default; secrets are marked and have no default.
func (s *suite) settings(t *testing.T) {
	t.Parallel()
	prefix := strings.ToUpper(string(s.h.Adapter.Platform())) + "_"
	seen := map[string]platform.Setting{}
	for _, set := range s.h.Adapter.Settings() {
		switch {
		case set.Key == "" || strings.TrimSpace(set.Doc) == "":
			t.Errorf("a setting without a key or a doc: %+v", set)
		case !strings.HasPrefix(set.Key, prefix):
			t.Errorf("%s: a platform's settings start with %s", set.Key, prefix)
		case set.Half&platform.Both == 0 || set.Half&^platform.Both != 0:
			t.Errorf("%s: Half %d is neither Receive, Send nor Both", set.Key, set.Half)
		case !slices.Contains([]platform.Kind{"", platform.KindString, platform.KindBool, platform.KindURL, platform.KindDuration}, set.Kind):
			t.Errorf("%s: unknown kind %q", set.Key, set.Kind)
		case set.Check(set.Default) != nil:
			t.Errorf("%s: its default does not check: %v", set.Key, set.Check(set.Default))
		}
		if _, dup := seen[set.Key]; dup {
			t.Errorf("%s is listed twice", set.Key)
		}
		seen[set.Key] = set
		looksSecret := strings.Contains(set.Key, "TOKEN") || strings.Contains(set.Key, "SECRET") || strings.Contains(set.Key, "PASSWORD")
		if looksSecret && !set.Secret {
			t.Errorf("%s reads like a credential and is not marked Secret: it would sit in the template and the environment", set.Key)
		}
		if set.Secret && set.Default != "" {
			t.Errorf("%s is a secret with a default", set.Key)
		}
	}
	if set, ok := seen[s.h.BaseURLSetting]; !ok || set.Kind != platform.KindURL || set.Half&platform.Send == 0 {
		t.Errorf("BaseURLSetting %s is not a URL setting of the send half: %+v", s.h.BaseURLSetting, set)
	}
	if set, ok := seen[s.h.SecretSetting]; !ok || (!set.Secret && !s.h.Features.PublicCredential) || set.Half&platform.Receive == 0 {
		t.Errorf("SecretSetting %s is not a secret of the receive half: %+v", s.h.SecretSetting, set)
	}
	for k := range s.h.Env {
		if _, ok := seen[k]; !ok {
			t.Errorf("Harness.Env sets %s, which is none of the adapter's settings", k)
		}
	}
}

// capabilities: what the adapter declares is what its halves do.
func (s *suite) capabilities(t *testing.T) {
	t.Parallel()
	caps := s.h.Adapter.Capabilities()
	f := s.fake(t, nil)
	_, typer := f.sender.(platform.Typer)
	_, asker := f.sender.(platform.Asker)
	_, acker := f.sender.(platform.Acknowledger)
	_, editor := f.sender.(platform.Editor)
	_, reconciler := f.sender.(platform.Reconciler)
	_, reactor := f.sender.(platform.Reactor)
	for _, c := range []struct {
		name        string
		says, has   bool
		iface, flag string
	}{
		{"Typing", caps.Typing, typer, "platform.Typer", "Typing"},
		{"Buttons", caps.Buttons, asker, "platform.Asker", "Buttons"},
		// A platform with controls delivers their presses, and each must
		// be acknowledged so that no spinner hangs.
		{"Buttons", caps.Buttons, acker, "platform.Acknowledger", "Buttons"},
		{"Edit", caps.Edit, editor, "platform.Editor", "Edit"},
		{"Reconcile", caps.Reconcile, reconciler, "platform.Reconciler", "Reconcile"},
		{"Reactions", caps.Reactions, reactor, "platform.Reactor", "Reactions"},
	} {
		if c.says != c.has {
			t.Errorf("Capabilities().%s = %v, but the sender implements %s: %v", c.flag, c.says, c.iface, c.has)
		}
	}
	if caps.TextLimit <= 0 || !slices.Contains([]message.Counting{message.CountRunes, message.CountUTF16, message.CountBytes}, caps.Counting) {
		t.Errorf("Capabilities() = %+v: no text limit, or an unknown counting", caps)
	}

	t.Run("TypingShows", func(t *testing.T) {
		if !typer {
			t.Skip("no typing indicator")
		}
		f := s.fake(t, nil)
		if err := f.sender.(platform.Typer).Typing(t.Context(), s.h.Thread); err != nil {
			t.Fatalf("Typing: %v", err)
		}
		acts := f.rec.Actions()
		if len(acts) != 1 || acts[0].Chat != s.h.Thread.Chat || acts[0].Thread != s.h.Thread.Thread {
			t.Fatalf("the fake shows %+v, want one action in %+v", acts, s.h.Thread)
		}
		if len(f.rec.Delivered()) != 0 {
			t.Fatal("typing posted a message")
		}
	})

	t.Run("ReactionShows", func(t *testing.T) {
		if !reactor {
			t.Skip("no reactions")
		}
		f := s.fake(t, nil)
		rc, err := f.sender.Send(t.Context(), message.Outgoing{Thread: s.h.Thread, Content: message.Text("react to me")})
		if err != nil || len(rc.MessageIDs) == 0 {
			t.Fatalf("Send: %v, %+v", err, rc)
		}
		id := rc.MessageIDs[0]
		r := f.sender.(platform.Reactor)
		for range 2 { // again: the same reaction changes nothing
			if err := r.React(t.Context(), s.h.Thread, id, message.React{Emoji: "👀"}); err != nil {
				t.Fatalf("React: %v", err)
			}
		}
		if err := r.React(t.Context(), s.h.Thread, id, message.React{Emoji: "👍", Received: "👀"}); err != nil {
			t.Fatalf("React replacing the received one: %v", err)
		}
		on := f.rec.ReactionsOn(s.h.Adapter.Platform(), s.h.Thread.Chat, id)
		if len(on) != 1 || (on[0] != "👍" && on[0] != "+1") {
			t.Fatalf("the bot's reactions on the message: %v, want only 👍", on)
		}
		if len(f.rec.Delivered()) != 1 {
			t.Fatalf("a reaction was delivered as a message: %+v", f.rec.Delivered())
		}
		if err := r.React(t.Context(), s.h.Thread, "", message.React{Emoji: "👍"}); err == nil {
			t.Fatal("a reaction to no message was taken")
		}
	})

	t.Run("NoCredentialsIsNotConfigured", func(t *testing.T) {
		unset := map[string]string{}
		for _, set := range s.h.Adapter.Settings() {
			if set.Secret {
				unset[set.Key] = ""
			}
		}
		sender, err := s.h.Adapter.NewSender(s.env(unset), nil)
		if !errors.Is(err, platform.ErrNotConfigured) {
			t.Fatalf("NewSender without credentials = %v, %v; want ErrNotConfigured", sender, err)
		}
	})

	t.Run("ReceiverIsThePlatforms", func(t *testing.T) {
		if p := s.receiver(t).Platform(); p != s.h.Adapter.Platform() {
			t.Fatalf("the receiver says %q", p)
		}
	})

	t.Run("ThreadIsCanonical", func(t *testing.T) {
		// The suite's thread is one an event names; the adapter's rules
		// for outside names must leave it as it is.
		got, err := s.h.Adapter.Targets(s.env(nil))(s.h.Thread, false)
		if err != nil || got != s.h.Thread {
			t.Fatalf("Targets(%+v) = %+v, %v", s.h.Thread, got, err)
		}
	})
}

// sendReceipt: a send is recorded by the fake, once, where it was sent, and
// the receipt holds every id the platform gave.
func (s *suite) sendReceipt(t *testing.T) {
	t.Parallel()
	f := s.fake(t, nil)
	var ids []string
	for i, text := range []string{"hello from the conformance suite", "and a second bubble"} {
		rc, err := f.sender.Send(t.Context(), message.Outgoing{Thread: s.h.Thread, Content: message.Text(text), IdempotencyKey: "platformtest#" + string(rune('0'+i))})
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
		got := f.rec.Delivered()
		if len(got) != i+1 {
			t.Fatalf("the fake recorded %d messages after %d sends", len(got), i+1)
		}
		d := got[i]
		if d.Platform != s.h.Adapter.Platform() || d.Chat != s.h.Thread.Chat || d.Thread != s.h.Thread.Thread {
			t.Fatalf("recorded %+v, sent into %+v", d, s.h.Thread)
		}
		if !reflect.DeepEqual(rc.MessageIDs, []string{d.MessageID}) {
			t.Fatalf("receipt %v, the platform gave %q", rc.MessageIDs, d.MessageID)
		}
		ids = append(ids, rc.MessageIDs...)
	}
	if ids[0] == ids[1] {
		t.Fatalf("two messages, one id %q", ids[0])
	}
	if n := f.rec.Calls(); n != 2 {
		t.Fatalf("%d calls for two sends", n)
	}
}

// faults: every injected failure comes back as the class the table says,
// after exactly one call, without the text or a secret in the error.
func (s *suite) faults(t *testing.T) {
	t.Parallel()
	rows := append([]FaultCase{
		{Name: "RateLimitedWithItsWait", Fault: fakeapi.Fault{Status: 429, RetryAfter: 7 * time.Second}, Class: message.FailRateLimit, RetryAfter: 7 * time.Second},
		{Name: "AnswerDroppedAfterCommitIsUnknown", Fault: fakeapi.Fault{DropResponseAfterCommit: true}, Class: message.FailUnknown},
	}, s.h.Faults...)
	const text = "the secret plan, in full"
	for _, row := range rows {
		t.Run(row.Name, func(t *testing.T) {
			t.Parallel()
			f := s.fake(t, nil)
			row.Fault.Platform = s.h.Adapter.Platform()
			f.rec.Inject(row.Fault)
			_, err := f.sender.Send(t.Context(), message.Outgoing{Thread: s.h.Thread, Content: message.Text(text)})
			se := s.sendError(t, err, row.Class, text)
			if se.RetryAfter != row.RetryAfter {
				t.Fatalf("RetryAfter %s, want %s", se.RetryAfter, row.RetryAfter)
			}
			if n := f.rec.Calls(); n != 1 {
				t.Fatalf("%d calls: a sender makes one; retrying is the delivery function's", n)
			}
			posted := len(f.rec.Delivered())
			switch {
			case row.Fault.DropResponseAfterCommit && posted != 1:
				t.Fatal("the fake did not record the message before it dropped the answer")
			case !row.Fault.DropResponseAfterCommit && posted != 0:
				t.Fatalf("the fake recorded %d messages despite the fault", posted)
			}
			// The fault is used up: the sender works again.
			if _, err := f.sender.Send(t.Context(), message.Outgoing{Thread: s.h.Thread, Content: message.Text("again")}); err != nil {
				t.Fatalf("the send after the fault: %v", err)
			}
		})
	}

	// Refused before anything was sent: nothing can have been posted.
	t.Run("ConnectionRefusedIsTransient", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + ln.Addr().String()
		ln.Close()
		f := s.fake(t, map[string]string{s.h.BaseURLSetting: closed})
		_, err = f.sender.Send(t.Context(), message.Outgoing{Thread: s.h.Thread, Content: message.Text(text)})
		s.sendError(t, err, message.FailTransient, text)
	})

	t.Run("AnswerLaterThanTheDeadlineIsUnknown", func(t *testing.T) {
		t.Parallel()
		f := s.fake(t, nil)
		// A first send warms what an adapter fetches before it posts (Google
		// Chat's and Teams' tokens): the deadline below is the post's, and a
		// loaded machine must not spend it on the token and fail before the
		// request left, which is rightly transient.
		if _, err := f.sender.Send(t.Context(), message.Outgoing{Thread: s.h.Thread, Content: message.Text(text)}); err != nil {
			t.Fatalf("warm-up send: %v", err)
		}
		f.rec.Inject(fakeapi.Fault{Platform: s.h.Adapter.Platform(), Delay: 300 * time.Millisecond})
		short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		_, err := f.sender.Send(short, message.Outgoing{Thread: s.h.Thread, Content: message.Text(text)})
		s.sendError(t, err, message.FailUnknown, text)
		// The slow platform posts it all the same: that is why it is unknown.
		wait, cancelWait := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancelWait()
		if _, err := f.rec.WaitFor(wait, 2); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("WrongCredentialIsAuth", func(t *testing.T) {
		t.Parallel()
		n := 0
		for _, set := range s.h.Adapter.Settings() {
			if !set.Secret || set.Half&platform.Send == 0 || s.h.Env[set.Key] == "" {
				continue
			}
			n++
			wrong := s.h.Env[set.Key] + "x"
			if s.h.WrongCredential != nil {
				wrong = s.h.WrongCredential(set.Key, s.h.Env[set.Key])
			}
			f := s.fake(t, map[string]string{set.Key: wrong})
			_, err := f.sender.Send(t.Context(), message.Outgoing{Thread: s.h.Thread, Content: message.Text(text)})
			s.sendError(t, err, message.FailAuth, text)
			if f.requests.Load()+f.credentials.Load() == 0 || len(f.rec.Delivered()) != 0 {
				t.Fatalf("%s: the fake was asked %d times and recorded %v; want it to refuse the credential itself", set.Key, f.requests.Load()+f.credentials.Load(), f.rec.Delivered())
			}
		}
		if n == 0 {
			t.Fatal("no send credential in Harness.Env")
		}
	})
}

// fill is a text of exactly n units counted by c, mostly of a character
// whose size differs by counting (an emoji: 1 rune, 2 UTF-16 units, 4
// bytes), so a wrong Counting shows.
func fill(n int, c message.Counting) string {
	const wide = "😀"
	size := split.Count(wide, c)
	return strings.Repeat(wide, n/size) + strings.Repeat("a", n%size)
}

// limits: a text at the declared limit, counted the declared way, is
// accepted; one unit over what the platform takes is refused by the fake's
// own validation; split.Text's parts all go through.
func (s *suite) limits(t *testing.T) {
	t.Parallel()
	caps := s.h.Adapter.Capabilities()
	limit := cmp.Or(s.h.PlatformLimit, caps.TextLimit)
	if limit < caps.TextLimit {
		t.Fatalf("PlatformLimit %d is below the declared TextLimit %d", limit, caps.TextLimit)
	}
	send := func(t *testing.T, f *fake, text string) error {
		t.Helper()
		_, err := f.sender.Send(t.Context(), message.Outgoing{Thread: s.h.Thread, Content: message.Text(text)})
		return err
	}

	t.Run("AtTheLimit", func(t *testing.T) {
		t.Parallel()
		f := s.fake(t, nil)
		for _, n := range slices.Compact([]int{caps.TextLimit, limit}) {
			if err := send(t, f, fill(n, caps.Counting)); err != nil {
				t.Fatalf("%d %s refused: %v", n, caps.Counting, err)
			}
		}
	})

	t.Run("OneOverIsRefusedByThePlatform", func(t *testing.T) {
		t.Parallel()
		f := s.fake(t, nil)
		err := send(t, f, fill(limit, caps.Counting)+"a")
		s.sendError(t, err, message.FailInvalidPayload, "")
		if f.requests.Load() != 1 || len(f.rec.Delivered()) != 0 {
			t.Fatalf("asked %d times, recorded %d: the fake itself must refuse it, as the platform does", f.requests.Load(), len(f.rec.Delivered()))
		}
	})

	t.Run("SplitPartsAllGo", func(t *testing.T) {
		t.Parallel()
		f := s.fake(t, nil)
		long := strings.Repeat("Lorem ipsum 😀 dolor sit amet.\n", 5*caps.TextLimit/(2*split.Count("Lorem ipsum 😀 dolor sit amet.\n", caps.Counting)))
		parts := split.Text(long, caps)
		if len(parts) < 2 {
			t.Fatalf("%d parts of a text of %d %s", len(parts), split.Count(long, caps.Counting), caps.Counting)
		}
		for i, part := range parts {
			if err := send(t, f, part); err != nil {
				t.Fatalf("part %d of %d (%d %s): %v", i, len(parts), split.Count(part, caps.Counting), caps.Counting, err)
			}
		}
		if got := len(f.rec.Delivered()); got != len(parts) {
			t.Fatalf("%d parts, %d recorded", len(parts), got)
		}
	})
}

// agentText holds what platforms render when they parse: mentions, channel
// pings, masked links, markdown, HTML.
const agentText = "<!channel> <@U1> <https://x|y> *b* _i_ `c` <b>x</b> &amp; @everyone @here"

// inertText: the agent's text reaches the platform so that it renders as
// written (the harness's Inert says what that takes on its platform).
func (s *suite) inertText(t *testing.T) {
	t.Parallel()
	f := s.fake(t, nil)
	if _, err := f.sender.Send(t.Context(), message.Outgoing{Thread: s.h.Thread, Content: message.Text(agentText)}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := f.rec.Delivered()
	if len(got) != 1 {
		t.Fatalf("recorded %d messages", len(got))
	}
	if err := s.h.Inert(agentText, got[0]); err != nil {
		t.Fatalf("the agent's text would not render as written: %v (sent %s)", err, show(got[0].Args))
	}
}

// foreignThread: a thread of another account, or without a chat, is
// refused as invalid_payload by every ability of the sender, without a
// call: a credential reaches only its own conversations.
func (s *suite) foreignThread(t *testing.T) {
	t.Parallel()
	other := s.h.Thread
	other.Account += "9"
	noChat := s.h.Thread
	noChat.Chat = ""
	for name, th := range map[string]message.Thread{"OtherAccount": other, "NoChat": noChat} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := s.fake(t, nil)
			out := message.Outgoing{Thread: th, Content: message.Text("hello")}
			_, err := f.sender.Send(t.Context(), out)
			s.sendError(t, err, message.FailInvalidPayload, "")
			if ty, ok := f.sender.(platform.Typer); ok {
				s.sendError(t, ty.Typing(t.Context(), th), message.FailInvalidPayload, "")
			}
			if a, ok := f.sender.(platform.Asker); ok {
				q := out
				q.Content = question()
				_, err := a.Ask(t.Context(), q)
				s.sendError(t, err, message.FailInvalidPayload, "")
			}
			if e, ok := f.sender.(platform.Editor); ok {
				s.sendError(t, e.Edit(t.Context(), th, "1", message.Text("x")), message.FailInvalidPayload, "")
			}
			if r, ok := f.sender.(platform.Reconciler); ok {
				_, _, err := r.Reconcile(t.Context(), out)
				s.sendError(t, err, message.FailInvalidPayload, "")
			}
			if n := f.requests.Load(); n != 0 {
				t.Fatalf("%d requests reached the platform", n)
			}
		})
	}
}

func question() message.Content {
	return message.Content{Prompt: &message.Prompt{Text: "Which city?", Options: []message.Choice{
		{Label: "Lisbon", Data: "q1:0:0"}, {Label: "Porto", Data: "q1:0:1"},
	}}}
}

// content: what the sender cannot send (nothing it knows; a question
// without an Asker) is refused as invalid_payload without a call, never
// sent as something else.
func (s *suite) content(t *testing.T) {
	t.Parallel()
	cases := map[string]message.Content{"Empty": {}}
	f := s.fake(t, nil)
	if _, ok := f.sender.(platform.Asker); !ok {
		cases["QuestionWithoutAsker"] = question()
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := f.sender.Send(t.Context(), message.Outgoing{Thread: s.h.Thread, Content: c})
			s.sendError(t, err, message.FailInvalidPayload, "")
		})
	}
	if n := f.requests.Load(); n != 0 {
		t.Fatalf("%d requests reached the platform", n)
	}
}

// replies: a Replier sends a reply's first bubbles in one call, each with
// its own receipt, and its token once.
func (s *suite) replies(t *testing.T) {
	t.Parallel()
	f := s.fake(t, nil)
	r, ok := f.sender.(platform.Replier)
	if !ok {
		t.Skip("not a platform.Replier")
	}
	if s.h.IssueReplyToken == nil {
		t.Fatal("the sender is a platform.Replier: Harness.IssueReplyToken is required")
	}
	now := time.Now()
	fresh := &message.ReplyContext{Token: s.h.IssueReplyToken(f.api, s.h.Thread.Chat), Until: now.Add(time.Minute)}
	first := message.Outgoing{Thread: s.h.Thread, Content: message.Text("bubble 1"), ReplyContext: fresh}
	n := r.Replies(first)
	if n < 2 {
		t.Fatalf("Replies = %d for a fresh token: a Replier carries at least 2", n)
	}
	later := first
	later.Sequence = 1
	stale := first
	stale.ReplyContext = &message.ReplyContext{Token: fresh.Token, Until: now.Add(-time.Second)}
	if r.Replies(later) != 0 || r.Replies(stale) != 0 {
		t.Fatalf("Replies = %d for a later bubble, %d for a stale token; want 0", r.Replies(later), r.Replies(stale))
	}
	ms := make([]message.Outgoing, n+1)
	for i := range ms {
		ms[i] = first
		ms[i].Sequence, ms[i].Content = i, message.Text("bubble "+string(rune('1'+i)))
		ms[i].IdempotencyKey = "i#" + string(rune('a'+i))
	}
	if rcs, ok, err := r.Reply(t.Context(), ms); ok || err != nil || len(rcs) != 0 || f.requests.Load() != 0 {
		t.Fatalf("a reply of %d bubbles, one more than Replies: %v %v %v after %d calls; want nothing sent", n+1, rcs, ok, err, f.requests.Load())
	}
	rcs, ok, err := r.Reply(t.Context(), ms[:n])
	if err != nil || !ok || len(rcs) != n {
		t.Fatalf("Reply of %d bubbles: %v, %v, %d receipts", n, err, ok, len(rcs))
	}
	seen := map[string]bool{}
	for i, rc := range rcs {
		if len(rc.MessageIDs) != 1 || seen[rc.MessageIDs[0]] {
			t.Fatalf("receipt %d is %v: want one id of its own", i, rc.MessageIDs)
		}
		seen[rc.MessageIDs[0]] = true
	}
	d := f.rec.Delivered()
	if len(d) != 1 || f.requests.Load() != 1 || d[0].Chat != s.h.Thread.Chat || !strings.Contains(d[0].Text, "bubble 1") || !strings.Contains(d[0].Text, "bubble "+string(rune('0'+n))) {
		t.Fatalf("the fake recorded %+v after %d calls: want the %d bubbles in one call", d, f.requests.Load(), n)
	}
	// The token is spent: the same reply again sends nothing, and says so.
	if again, ok, err := r.Reply(t.Context(), ms[:n]); ok || err != nil || len(again) != 0 || len(f.rec.Delivered()) != 1 {
		t.Fatalf("a reply with a spent token: %v, %v, %v; want refused, nothing sent", again, ok, err)
	}
}
