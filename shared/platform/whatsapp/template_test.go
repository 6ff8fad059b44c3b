package whatsapp

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// TestOutsideTheWindow: a bubble whose window closed goes as the
// configured template, its text on one line in the body's parameter, or
// fails window_closed without a call when none is configured; an open
// window, or none known, sends free-form.
func TestOutsideTheWindow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	closed := &message.ReplyContext{Token: message.WindowToken, Until: now.Add(-time.Hour)}
	closing := &message.ReplyContext{Token: message.WindowToken, Until: now.Add(30 * time.Second)}
	open := &message.ReplyContext{Token: message.WindowToken, Until: now.Add(time.Hour)}
	tpl, err := ParseTemplate(`{"name":"parley_update","language":"en_US","body":["{text}"]}`)
	if err != nil {
		t.Fatal(err)
	}
	setup := func(tpl *Template) (*Client, *fakeapi.Recorder) {
		rec := fakeapi.New(fakeapi.Options{})
		srv := httptest.NewServer(fakewhatsapp.New(fakewhatsapp.Options{Token: testToken, PhoneNumberID: testPhone, Recorder: rec}))
		t.Cleanup(srv.Close)
		return &Client{Token: testToken, PhoneNumberID: testPhone, BaseURL: srv.URL, WindowTemplate: tpl, Now: func() time.Time { return now }}, rec
	}
	out := func(rc *message.ReplyContext) message.Outgoing {
		return message.Outgoing{Thread: chat(ada), Content: message.Text("your flight\nmoved to *8pm*"), ReplyContext: rc, ReplyTo: "wamid.Q"}
	}

	t.Run("ClosedWithoutTemplateFailsWithoutACall", func(t *testing.T) {
		c, rec := setup(nil)
		for _, rc := range []*message.ReplyContext{closed, closing, {Token: message.WindowToken}} {
			_, err := c.Send(t.Context(), out(rc))
			var se *message.SendError
			if !errorsAs(err, &se) || se.Class != message.FailPermission || !strings.HasPrefix(se.Reason, ReasonWindowClosed) {
				t.Fatalf("Send = %v, want permission: window_closed", err)
			}
		}
		if rec.Calls() != 0 {
			t.Fatalf("%d calls", rec.Calls())
		}
	})
	t.Run("ClosedGoesAsTheTemplate", func(t *testing.T) {
		c, rec := setup(tpl)
		if _, err := c.Send(t.Context(), out(closed)); err != nil {
			t.Fatal(err)
		}
		d := rec.Delivered()[0]
		var got WhatsAppTemplate
		if string(d.Args["type"]) != `"template"` || json.Unmarshal(d.Args["template"], &got) != nil {
			t.Fatalf("sent %s", d.Args)
		}
		want := WhatsAppTemplate{Name: "parley_update", Language: WhatsAppTemplateLanguage{Code: "en_US"}, Components: []WhatsAppTemplateComponent{{
			Type: "body", Parameters: []WhatsAppTemplateParameter{{Type: "text", Text: "your flight moved to ∗8pm∗"}},
		}}}
		if raw, _ := json.Marshal(got); string(raw) != string(mustJSON(want)) {
			t.Fatalf("template %s, want %s", raw, mustJSON(want))
		}
		if _, quoted := d.Args["context"]; quoted {
			t.Fatal("a template quotes a message")
		}
		// A question outside the window: its text form, as the template.
		q := out(closed)
		q.Content = message.Content{Prompt: &message.Prompt{Text: "Which seat?", Options: []message.Choice{{Label: "Aisle", Data: "q0:0"}}}}
		if _, err := c.Send(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		if d := rec.Delivered()[1]; !strings.Contains(d.Text, "Which seat? 1. Aisle") {
			t.Fatalf("question as template: %q", d.Text)
		}
	})
	t.Run("OpenOrUnknownIsFreeForm", func(t *testing.T) {
		c, rec := setup(tpl)
		for _, rc := range []*message.ReplyContext{open, nil} {
			if _, err := c.Send(t.Context(), out(rc)); err != nil {
				t.Fatal(err)
			}
		}
		for _, d := range rec.Delivered() {
			if string(d.Args["type"]) != `"text"` {
				t.Fatalf("sent %s", d.Args["type"])
			}
		}
	})
	t.Run("TheFakeEnforcesTheWindow", func(t *testing.T) {
		rec := fakeapi.New(fakeapi.Options{})
		api := fakewhatsapp.New(fakewhatsapp.Options{Token: testToken, PhoneNumberID: testPhone, Recorder: rec})
		srv := httptest.NewServer(api)
		defer srv.Close()
		api.Wrote(ada, time.Now().Add(-25*time.Hour))
		c := &Client{Token: testToken, PhoneNumberID: testPhone, BaseURL: srv.URL}
		_, err := c.Send(t.Context(), out(nil))
		var se *message.SendError
		if !errorsAs(err, &se) || se.Class != message.FailPermission || !strings.Contains(se.Reason, "24-hour") {
			t.Fatalf("free-form 25 hours on: %v", err)
		}
		c.WindowTemplate = tpl
		if _, err := c.Send(t.Context(), out(&message.ReplyContext{Token: message.WindowToken, Until: time.Now().Add(-time.Hour)})); err != nil {
			t.Fatalf("a template 25 hours on: %v", err)
		}
	})
}

func TestParseTemplate(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{`{"name":"Parley Update","language":"en_US"}`, `{"name":"x"}`, `{"name":"x","language":"en","body":[""]}`, `{"name":"x","language":"en","extra":1}`, `[`} {
		if _, err := ParseTemplate(bad); err == nil {
			t.Errorf("ParseTemplate(%s) took it", bad)
		}
	}
	if tpl, err := ParseTemplate(""); tpl != nil || err != nil {
		t.Fatalf("unset: %v, %v", tpl, err)
	}
	long := strings.Repeat("é", 2000)
	if p := (&Template{Name: "x", Language: "en", Body: []string{"{text}"}}).message(long).Components[0].Parameters[0].Text; units(p) > MaxParam {
		t.Fatalf("a parameter of %d units", units(p))
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func errorsAs(err error, target **message.SendError) bool { return errors.As(err, target) }

// TestTemplateNames: a template's name is 1 to 512 of a–z, 0–9 and '_'.
func TestTemplateNames(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"parley_update": true, "a": true, "x9_": true, strings.Repeat("a", 512): true,
		"": false, strings.Repeat("a", 513): false, "Parley": false, "a-b": false, "a b": false, "é": false,
	} {
		_, err := ParseTemplate(`{"name":` + strconv.Quote(name) + `,"language":"en_US"}`)
		if (err == nil) != ok {
			t.Errorf("name %q: %v, want taken %v", name, err, ok)
		}
	}
}

// TestMediaOutsideTheWindowIsDeclined: a file whose window closed is
// platform.ErrNotNative without a call (delivery sends it as a link, which
// Send turns into the template); an open window sends it natively.
func TestMediaOutsideTheWindowIsDeclined(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	rec := fakeapi.New(fakeapi.Options{})
	srv := httptest.NewServer(fakewhatsapp.New(fakewhatsapp.Options{Token: testToken, PhoneNumberID: testPhone, Recorder: rec}))
	t.Cleanup(srv.Close)
	c := &Client{Token: testToken, PhoneNumberID: testPhone, BaseURL: srv.URL, Now: func() time.Time { return now }}
	f := platform.MediaFile{Kind: message.MediaImage, URL: "https://cdn.example/a.png", Caption: "the map"}
	out := func(until time.Time) message.Outgoing {
		return message.Outgoing{Thread: chat(ada), ReplyContext: &message.ReplyContext{Token: message.WindowToken, Until: until}}
	}
	if _, err := c.SendMedia(t.Context(), out(now.Add(-time.Hour)), f); !errors.Is(err, platform.ErrNotNative) {
		t.Fatalf("SendMedia outside the window = %v, want ErrNotNative", err)
	}
	if rec.Calls() != 0 {
		t.Fatalf("%d calls for a declined file", rec.Calls())
	}
	rc, err := c.SendMedia(t.Context(), out(now.Add(time.Hour)), f)
	if err != nil || len(rc.MessageIDs) != 1 {
		t.Fatalf("SendMedia inside the window = %+v, %v", rc, err)
	}
	if d := rec.Delivered(); len(d) != 1 || string(d[0].Args["type"]) != `"image"` {
		t.Fatalf("delivered %+v, want one image", d)
	}
}
