package runner_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/whatsapp"
)

// TestWhatsAppSendOutsideTheWindow: a /send 25 hours after the person's
// last message goes as the configured template, or fails window_closed
// with no call when none is configured; a /send within the window goes
// free-form. The fake refuses free-form messages outside the window, as
// WhatsApp does.
func TestWhatsAppSendOutsideTheWindow(t *testing.T) {
	t.Parallel()
	thread := "whatsapp:" + waPhone + ":" + waAda
	run := func(t *testing.T, template string) (*harness, []message.UnitState) {
		env := map[string]string{"PARLEY_SEND_TARGETS": `["whatsapp:` + waPhone + `:*"]`}
		if template != "" {
			env[whatsapp.SettingWindowTemplate] = template
		}
		h := start(t, options{env: env})
		api, _ := h.fake.For(message.WhatsApp)
		old := h.clock.Now().Add(-25 * time.Hour)
		api.(*fakewhatsapp.API).Wrote(waAda, old)
		// Ada's last message, 25 hours ago (Meta delivers it late, or
		// the agent answers it only now): its reply is outside the
		// window too.
		if code, body := h.postWhatsApp(waText("wamid.OLD1", waAda, "remind me tomorrow", old)); code != http.StatusOK {
			t.Fatalf("webhook: %d %s", code, body)
		}
		h.quiesce(30 * time.Second)
		if code, body := h.postSend("msg_win_1", sendBody(thread, "reminder-25h", "here is your reminder", nil)); code != http.StatusAccepted {
			t.Fatalf("/send: %d %s", code, body)
		}
		h.quiesce(30 * time.Second)
		in := h.intentFor("evt#parley#" + thread + "#reminder-25h")
		var states []message.UnitState
		for _, u := range in.Units {
			states = append(states, u.State)
			if u.State == message.UnitFailed && !strings.HasPrefix(u.FailureReason, whatsapp.ReasonWindowClosed) {
				t.Fatalf("unit failed %q, want window_closed", u.FailureReason)
			}
		}
		return h, states
	}

	t.Run("NoTemplate", func(t *testing.T) {
		t.Parallel()
		h, states := run(t, "")
		for _, st := range states {
			if st != message.UnitFailed {
				t.Fatalf("units %v, want failed", states)
			}
		}
		if n := h.fake.Calls(); n != 0 {
			t.Fatalf("%d calls to WhatsApp: a send outside the window is refused before any", n)
		}
	})
	t.Run("Template", func(t *testing.T) {
		t.Parallel()
		h, states := run(t, `{"name":"parley_update","language":"en_US","body":["{text}"]}`)
		for _, st := range states {
			if st != message.UnitSent {
				t.Fatalf("units %v, want sent", states)
			}
		}
		var sent []string
		for _, d := range h.fake.Delivered() {
			if string(d.Args["type"]) != `"template"` {
				t.Fatalf("sent a %s message outside the window: %s", d.Args["type"], d.Text)
			}
			sent = append(sent, d.Text)
		}
		if !strings.Contains(strings.Join(sent, "|"), "[template parley_update] here is your reminder") {
			t.Fatalf("delivered %q", sent)
		}
	})
	t.Run("WithinTheWindow", func(t *testing.T) {
		t.Parallel()
		h := start(t, options{env: map[string]string{"PARLEY_SEND_TARGETS": `["whatsapp:` + waPhone + `:*"]`}})
		if code, _ := h.postWhatsApp(waText("wamid.NEW1", waAda, "hi", h.clock.Now().Add(-2*time.Hour))); code != http.StatusOK {
			t.Fatal("webhook")
		}
		h.waitDelivered(2, 30*time.Second)
		if code, body := h.postSend("msg_win_2", sendBody(thread, "reminder-2h", "two hours on", nil)); code != http.StatusAccepted {
			t.Fatalf("/send: %d %s", code, body)
		}
		d := h.waitDelivered(3, 30*time.Second)
		if string(d[2].Args["type"]) != `"text"` || d[2].Text != "two hours on" {
			t.Fatalf("within the window: %s %q", d[2].Args["type"], d[2].Text)
		}
	})
}
