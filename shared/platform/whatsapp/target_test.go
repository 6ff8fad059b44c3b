package whatsapp

import (
	"testing"

	"github.com/parleyhq/parley/shared/message"
)

func TestCanonicalTarget(t *testing.T) {
	t.Parallel()
	canon := CanonicalTarget(testPhone)
	th := func(account, chat, thread string) message.Thread {
		return message.Thread{Platform: message.WhatsApp, Account: account, Chat: chat, Thread: thread}
	}
	for _, in := range []string{"15551230001", "+15551230001", "+1 555 123 0001", "+1-555-123-0001", "+1 (555) 123.0001", " +15551230001 "} {
		got, err := canon(th(testPhone, in, ""), false)
		if err != nil || got != chat(ada) {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, chat(ada))
		}
	}
	for name, bad := range map[string]message.Thread{
		"OtherNumber":     th(otherPhone, ada, ""),
		"Thread":          th(testPhone, ada, "1"),
		"NoChat":          th(testPhone, "", ""),
		"Letters":         th(testPhone, "ada", ""),
		"LeadingZero":     th(testPhone, "0015551230001", ""),
		"TooLong":         th(testPhone, "1234567890123456", ""),
		"PlusTwice":       th(testPhone, "++15551230001", ""),
		"GroupOrUsername": th(testPhone, "120363000000000001@g.us", ""),
	} {
		if got, err := canon(bad, false); err == nil {
			t.Errorf("%s: %+v accepted as %+v", name, bad, got)
		}
	}
	// A pattern checks the account alone.
	if _, err := canon(th(testPhone, "*", ""), true); err != nil {
		t.Errorf("chatless: %v", err)
	}
	if _, err := canon(th(otherPhone, "", ""), true); err == nil {
		t.Error("chatless accepted another number")
	}
	if _, err := CanonicalTarget("")(chat(ada), false); err == nil {
		t.Error("targets without WHATSAPP_PHONE_NUMBER_ID are accepted")
	}
}
