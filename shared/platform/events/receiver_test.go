package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

func parse(t *testing.T, r *Receiver, req *platform.Request) (platform.Parsed, error) {
	t.Helper()
	if err := r.Verify(req); err != nil {
		return platform.Parsed{}, err
	}
	return r.Parse(req)
}

// TestSamples posts every file in events/events/ the way SampleHeaders signs
// it and compares the event; a file without an expectation fails.
func TestSamples(t *testing.T) {
	r := newReceiver(t)
	tg := func(chat string) message.Thread {
		return message.Thread{Platform: message.Telegram, Account: testBotID, Chat: chat}
	}
	want := map[string]struct {
		id, source, text string
		thread           message.Thread
		data             func(map[string]any) bool
		ignored          string
	}{
		"alert.json": {id: "msg_alert_0001", source: "alertmanager", thread: tg("-1001000000001"),
			text: "FIRING: DiskAlmostFull on db-1: /var/lib/postgres is 92% full and grew 4% in the last hour.",
			data: func(d map[string]any) bool {
				return d["alertname"] == "DiskAlmostFull" && d["value"] == json.Number("0.92")
			}},
		"cron-tick.json": {id: "msg_cron_daily_briefing_2025-11-29", source: "cron", thread: tg("42"),
			text: "Daily briefing: summarize today's calendar and anything urgent in my inbox.",
			data: func(d map[string]any) bool { return d["job"] == "daily-briefing" }},
		"deploy-slack.json": {id: "msg_deploy_0042", source: "ci",
			thread: message.Thread{Platform: message.Slack, Account: testTeam, Chat: "C0CHAN0001", Thread: "1764432060.000200"},
			text:   "Deploy #42 of parley to production failed at the smoke test step.",
			data:   func(d map[string]any) bool { return d["run"] == json.Number("42") }},
		"github-push.json": {source: SourceGitHub, thread: testGitHubTarget,
			text: "GitHub push in parleyhq/hello: 1 commit(s) to refs/heads/main",
			data: func(d map[string]any) bool {
				p, _ := d["payload"].(map[string]any)
				return d["github_event"] == "push" && p["after"] == "9fceb02d0ae598e95dc970b74767f19372d61af8"
			}},
		"github-issues-opened.json": {source: SourceGitHub, thread: testGitHubTarget,
			text: "GitHub issues opened in parleyhq/hello: #12 Crash on start when PARLEY_TRIAGE is empty",
			data: func(d map[string]any) bool { return d["github_event"] == "issues" }},
		"github-ping.json": {ignored: reasonPing},
	}
	files, _ := filepath.Glob(filepath.Join(samplesDir, "*.json"))
	if len(files) < len(want) {
		t.Fatalf("found %d samples, want at least %d", len(files), len(want))
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %s: add one", name)
			}
			body := sample(t, name)
			h, err := SampleHeaders(name, body, secret(t, testSecret), secret(t, testGitHubSecret), sampleTime)
			if err != nil {
				t.Fatal(err)
			}
			p, err := parse(t, r, &platform.Request{Method: http.MethodPost, Header: h, Query: url.Values{}, Body: body, Now: sampleTime})
			if err != nil {
				t.Fatal(err)
			}
			if w.ignored != "" {
				if len(p.Events) != 0 || len(p.Ignored) != 1 || p.Ignored[0].Reason != w.ignored || p.Ignored[0].ID == "" {
					t.Fatalf("parsed %+v, want ignored %s", p, w.ignored)
				}
				return
			}
			if len(p.Events) != 1 || len(p.Ignored) != 0 || p.Reply != nil {
				t.Fatalf("parsed %+v, want one event", p)
			}
			ev := p.Events[0]
			id := w.id
			if id == "" {
				// A GitHub delivery's id is its signed body's hash.
				sum := sha256.Sum256(body)
				id = hex.EncodeToString(sum[:16])
			}
			if ev.Platform != message.Events || ev.Kind != message.KindProactive || !ev.Proactive() || ev.EventID != id ||
				ev.Account != w.source || ev.Thread != w.thread || ev.Text != w.text || !w.data(ev.Data) || ev.Time.IsZero() {
				t.Fatalf("event = %+v", ev)
			}
			if ev.Key() != "evt#events#"+w.source+"#"+id {
				t.Fatalf("event key = %s", ev.Key())
			}
			// The event survives the trip through inbound.fifo.
			b, err := intent.EncodeInbound(intent.Inbound{Event: ev})
			if err != nil {
				t.Fatal(err)
			}
			in, err := intent.DecodeInbound(b)
			if err != nil || in.Event.EventID != ev.EventID || in.Event.Thread != ev.Thread || !reflect.DeepEqual(in.Event.Data["job"], ev.Data["job"]) {
				t.Fatalf("round trip = %+v, %v", in.Event, err)
			}
		})
	}
}

func TestVerifyRefuses(t *testing.T) {
	r := newReceiver(t)
	body := sample(t, "alert.json")
	stale := signed(t, "msg_alert_0001", sampleTime.Add(-6*time.Minute), body)
	future := signed(t, "msg_alert_0001", sampleTime.Add(6*time.Minute), body)
	wrong := &platform.Request{Method: http.MethodPost, Header: SignRequest(secret(t, "whsec_d3Jvbmc="), "msg_alert_0001", sampleTime, body), Body: body, Now: sampleTime}
	tampered := signed(t, "msg_alert_0001", sampleTime, body)
	tampered.Body = []byte(strings.Replace(string(body), "92%", "12%", 1))
	otherID := signed(t, "msg_alert_0001", sampleTime, body)
	otherID.Header.Set(standardwebhooks.HeaderID, "msg_alert_0002")
	unsigned := &platform.Request{Method: http.MethodPost, Header: http.Header{}, Body: body, Now: sampleTime}
	badTS := signed(t, "msg_alert_0001", sampleTime, body)
	badTS.Header.Set(standardwebhooks.HeaderTimestamp, "1764432240.5")
	noSig := signed(t, "msg_alert_0001", sampleTime, body)
	noSig.Header.Del(standardwebhooks.HeaderSignature)

	gh := func(mut func(h http.Header)) *platform.Request {
		b := sample(t, "github-push.json")
		h := SignGitHub(secret(t, testGitHubSecret), "d1f4e3a0-0000-4000-8000-000000000001", "push", b)
		mut(h)
		return &platform.Request{Method: http.MethodPost, Header: h, Body: b, Now: sampleTime}
	}
	for name, c := range map[string]struct {
		req  *platform.Request
		want error
	}{
		"stale":                {stale, platform.ErrStale},
		"future":               {future, platform.ErrStale},
		"wrong secret":         {wrong, platform.ErrUnauthorized},
		"tampered body":        {tampered, platform.ErrUnauthorized},
		"id not signed":        {otherID, platform.ErrUnauthorized},
		"no signature at all":  {unsigned, platform.ErrUnauthorized},
		"bad timestamp":        {badTS, platform.ErrMalformed},
		"no webhook-signature": {noSig, platform.ErrUnauthorized},
		"github wrong secret": {gh(func(h http.Header) {
			h.Set(HeaderGitHubSignature, SignGitHub(secret(t, "a-wrong-secret-of-24-bytes-or-more"), "x", "push", []byte("{}")).Get(HeaderGitHubSignature))
		}), platform.ErrUnauthorized},
		"github sha1 only":   {gh(func(h http.Header) { h.Set(HeaderGitHubSignature, "sha1=0123") }), platform.ErrUnauthorized},
		"github not hex":     {gh(func(h http.Header) { h.Set(HeaderGitHubSignature, "sha256="+strings.Repeat("z", 64)) }), platform.ErrUnauthorized},
		"github two headers": {gh(func(h http.Header) { h.Add(HeaderGitHubSignature, h.Get(HeaderGitHubSignature)) }), platform.ErrUnauthorized},
	} {
		t.Run(name, func(t *testing.T) {
			err := r.Verify(c.req)
			if !errors.Is(err, c.want) {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
			if platform.StatusOf(err)/100 != 4 {
				t.Fatalf("status %d, want 4xx", platform.StatusOf(err))
			}
			for _, s := range []string{testSecret, testGitHubSecret, "92%"} {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("error %q leaks %q", err, s)
				}
			}
		})
	}

	// Rotation: the previous secret still verifies; a receiver without a
	// scheme's secret refuses that scheme.
	old := &platform.Request{Method: http.MethodPost, Header: SignRequest(secret(t, testOldSecret), "msg_alert_0001", sampleTime, body), Body: body, Now: sampleTime}
	if err := r.Verify(old); err != nil {
		t.Fatalf("signed with the previous secret: %v", err)
	}
	onlyGH := receiverFor(t, "", "", testGitHubSecret, testGitHubTarget.Key())
	if err := onlyGH.Verify(signed(t, "msg_alert_0001", sampleTime, body)); !errors.Is(err, platform.ErrUnauthorized) {
		t.Fatalf("no Standard Webhooks source: %v", err)
	}
	onlySW := receiverFor(t, testSources, testSecrets, "", "")
	if err := onlySW.Verify(gh(func(http.Header) {})); !errors.Is(err, platform.ErrUnauthorized) {
		t.Fatalf("no GitHub source: %v", err)
	}
	none := &Receiver{Canonical: testCanonical}
	if err := none.Verify(signed(t, "msg_alert_0001", sampleTime, body)); !errors.Is(err, platform.ErrUnauthorized) {
		t.Fatalf("no source at all: %v", err)
	}
	// The old secret is alertmanager's alone.
	cron := []byte(`{"source":"cron","text":"x","target":{"platform":"telegram","account":"7000000001","chat":"42"}}`)
	oldCron := &platform.Request{Method: http.MethodPost, Header: SignRequest(secret(t, testOldSecret), "msg_c", sampleTime, cron), Body: cron, Now: sampleTime}
	if _, err := parse(t, r, oldCron); !errors.Is(err, platform.ErrForbidden) {
		t.Fatalf("alertmanager's secret claiming to be cron: %v, want 403", err)
	}
}

func TestParseRefuses(t *testing.T) {
	r := newReceiver(t)
	target := `"source":"cron","target":{"platform":"telegram","account":"7000000001","chat":"42"}`
	for name, c := range map[string]struct {
		body string
		want error
	}{
		"not json":           {`nope`, platform.ErrMalformed},
		"array":              {`[]`, platform.ErrMalformed},
		"null":               {`null`, platform.ErrMalformed},
		"empty":              {``, platform.ErrMalformed},
		"truncated":          {`{"text":"x",` + target, platform.ErrMalformed},
		"trailing data":      {`{"text":"x",` + target + `} {}`, platform.ErrMalformed},
		"unknown field":      {`{"text":"x","txt":"y",` + target + `}`, platform.ErrMalformed},
		"unknown target key": {`{"text":"x","source":"cron","target":{"platform":"telegram","account":"7000000001","chat":"42","topic":"1"}}`, platform.ErrMalformed},
		"wrong type":         {`{"text":5,` + target + `}`, platform.ErrMalformed},
		"id differs":         {`{"id":"other","text":"x",` + target + `}`, platform.ErrMalformed},
		"source not its own": {`{"source":"Alert Manager","text":"x","target":{"platform":"telegram","account":"7000000001","chat":"42"}}`, platform.ErrForbidden},
		"github source":      {`{"source":"github","text":"x","target":{"platform":"telegram","account":"7000000001","chat":"42"}}`, platform.ErrForbidden},
		"no source, shared":  {`{"text":"x","target":{"platform":"telegram","account":"7000000001","chat":"42"}}`, platform.ErrMalformed},
		"no target":          {`{"text":"x","source":"cron"}`, platform.ErrMalformed},
		"null target":        {`{"text":"x","source":"cron","target":null}`, platform.ErrMalformed},
		"target not object":  {`{"text":"x","source":"cron","target":"telegram:1:2"}`, platform.ErrMalformed},
		"no chat":            {`{"text":"x","source":"cron","target":{"platform":"telegram","account":"7000000001"}}`, platform.ErrMalformed},
		"colon in chat":      {`{"text":"x","source":"cron","target":{"platform":"telegram","account":"7000000001","chat":"4:2"}}`, platform.ErrMalformed},
		"space in thread":    {`{"text":"x","source":"cron","target":{"platform":"telegram","account":"7000000001","chat":"42","thread":"7 "}}`, platform.ErrMalformed},
		"username chat":      {`{"text":"x","source":"cron","target":{"platform":"telegram","account":"7000000001","chat":"@ada"}}`, platform.ErrMalformed},
		// Finding 9.2: a source reaches only its configured targets.
		"unknown platform": {`{"text":"x","source":"cron","target":{"platform":"discord","account":"1","chat":"2"}}`, platform.ErrForbidden},
		"events platform":  {`{"text":"x","source":"cron","target":{"platform":"events","account":"1","chat":"2"}}`, platform.ErrForbidden},
		"another bot":      {`{"text":"x","source":"cron","target":{"platform":"telegram","account":"123","chat":"42"}}`, platform.ErrForbidden},
		"another chat":     {`{"text":"x","source":"cron","target":{"platform":"telegram","account":"7000000001","chat":"-1001000000001"}}`, platform.ErrForbidden},
		"a thread of it":   {`{"text":"x","source":"cron","target":{"platform":"telegram","account":"7000000001","chat":"42","thread":"5"}}`, platform.ErrForbidden},
		"another team":     {`{"text":"x","source":"ci","target":{"platform":"slack","account":"T0OTHER001","chat":"C0CHAN0001"}}`, platform.ErrMalformed},
		"no content":       {`{"text":"  ",` + target + `}`, platform.ErrMalformed},
		"data not object":  {`{"data":[1],` + target + `}`, platform.ErrMalformed},
		"text too long":    {`{"text":"` + strings.Repeat("a", MaxTextLen+1) + `",` + target + `}`, platform.ErrMalformed},
		"data too large":   {`{"data":{"x":"` + strings.Repeat("a", MaxDataLen) + `"},` + target + `}`, platform.ErrMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parse(t, r, signed(t, "msg_1", sampleTime, []byte(c.body)))
			if !errors.Is(err, c.want) {
				t.Fatalf("Parse = %v, want %v", err, c.want)
			}
		})
	}
	// Data alone is content enough; a body id equal to webhook-id is fine.
	p, err := parse(t, r, signed(t, "msg_1", sampleTime, []byte(`{"id":"msg_1","data":{"n":1},`+target+`}`)))
	if err != nil || p.Events[0].Account != "cron" || p.Events[0].Text != "" {
		t.Fatalf("data-only payload = %+v, %v", p, err)
	}
	// Cosmetic variations of a target are the conversation as the platform
	// knows it (finding 9.2): one key, one triage policy and counters.
	for _, tgt := range []string{
		`{"platform":"slack","account":"t0team0001","chat":"c0chan0001","thread":"1764432060.0002"}`,
		`{"platform":"slack","account":"T0TEAM0001","chat":"C0CHAN0001","thread":"1764432060.000200"}`,
	} {
		p, err := parse(t, r, signed(t, "msg_v", sampleTime, []byte(`{"source":"ci","text":"x","target":`+tgt+`}`)))
		want := message.Thread{Platform: message.Slack, Account: testTeam, Chat: "C0CHAN0001", Thread: "1764432060.000200"}
		if err != nil || p.Events[0].Thread != want {
			t.Fatalf("target %s = %+v, %v; want %+v", tgt, p, err, want)
		}
	}
	if p, err := parse(t, r, signed(t, "msg_z", sampleTime, []byte(`{"source":"alertmanager","text":"x","target":{"platform":"telegram","account":"07000000001","chat":"-01001000000001","thread":"+77"}}`))); err != nil ||
		p.Events[0].Thread != (message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "-1001000000001", Thread: "77"}) {
		t.Fatalf("telegram variations = %+v, %v", p, err)
	}
	// Invalid UTF-8 in a JSON string is replaced, as encoding/json does:
	// the agent always gets valid text.
	p, err = parse(t, r, signed(t, "msg_2", sampleTime, []byte("{\"text\":\"a\xffb\","+target+"}")))
	if err != nil || p.Events[0].Text != "a\uFFFDb" {
		t.Fatalf("invalid UTF-8 = %+v, %v", p, err)
	}
	long := strings.Repeat("i", MaxIDLen+1)
	if _, err := parse(t, r, signed(t, long, sampleTime, []byte(`{"text":"x",`+target+`}`))); !errors.Is(err, platform.ErrMalformed) {
		t.Fatalf("over-long webhook-id: %v", err)
	}
}

// TestGitHubDeliveries (finding 9.1): GitHub signs only the body, so the
// delivery id, the event name and the URL are the sender's to choose. A
// captured delivery re-posted under a new X-GitHub-Delivery is the same event,
// and no ?target= chooses where it goes: its source's configured target does.
func TestGitHubDeliveries(t *testing.T) {
	r := newReceiver(t)
	body := sample(t, "github-issues-opened.json")
	req := func(query string, mut func(http.Header)) *platform.Request {
		h := SignGitHub(secret(t, testGitHubSecret), "d1f4e3a0-0000-4000-8000-000000000002", "issues", body)
		if mut != nil {
			mut(h)
		}
		q, _ := url.ParseQuery(query)
		return &platform.Request{Method: http.MethodPost, Header: h, Query: q, Body: body, Now: sampleTime}
	}
	p, err := parse(t, r, req("", nil))
	if err != nil || p.Events[0].Thread != testGitHubTarget || p.Events[0].Sender.Name != "grace" || p.Events[0].Account != SourceGitHub {
		t.Fatalf("delivery = %+v, %v", p, err)
	}
	replay, err := parse(t, r, req("", func(h http.Header) { h.Set(HeaderGitHubDelivery, "ffffffff-ffff-4fff-8fff-ffffffffffff") }))
	if err != nil || replay.Events[0].Key() != p.Events[0].Key() {
		t.Fatalf("a replay under a new delivery id = %+v, %v; want the same event key %s", replay, err, p.Events[0].Key())
	}
	for name, c := range map[string]struct {
		req  *platform.Request
		want error
	}{
		"a target in the URL": {req("target=slack:T0TEAM0001:C0CHAN0001", nil), platform.ErrMalformed},
		"an empty target":     {req("target=", nil), platform.ErrMalformed},
		"no event":            {req("", func(h http.Header) { h.Del(HeaderGitHubEvent) }), platform.ErrMalformed},
		"odd event":           {req("", func(h http.Header) { h.Set(HeaderGitHubEvent, "Push Event") }), platform.ErrMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parse(t, r, c.req); !errors.Is(err, c.want) {
				t.Fatalf("Parse = %v, want %v", err, c.want)
			}
		})
	}
	form := []byte("payload=%7B%7D")
	h := SignGitHub(secret(t, testGitHubSecret), "d1", "push", form)
	if _, err := parse(t, r, &platform.Request{Method: http.MethodPost, Header: h, Body: form, Now: sampleTime}); !errors.Is(err, platform.ErrMalformed) {
		t.Fatalf("form-encoded delivery: %v", err)
	}
}

// TestSourcesConfiguration: what a deployment may configure, and every
// problem reported at once, naming the variable or source and never a secret.
func TestSourcesConfiguration(t *testing.T) {
	good := `{"a":{"targets":["telegram:7000000001:42"]}}`
	cases := []struct {
		name                                 string
		sources, secrets, ghSecret, ghTarget string
		want                                 []string
	}{
		// Finding 9.9: a comma-separated list split secrets holding a comma.
		{"OldListForm", good, "whsec_a, whsec_b", "", "", []string{"PARLEY_EVENTS_SECRETS", "JSON object"}},
		{"ShortSecret", good, `{"a":"too-short"}`, "", "", []string{`source "a": secret 1 is 9 bytes; at least 24`}},
		{"ShortGitHubSecret", "", "", "gh", testGitHubTarget.Key(), []string{`source "github": secret 1 is 2 bytes`}},
		{"NoSecret", good, "", "", "", []string{`source "a" has no secret`}},
		{"UndeclaredSecret", good, `{"a":"` + testOldSecret + `","b":"` + testOldSecret + `"}`, "", "", []string{`names the source "b"`}},
		{"NoTargets", `{"a":{"targets":[]}}`, `{"a":"` + testOldSecret + `"}`, "", "", []string{`source "a" has no targets`}},
		{"UnknownField", `{"a":{"target":["telegram:1:2"]}}`, `{"a":"` + testOldSecret + `"}`, "", "", []string{"PARLEY_EVENTS_SOURCES"}},
		{"BadScheme", `{"a":{"scheme":"hmac","targets":["telegram:7000000001:42"]}}`, `{"a":"` + testOldSecret + `"}`, "", "", []string{`scheme "hmac"`}},
		{"BadName", `{"Alert Manager":{"targets":["telegram:7000000001:42"]}}`, `{"Alert Manager":"` + testOldSecret + `"}`, "", "", []string{"source name"}},
		{"AccountWildcard", `{"a":{"targets":["telegram:*:42"]}}`, `{"a":"` + testOldSecret + `"}`, "", "", []string{"never the account"}},
		{"InnerWildcard", `{"a":{"targets":["telegram:7000000001:*:5"]}}`, `{"a":"` + testOldSecret + `"}`, "", "", []string{"only the last part"}},
		{"NotAPlatform", `{"a":{"targets":["discord:1:2"]}}`, `{"a":"` + testOldSecret + `"}`, "", "", []string{`"discord" is not a chat platform`}},
		{"SlackElsewhere", `{"a":{"targets":["slack:T0OTHER001:C1:*"]}}`, `{"a":"` + testOldSecret + `"}`, "", "", []string{"SLACK_TEAM_ID"}},
		{"GitHubWithoutTarget", "", "", testGitHubSecret, "", []string{"PARLEY_GITHUB_TARGET is not"}},
		{"GitHubTargetWildcard", `{"gh":{"scheme":"github","targets":["telegram:7000000001:42:*"]}}`, `{"gh":"` + testOldSecret + `"}`, "", "", []string{"exactly one target"}},
		{"GitHubTwice", `{"github":{"scheme":"github","targets":["telegram:7000000001:42"]}}`, `{"github":"` + testOldSecret + `"}`, testGitHubSecret, "telegram:7000000001:42", []string{"declares too"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSources(tc.sources, tc.secrets, tc.ghSecret, tc.ghTarget, testCanonical)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("ParseSources = %v, want it to say %q", err, w)
				}
			}
			for _, secret := range []string{"whsec_a", "too-short", testOldSecret, testGitHubSecret} {
				if err != nil && strings.Contains(err.Error(), secret) {
					t.Fatalf("the error quotes a secret: %v", err)
				}
			}
		})
	}
	// Two GitHub sources cannot share a secret: a delivery would match both.
	src, err := ParseSources(`{"a":{"scheme":"github","targets":["telegram:7000000001:42"]},"b":{"scheme":"github","targets":["telegram:7000000001:43"]}}`,
		`{"a":"`+testOldSecret+`","b":"`+testOldSecret+`"}`, "", "", testCanonical)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Receiver{Sources: src}).Validate(); err == nil || !strings.Contains(err.Error(), "share a secret") {
		t.Fatalf("Validate = %v", err)
	}
	// No source at all is a valid, closed webhook.
	if src, err := ParseSources("", "", "", "", testCanonical); err != nil || len(src) != 0 {
		t.Fatalf("empty configuration = %v, %v", src, err)
	}
}

// TestOwnerNamesWhoMayAnswer: a payload's owner reaches the event, and a
// malformed one is refused.
func TestOwnerNamesWhoMayAnswer(t *testing.T) {
	t.Parallel()
	r := newReceiver(t)
	body := []byte(`{"source":"cron","text":"pick one","owner":"42","target":{"platform":"telegram","account":"7000000001","chat":"42"}}`)
	req := signed(t, "msg_owner_1", sampleTime, body)
	if err := r.Verify(req); err != nil {
		t.Fatal(err)
	}
	got, err := r.Parse(req)
	if err != nil || len(got.Events) != 1 || got.Events[0].Owner != "42" {
		t.Fatalf("Parse = %+v, %v", got, err)
	}
	bad := signed(t, "msg_owner_2", sampleTime, []byte(`{"source":"cron","text":"x","owner":"a b","target":{"platform":"telegram","account":"7000000001","chat":"42"}}`))
	if err := r.Verify(bad); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Parse(bad); !errors.Is(err, platform.ErrMalformed) {
		t.Fatalf("an owner with a space: %v", err)
	}
}
