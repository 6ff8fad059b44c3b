package events

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/ingress"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/standardwebhooks"
)

func parse(t *testing.T, r *Receiver, req *ingress.Request) (ingress.Parsed, error) {
	t.Helper()
	if err := r.Verify(req); err != nil {
		return ingress.Parsed{}, err
	}
	return r.Parse(req)
}

// TestSamples posts every file in events/events/ the way SampleHeaders signs
// it and compares the event; a file without an expectation fails.
func TestSamples(t *testing.T) {
	r := newReceiver(t)
	r.GitHubTarget = message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "-1001000000002", Thread: "77"}
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
		"github-push.json": {source: SourceGitHub, thread: r.GitHubTarget,
			text: "GitHub push in parleyhq/hello: 1 commit(s) to refs/heads/main",
			data: func(d map[string]any) bool {
				p, _ := d["payload"].(map[string]any)
				return d["github_event"] == "push" && p["after"] == "9fceb02d0ae598e95dc970b74767f19372d61af8"
			}},
		"github-issues-opened.json": {source: SourceGitHub, thread: r.GitHubTarget,
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
			h, err := SampleHeaders(name, body, secret(t, testSecret), testGitHubSecret, sampleTime)
			if err != nil {
				t.Fatal(err)
			}
			p, err := parse(t, r, &ingress.Request{Method: http.MethodPost, Header: h, Query: url.Values{}, Body: body, Now: sampleTime})
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
				id = h.Get(HeaderGitHubDelivery)
			}
			if ev.Platform != message.Events || ev.Kind != message.KindProactive || !ev.Proactive() || ev.EventID != id ||
				ev.Account != w.source || ev.Thread != w.thread || ev.Text != w.text || !w.data(ev.Data) || ev.Time.IsZero() {
				t.Fatalf("event = %+v", ev)
			}
			if ev.Key() != "evt#events#"+w.source+"#"+id {
				t.Fatalf("event key = %s", ev.Key())
			}
			// The event survives the trip through inbound.fifo.
			b, err := ingress.EncodeInbound(ingress.Inbound{Event: ev})
			if err != nil {
				t.Fatal(err)
			}
			in, err := ingress.DecodeInbound(b)
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
	wrong := &ingress.Request{Method: http.MethodPost, Header: SignRequest(secret(t, "whsec_d3Jvbmc="), "msg_alert_0001", sampleTime, body), Body: body, Now: sampleTime}
	tampered := signed(t, "msg_alert_0001", sampleTime, body)
	tampered.Body = []byte(strings.Replace(string(body), "92%", "12%", 1))
	otherID := signed(t, "msg_alert_0001", sampleTime, body)
	otherID.Header.Set(standardwebhooks.HeaderID, "msg_alert_0002")
	unsigned := &ingress.Request{Method: http.MethodPost, Header: http.Header{}, Body: body, Now: sampleTime}
	badTS := signed(t, "msg_alert_0001", sampleTime, body)
	badTS.Header.Set(standardwebhooks.HeaderTimestamp, "1764432240.5")
	noSig := signed(t, "msg_alert_0001", sampleTime, body)
	noSig.Header.Del(standardwebhooks.HeaderSignature)

	gh := func(mut func(h http.Header)) *ingress.Request {
		b := sample(t, "github-push.json")
		h := SignGitHub(testGitHubSecret, "d1f4e3a0-0000-4000-8000-000000000001", "push", b)
		mut(h)
		return &ingress.Request{Method: http.MethodPost, Header: h, Body: b, Now: sampleTime}
	}
	for name, c := range map[string]struct {
		req  *ingress.Request
		want error
	}{
		"stale":                {stale, ingress.ErrStale},
		"future":               {future, ingress.ErrStale},
		"wrong secret":         {wrong, ingress.ErrUnauthorized},
		"tampered body":        {tampered, ingress.ErrUnauthorized},
		"id not signed":        {otherID, ingress.ErrUnauthorized},
		"no signature at all":  {unsigned, ingress.ErrUnauthorized},
		"bad timestamp":        {badTS, ingress.ErrMalformed},
		"no webhook-signature": {noSig, ingress.ErrUnauthorized},
		"github wrong secret": {gh(func(h http.Header) {
			h.Set(HeaderGitHubSignature, SignGitHub("nope", "x", "push", []byte("{}")).Get(HeaderGitHubSignature))
		}), ingress.ErrUnauthorized},
		"github sha1 only":   {gh(func(h http.Header) { h.Set(HeaderGitHubSignature, "sha1=0123") }), ingress.ErrUnauthorized},
		"github not hex":     {gh(func(h http.Header) { h.Set(HeaderGitHubSignature, "sha256="+strings.Repeat("z", 64)) }), ingress.ErrUnauthorized},
		"github two headers": {gh(func(h http.Header) { h.Add(HeaderGitHubSignature, h.Get(HeaderGitHubSignature)) }), ingress.ErrUnauthorized},
	} {
		t.Run(name, func(t *testing.T) {
			err := r.Verify(c.req)
			if !errors.Is(err, c.want) {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
			if ingress.StatusOf(err)/100 != 4 {
				t.Fatalf("status %d, want 4xx", ingress.StatusOf(err))
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
	old := &ingress.Request{Method: http.MethodPost, Header: SignRequest(secret(t, testOldSecret), "msg_alert_0001", sampleTime, body), Body: body, Now: sampleTime}
	if err := r.Verify(old); err != nil {
		t.Fatalf("signed with the previous secret: %v", err)
	}
	onlyGH := &Receiver{GitHubSecret: testGitHubSecret, Targets: r.Targets}
	if err := onlyGH.Verify(signed(t, "msg_alert_0001", sampleTime, body)); !errors.Is(err, ingress.ErrUnauthorized) {
		t.Fatalf("no Standard Webhooks secret: %v", err)
	}
	onlySW := &Receiver{Secrets: r.Secrets, Targets: r.Targets}
	if err := onlySW.Verify(gh(func(http.Header) {})); !errors.Is(err, ingress.ErrUnauthorized) {
		t.Fatalf("no GitHub secret: %v", err)
	}
}

func TestParseRefuses(t *testing.T) {
	r := newReceiver(t)
	target := `"target":{"platform":"telegram","account":"7000000001","chat":"42"}`
	for name, c := range map[string]struct {
		body string
		want error
	}{
		"not json":           {`nope`, ingress.ErrMalformed},
		"array":              {`[]`, ingress.ErrMalformed},
		"null":               {`null`, ingress.ErrMalformed},
		"empty":              {``, ingress.ErrMalformed},
		"truncated":          {`{"text":"x",` + target, ingress.ErrMalformed},
		"trailing data":      {`{"text":"x",` + target + `} {}`, ingress.ErrMalformed},
		"unknown field":      {`{"text":"x","txt":"y",` + target + `}`, ingress.ErrMalformed},
		"unknown target key": {`{"text":"x","target":{"platform":"telegram","account":"7000000001","chat":"42","topic":"1"}}`, ingress.ErrMalformed},
		"wrong type":         {`{"text":5,` + target + `}`, ingress.ErrMalformed},
		"id differs":         {`{"id":"other","text":"x",` + target + `}`, ingress.ErrMalformed},
		"bad source":         {`{"source":"Alert Manager","text":"x",` + target + `}`, ingress.ErrMalformed},
		"reserved source":    {`{"source":"github","text":"x",` + target + `}`, ingress.ErrUnprocessable},
		"no target":          {`{"text":"x"}`, ingress.ErrMalformed},
		"null target":        {`{"text":"x","target":null}`, ingress.ErrMalformed},
		"target not object":  {`{"text":"x","target":"telegram:1:2"}`, ingress.ErrMalformed},
		"no chat":            {`{"text":"x","target":{"platform":"telegram","account":"7000000001"}}`, ingress.ErrMalformed},
		"colon in chat":      {`{"text":"x","target":{"platform":"telegram","account":"7000000001","chat":"4:2"}}`, ingress.ErrMalformed},
		"space in thread":    {`{"text":"x","target":{"platform":"telegram","account":"7000000001","chat":"42","thread":"7 "}}`, ingress.ErrMalformed},
		"unknown platform":   {`{"text":"x","target":{"platform":"discord","account":"1","chat":"2"}}`, ingress.ErrUnprocessable},
		"events platform":    {`{"text":"x","target":{"platform":"events","account":"1","chat":"2"}}`, ingress.ErrUnprocessable},
		"unknown account":    {`{"text":"x","target":{"platform":"telegram","account":"123","chat":"42"}}`, ingress.ErrUnprocessable},
		"no content":         {`{"text":"  ",` + target + `}`, ingress.ErrMalformed},
		"data not object":    {`{"data":[1],` + target + `}`, ingress.ErrMalformed},
		"text too long":      {`{"text":"` + strings.Repeat("a", MaxTextLen+1) + `",` + target + `}`, ingress.ErrMalformed},
		"data too large":     {`{"data":{"x":"` + strings.Repeat("a", MaxDataLen) + `"},` + target + `}`, ingress.ErrMalformed},
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
	if err != nil || p.Events[0].Account != DefaultSource || p.Events[0].Text != "" {
		t.Fatalf("data-only payload = %+v, %v", p, err)
	}
	// Invalid UTF-8 in a JSON string is replaced, as encoding/json does:
	// the agent always gets valid text.
	p, err = parse(t, r, signed(t, "msg_2", sampleTime, []byte("{\"text\":\"a\xffb\","+target+"}")))
	if err != nil || p.Events[0].Text != "a\uFFFDb" {
		t.Fatalf("invalid UTF-8 = %+v, %v", p, err)
	}
	long := strings.Repeat("i", MaxIDLen+1)
	if _, err := parse(t, r, signed(t, long, sampleTime, []byte(`{"text":"x",`+target+`}`))); !errors.Is(err, ingress.ErrMalformed) {
		t.Fatalf("over-long webhook-id: %v", err)
	}
}

func TestGitHubTargets(t *testing.T) {
	r := newReceiver(t)
	body := sample(t, "github-issues-opened.json")
	req := func(query string, mut func(http.Header)) *ingress.Request {
		h := SignGitHub(testGitHubSecret, "d1f4e3a0-0000-4000-8000-000000000002", "issues", body)
		if mut != nil {
			mut(h)
		}
		q, _ := url.ParseQuery(query)
		return &ingress.Request{Method: http.MethodPost, Header: h, Query: q, Body: body, Now: sampleTime}
	}
	if _, err := parse(t, r, req("", nil)); !errors.Is(err, ingress.ErrUnprocessable) || !strings.Contains(err.Error(), "?target=") {
		t.Fatalf("no target anywhere: %v", err)
	}
	p, err := parse(t, r, req("target=slack:T0TEAM0001:C0CHAN0001", nil))
	if err != nil || p.Events[0].Thread != (message.Thread{Platform: message.Slack, Account: testTeam, Chat: "C0CHAN0001"}) || p.Events[0].Sender.Name != "grace" {
		t.Fatalf("?target= = %+v, %v", p, err)
	}
	r.GitHubTarget = message.Thread{Platform: message.Telegram, Account: testBotID, Chat: "42"}
	if p, err := parse(t, r, req("", nil)); err != nil || p.Events[0].Thread.Chat != "42" {
		t.Fatalf("default target = %+v, %v", p, err)
	}
	for name, c := range map[string]struct {
		req  *ingress.Request
		want error
	}{
		"bad target":       {req("target=telegram:7000000001", nil), ingress.ErrMalformed},
		"empty thread":     {req("target=telegram:7000000001:42:", nil), ingress.ErrMalformed},
		"unknown platform": {req("target=line:U1:C1", nil), ingress.ErrUnprocessable},
		"no delivery":      {req("", func(h http.Header) { h.Del(HeaderGitHubDelivery) }), ingress.ErrMalformed},
		"no event":         {req("", func(h http.Header) { h.Del(HeaderGitHubEvent) }), ingress.ErrMalformed},
		"odd event":        {req("", func(h http.Header) { h.Set(HeaderGitHubEvent, "Push Event") }), ingress.ErrMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parse(t, r, c.req); !errors.Is(err, c.want) {
				t.Fatalf("Parse = %v, want %v", err, c.want)
			}
		})
	}
	form := []byte("payload=%7B%7D")
	h := SignGitHub(testGitHubSecret, "d1", "push", form)
	if _, err := parse(t, r, &ingress.Request{Method: http.MethodPost, Header: h, Body: form, Now: sampleTime}); !errors.Is(err, ingress.ErrMalformed) {
		t.Fatalf("form-encoded delivery: %v", err)
	}
}

func TestValidate(t *testing.T) {
	err := (&Receiver{Secrets: []standardwebhooks.Secret{{}}, GitHubTarget: message.Thread{Platform: "x", Account: "a", Chat: "c"}}).Validate()
	for _, want := range []string{"secret 1 is empty", "no target platform", "GitHub target"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to mention %q", err, want)
		}
	}
	if err := (&Receiver{Targets: map[message.Platform][]string{message.Telegram: nil}}).Validate(); err == nil {
		t.Error("Validate accepted a receiver with no secret")
	}
}
