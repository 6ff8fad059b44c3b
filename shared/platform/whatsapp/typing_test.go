package whatsapp

import (
	"net/http"
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// TestTypingForRequest: the exact call the typing indicator makes, as
// Meta documents it: the person's message marked read, the indicator shown.
func TestTypingForRequest(t *testing.T) {
	t.Parallel()
	c, client := newCapture(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"success":true}`))
	})
	if err := client.TypingFor(t.Context(), chat(ada), idText); err != nil {
		t.Fatalf("TypingFor: %v", err)
	}
	want := `{"messaging_product":"whatsapp","status":"read","message_id":"` + idText + `","typing_indicator":{"type":"text"}}`
	if len(c.bodies) != 1 || c.bodies[0] != want || c.paths[0] != "/"+GraphVersion+"/"+testPhone+"/messages" || c.auths[0] != "Bearer "+testToken {
		t.Fatalf("calls %q %q: want one POST of %s", c.paths, c.bodies, want)
	}
	if life := client.TypingLife(chat(ada)); life != 25*time.Second {
		t.Fatalf("TypingLife %s, want WhatsApp's 25 s", life)
	}
}

// TestTypingForAgainstTheFake: the fake Cloud API takes the indicator for
// the message; a call with no message, or for another number, is refused
// without a call; Graph's errors are classified.
func TestTypingForAgainstTheFake(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	if err := f.client.TypingFor(t.Context(), chat(ada), idText); err != nil {
		t.Fatalf("TypingFor: %v", err)
	}
	acts := f.rec.Actions()
	if len(acts) != 1 || acts[0].Action != "typing" || acts[0].MessageID != idText || acts[0].Platform != message.WhatsApp {
		t.Fatalf("actions %+v: want the typing indicator for %s", acts, idText)
	}
	if len(f.rec.Delivered()) != 0 {
		t.Fatal("a typing indicator delivered a message")
	}
	other := chat(ada)
	other.Account = "106540352242999"
	for name, tc := range map[string]struct {
		thread message.Thread
		id     string
	}{"NoMessage": {chat(ada), ""}, "OtherNumber": {other, idText}} {
		if err := f.client.TypingFor(t.Context(), tc.thread, tc.id); message.ClassOf(err) != message.FailInvalidPayload {
			t.Errorf("%s: %v, want invalid_payload", name, err)
		}
	}
	if n := len(f.rec.Actions()); n != 1 {
		t.Fatalf("%d actions: the refused calls reached the API", n)
	}
}

// TestTypingForClassifiesGraphErrors: a refusal of Graph's (here its
// throughput limit) is classified as a send's would be.
func TestTypingForClassifiesGraphErrors(t *testing.T) {
	t.Parallel()
	_, client := newCapture(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"(#130429) Rate limit hit","type":"OAuthException","code":130429,"fbtrace_id":"A"}}`))
	})
	if err := client.TypingFor(t.Context(), chat(ada), idText); message.ClassOf(err) != message.FailRateLimit {
		t.Fatalf("TypingFor: %v, want rate_limit", err)
	}
}
