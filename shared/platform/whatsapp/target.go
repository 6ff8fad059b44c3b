package whatsapp

import (
	"errors"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// maxWaID is the most digits a wa_id has: an E.164 number's 15.
const maxWaID = 15

// CanonicalTarget returns the function that puts a conversation named from
// outside (an events target, a configured pattern) in the form WhatsApp's
// webhooks name it by: the account is the business phone number id
// (phoneNumberID; a target of any other number is refused), the chat the
// person's wa_id, their phone number in international form as digits only.
// So "+1 555 123 0001", "+1-555-123-0001" and "15551230001" are one
// conversation with one triage policy and one set of counters. WhatsApp
// chats have no threads. chatless checks the account alone.
func CanonicalTarget(phoneNumberID string) func(t message.Thread, chatless bool) (message.Thread, error) {
	return func(t message.Thread, chatless bool) (message.Thread, error) {
		if phoneNumberID == "" {
			return message.Thread{}, errors.New("whatsapp: set WHATSAPP_PHONE_NUMBER_ID, the business phone number's id, to target WhatsApp")
		}
		if t.Account != phoneNumberID {
			return message.Thread{}, errors.New("whatsapp: the account must be the business phone number's id, WHATSAPP_PHONE_NUMBER_ID")
		}
		if chatless {
			return t, nil
		}
		chat, ok := waID(t.Chat)
		if !ok {
			return message.Thread{}, errors.New("whatsapp: the chat is the person's wa_id, their phone number in international form (digits, an optional + and separators)")
		}
		if t.Thread != "" {
			return message.Thread{}, errors.New("whatsapp: WhatsApp chats have no threads")
		}
		t.Chat = chat
		return t, nil
	}
}

// waID reads a phone number in international form: an optional leading
// "+", digits, and spaces, dashes, dots or parentheses between them. The
// wa_id is its digits, 1 to 15 of them, not starting with 0 (no country
// code does).
func waID(s string) (string, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "+")
	var b strings.Builder
	for i := range len(s) {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			b.WriteByte(c)
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')':
		default:
			return "", false
		}
	}
	id := b.String()
	if id == "" || len(id) > maxWaID || id[0] == '0' {
		return "", false
	}
	return id, true
}

var _ platform.PrivateChats = adapter{}

// Private: every WhatsApp Cloud API chat is one-to-one, with the person
// whose wa_id is the chat.
func (adapter) Private(t message.Thread) (string, bool) { return t.Chat, t.Chat != "" }
