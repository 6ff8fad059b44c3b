package platformtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// signatures: the platform's own signature verifies; a missing, wrong or
// stale one, or a tampered body, is refused with its sentinel and leaves
// nothing for Parse.
func (s *suite) signatures(t *testing.T) {
	t.Parallel()
	r := s.receiver(t)
	body := s.anySample(t)
	at := s.h.Samples.At
	secret := s.h.Env[s.h.SecretSetting]
	sign := func(secret string, body []byte, at time.Time) http.Header { return s.h.Sign(secret, body, at) }

	type tc struct {
		name string
		req  *platform.Request
		want error
	}
	cases := []tc{
		{"Signed", s.signed(body, at, at), nil},
		{"WrongSecret", request(http.MethodPost, body, sign(secret+"x", body, at), at), platform.ErrUnauthorized},
		// A comparison that stops at the first byte, or at a length
		// mismatch, passes the cases above but not this one.
		{"WrongSecretOfTheSameLength", request(http.MethodPost, body, sign(flipLast(secret), body, at), at), platform.ErrUnauthorized},
		{"Unsigned", request(http.MethodPost, body, http.Header{"Content-Type": {"application/json"}}, at), platform.ErrUnauthorized},
	}
	for _, name := range s.h.AuthHeaders {
		req := s.signed(body, at, at)
		if req.Header.Get(name) == "" {
			t.Fatalf("Harness.AuthHeaders names %s, which Sign does not set", name)
		}
		req.Header.Del(name)
		cases = append(cases, tc{"Missing" + name, req, platform.ErrUnauthorized})
		req = s.signed(body, at, at)
		req.Header.Set(name, "")
		cases = append(cases, tc{"Empty" + name, req, platform.ErrUnauthorized})
	}
	if s.h.Features.SignsBody {
		req := s.signed(body, at, at)
		req.Body = tamper(req.Body)
		cases = append(cases, tc{"TamperedBody", req, platform.ErrUnauthorized})
	}
	if skew := s.h.Features.MaxSkew; skew > 0 {
		cases = append(cases,
			tc{"WithinTheWindow", s.signed(body, at.Add(-skew+time.Minute), at), nil},
			tc{"Stale", s.signed(body, at.Add(-skew-time.Minute), at), platform.ErrStale},
			tc{"FromTheFuture", s.signed(body, at.Add(skew+time.Minute), at), platform.ErrStale},
		)
	} else {
		// Nothing dates the request: an old one is as good as a new one.
		cases = append(cases, tc{"OldButUndated", s.signed(body, at.Add(-48*time.Hour), at), nil})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := verify(r, c.req)
			if c.want == nil {
				if err != nil {
					t.Fatalf("Verify refused the platform's own signature: %v", err)
				}
				return
			}
			if !errors.Is(err, c.want) || platform.StatusOf(err) != http.StatusUnauthorized {
				t.Fatalf("Verify = %v, want %v (401)", err, c.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the refusal shows the secret: %v", err)
			}
			if c.req.Verified != nil {
				t.Fatalf("a refused request carries Verified = %v for Parse", c.req.Verified)
			}
		})
	}

	t.Run("NoSecretRefusesEverything", func(t *testing.T) {
		r, err := s.h.Adapter.NewReceiver(s.env(map[string]string{s.h.SecretSetting: ""}))
		if err != nil {
			return // refused at start-up: the function does not start
		}
		if err := verify(r, s.signed(body, at, at)); !errors.Is(err, platform.ErrUnauthorized) {
			t.Fatalf("a receiver built without %s verified a request: %v", s.h.SecretSetting, err)
		}
	})
}

// flipLast changes the last character of s, keeping its length.
func flipLast(s string) string {
	b := []byte(s)
	if b[len(b)-1] == 'a' {
		b[len(b)-1] = 'b'
	} else {
		b[len(b)-1] = 'a'
	}
	return string(b)
}

// tamper changes one character of a body, away from its start, where a
// value (not the JSON structure) is likely.
func tamper(b []byte) []byte {
	b = append([]byte(nil), b...)
	for i := len(b) / 2; i < len(b); i++ {
		if c := b[i]; 'a' <= c && c <= 'y' {
			b[i]++
			return b
		}
	}
	return append(b, ' ')
}

// handshakes: each check is answered verbatim, a signed one only when
// signed, and a Handshaker takes nothing else for a handshake.
func (s *suite) handshakes(t *testing.T) {
	t.Parallel()
	r := s.receiver(t)
	at := s.h.Samples.At
	hs, isHandshaker := r.(platform.Handshaker)
	unsigned := 0
	for _, c := range s.h.Handshakes {
		t.Run(c.Name, func(t *testing.T) {
			method := c.Method
			if method == "" {
				method = http.MethodPost
			}
			if c.Signed {
				req := s.signed(c.Body, at, at)
				req.Method = method
				if err := verify(r, req); err != nil {
					t.Fatalf("Verify: %v", err)
				}
				p, err := r.Parse(req)
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if p.Reply == nil || !reflect.DeepEqual(*p.Reply, c.Want) || len(p.Events) > 0 {
					t.Fatalf("Parse = %s, want only the reply %s", show(p), show(c.Want))
				}
				forged := request(method, c.Body, nil, at)
				if err := verify(r, forged); !errors.Is(err, platform.ErrUnauthorized) {
					t.Fatalf("an unsigned handshake verified (%v): anyone could have the endpoint echo them", err)
				}
				return
			}
			if !isHandshaker {
				t.Fatal("an unsigned handshake, but the receiver is no platform.Handshaker")
			}
			req := request(method, c.Body, nil, at)
			req.Query = c.Query
			reply, ok := hs.Handshake(req)
			if !ok || reply == nil || !reflect.DeepEqual(*reply, c.Want) {
				t.Fatalf("Handshake = %v, %v; want %s", reply, ok, show(c.Want))
			}
		})
		if !c.Signed {
			unsigned++
		}
	}
	if isHandshaker {
		if unsigned == 0 {
			t.Error("the receiver is a platform.Handshaker, and the harness has no unsigned Handshake for it")
		}
		t.Run("SamplesAreNoHandshakes", func(t *testing.T) {
			for _, name := range sampleFiles(t, s.h.Samples.Dir) {
				req := s.signed(readSample(t, s.h.Samples.Dir, name), at, at)
				if reply, ok := hs.Handshake(req); ok {
					t.Errorf("%s: answered as a handshake (%v), before its signature was checked", name, reply)
				}
			}
		})
	}
}

// samples: every captured request verifies and parses to its expectation,
// into well-formed events whose keys do not depend on when they arrive.
func (s *suite) samples(t *testing.T) {
	t.Parallel()
	r := s.receiver(t)
	dir, at := s.h.Samples.Dir, s.h.Samples.At
	files := sampleFiles(t, dir)
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			want, ok := s.h.Samples.Want[name]
			if !ok {
				t.Fatalf("sample %s has no expectation: add one to the harness's Samples.Want", name)
			}
			body := readSample(t, dir, name)
			got := s.parse(t, r, s.signed(body, at, at))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Parse(%s)\n got %s\nwant %s", name, show(got), show(want))
			}
			for _, ev := range got.Events {
				if err := s.wellFormed(ev); err != nil {
					t.Errorf("event %s: %v", ev.EventID, err)
				}
			}
			// A redelivery, a minute later, is the same events.
			later := s.parse(t, r, s.signed(body, at.Add(time.Minute), at.Add(time.Minute)))
			if keys(later) != keys(got) {
				t.Fatalf("a redelivery has other keys: %s, first %s", keys(later), keys(got))
			}
		})
	}
	for name := range s.h.Samples.Want {
		if !slices.Contains(files, name) {
			t.Errorf("expectation for %s, but %s has no such sample", name, dir)
		}
	}
	if s.h.Features.Presses {
		n := 0
		for _, p := range s.h.Samples.Want {
			for _, ev := range p.Events {
				if ev.Kind == message.KindAnswer {
					n++
				}
			}
		}
		if n == 0 {
			t.Error("the platform delivers presses (Features.Presses), and no sample is one")
		}
	}
}

func (s *suite) parse(t *testing.T, r platform.Receiver, req *platform.Request) platform.Parsed {
	t.Helper()
	if err := verify(r, req); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	p, err := r.Parse(req)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func keys(p platform.Parsed) string {
	var out []string
	for _, ev := range p.Events {
		out = append(out, ev.Key()+" "+ev.Thread.Key())
	}
	return fmt.Sprint(out)
}

// wellFormed checks what every consumer of an event relies on.
func (s *suite) wellFormed(ev message.Event) error {
	p := s.h.Adapter.Platform()
	switch {
	case ev.Platform != p || ev.Thread.Platform != p:
		return fmt.Errorf("platform %q, thread on %q; want %q", ev.Platform, ev.Thread.Platform, p)
	case ev.Account == "" || ev.Thread.Account != ev.Account:
		return fmt.Errorf("account %q, thread account %q: the account scopes the event id and the thread", ev.Account, ev.Thread.Account)
	case ev.EventID == "" || ev.Thread.Chat == "":
		return errors.New("no event id or no chat")
	case ev.ChatType != message.ChatPrivate && ev.ChatType != message.ChatGroup:
		return fmt.Errorf("chat type %q", ev.ChatType)
	case ev.Sender.ID == "" && ev.Kind != message.KindStatus:
		return errors.New("no sender")
	}
	switch ev.Kind {
	case message.KindMessage:
		if (strings.TrimSpace(ev.Text) == "" && len(ev.Attachments) == 0) || ev.Press != nil {
			return errors.New("a message without text or attachments, or with a press")
		}
		for i, a := range ev.Attachments {
			if a.Index != i || a.Kind == "" || a.PlatformID == "" || a.URL != "" {
				return fmt.Errorf("attachment %d: want its index, kind and platform id, and no URL before the turn stores it: %+v", i, a)
			}
		}
	case message.KindAnswer:
		// A press names its message where the platform says which one was
		// pressed (a LINE quick reply is gone once used, and names none).
		if ev.Press == nil || (ev.Press.Data == "" && len(ev.Press.Values) == 0) {
			return fmt.Errorf("an answer without its press's data: %s", show(ev.Press))
		}
	case message.KindStatus:
		if st := ev.Status; st == nil || st.MessageID == "" || st.State == "" {
			return fmt.Errorf("a status without the message it reports on, or its state: %+v", ev.Status)
		}
	case message.KindReaction:
		// WhatsApp names no emoji when one is taken back.
		if r := ev.Reaction; r == nil || r.MessageID == "" || (r.Emoji == "" && !r.Removed) || ev.Text != "" {
			return fmt.Errorf("a reaction without the message it reacts to, or its emoji: %s", show(ev.Reaction))
		}
	case message.KindEdit, message.KindDelete:
		if ev.MessageID == "" || ev.Press != nil || ev.Reaction != nil {
			return errors.New("an edit or a deletion that names no message")
		}
	default:
		return fmt.Errorf("kind %q: a chat platform sends messages, answers, statuses, reactions, edits and deletions", ev.Kind)
	}
	return nil
}

// garbage: whatever the body, correctly signed, Parse refuses it with a
// 4xx sentinel or parses it to nothing but ignored updates; it never
// panics.
func (s *suite) garbage(t *testing.T) {
	t.Parallel()
	r := s.receiver(t)
	at := s.h.Samples.At
	bodies := map[string][]byte{
		"Empty":          {},
		"Spaces":         []byte(" \n\t "),
		"Null":           []byte("null"),
		"Array":          []byte("[]"),
		"Number":         []byte("7"),
		"String":         []byte(`"hi"`),
		"Truncated":      []byte(`{"type":"`),
		"Binary":         {0, 0xff, 0xfe, '{'},
		"DeepNesting":    []byte(strings.Repeat("[", 100_000)),
		"DeepObject":     []byte(strings.Repeat(`{"a":`, 20_000) + "1" + strings.Repeat("}", 20_000)),
		"HugeNumbers":    []byte(`{"update_id":1e999,"type":1e999,"event_time":-1e999}`),
		"WrongTypes":     []byte(`{"type":{},"update_id":"1","event":[],"message":7,"callback_query":"x","actions":{}}`),
		"NullEverywhere": []byte(`{"type":null,"update_id":null,"event":null,"message":null,"callback_query":null}`),
		"Form":           []byte("payload="),
		"FormNotJSON":    []byte("payload=%7B"),
		"FormNull":       []byte("payload=null"),
		"FormBadEscape":  []byte("payload=%zz"),
		"FormTwice":      []byte("payload=%7B%7D&payload=%7B%7D"),
		"FormOther":      []byte("command=%2Fparley&text=hi"),
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			p, err := s.parseGarbage(r, s.signed(body, at, at))
			if err != nil {
				if st := platform.StatusOf(err); st < 400 || st > 499 {
					t.Fatalf("refused with %v (status %d): want a 4xx sentinel", err, st)
				}
				return
			}
			if len(p.Events) > 0 || p.Reply != nil || p.Ack != nil {
				t.Fatalf("garbage parsed to %s", show(p))
			}
		})
	}
	for name, body := range s.h.Malformed {
		t.Run("Malformed"+name, func(t *testing.T) {
			_, err := s.parseGarbage(r, s.signed(body, at, at))
			if !errors.Is(err, platform.ErrMalformed) {
				t.Fatalf("Parse = %v, want ErrMalformed", err)
			}
		})
	}
}

// parseGarbage runs Verify and Parse, turning a panic into a failure.
func (s *suite) parseGarbage(r platform.Receiver, req *platform.Request) (p platform.Parsed, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	if err := verify(r, req); err != nil {
		return p, err
	}
	return r.Parse(req)
}

// verify is what the webhook core runs: VerifyContext, bounded by
// platform.MaxVerifyWait, for a platform.ContextVerifier (its keys come over
// the network), Verify for the others.
func verify(r platform.Receiver, req *platform.Request) error {
	if cv, ok := r.(platform.ContextVerifier); ok {
		ctx, cancel := context.WithTimeout(context.Background(), platform.MaxVerifyWait)
		defer cancel()
		return cv.VerifyContext(ctx, req)
	}
	return r.Verify(req)
}
