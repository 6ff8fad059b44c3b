package line

import (
	"errors"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// CanonicalTarget returns the function that puts a conversation named from
// outside (an events target, a configured pattern) in the form LINE's
// webhooks name it by: the account is the bot's user id (bot, the
// LINE_BOT_USER_ID; a target of any other bot is refused), the chat a user
// (U…), group (C…) or room (R…) id of 32 lower-case hex digits after its
// upper-case prefix, and no thread: LINE chats have none. So
// "uada0…42" and "Uada0…42" are one conversation with one triage policy and
// one set of counters. chatless checks the account alone.
func CanonicalTarget(bot string) func(t message.Thread, chatless bool) (message.Thread, error) {
	return func(t message.Thread, chatless bool) (message.Thread, error) {
		if bot == "" {
			return message.Thread{}, errors.New("line: set LINE_BOT_USER_ID, the bot's user id (the destination of its webhooks), to target LINE")
		}
		account, ok := canonicalID(t.Account, "U")
		if !ok || account != bot {
			return message.Thread{}, errors.New("line: the account must be the bot's user id, LINE_BOT_USER_ID")
		}
		t.Account = account
		if chatless {
			return t, nil
		}
		chat, ok := canonicalID(t.Chat, "UCR")
		if !ok {
			return message.Thread{}, errors.New("line: the chat is a user, group or room id (U, C or R and 32 hex digits)")
		}
		if t.Thread != "" {
			return message.Thread{}, errors.New("line: LINE chats have no threads")
		}
		t.Chat = chat
		return t, nil
	}
}

// canonicalID writes a LINE id (one of prefixes, then 32 hex digits) as
// LINE does: the prefix in upper case, the digits in lower case.
func canonicalID(s, prefixes string) (string, bool) {
	if len(s) != 33 {
		return "", false
	}
	p := strings.ToUpper(s[:1])
	if !strings.Contains(prefixes, p) {
		return "", false
	}
	digits := strings.ToLower(s[1:])
	for i := range len(digits) {
		if c := digits[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false
		}
	}
	return p + digits, true
}

// checkBotUserID refuses a LINE_BOT_USER_ID that is not a user id in LINE's
// form, the basic id ("@abc1234") being the usual mistake. Unset is allowed:
// nothing is scoped then.
func checkBotUserID(bot string) error {
	if bot == "" {
		return nil
	}
	if c, ok := canonicalID(bot, "U"); !ok || c != bot {
		return errors.New("line: LINE_BOT_USER_ID must be the bot's user id, U and 32 lower-case hex digits (not its @ basic id)")
	}
	return nil
}

// chatID reports whether s can name a chat in a thread key: 1–64 ASCII
// letters and digits. LINE's ids are U, C or R and 32 hex digits; the
// receiver takes any id of this safe alphabet, so that a change of format
// on LINE's side does not refuse every webhook.
func chatID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// userChat reports whether chat is a one-to-one chat: a user id.
func userChat(chat string) bool { return strings.HasPrefix(chat, "U") }

var _ platform.PrivateChats = adapter{}

// Private: a chat whose id is a user's (U…) is the one-to-one chat with that
// user; C… and R… are groups and rooms.
func (adapter) Private(t message.Thread) (string, bool) {
	if !strings.HasPrefix(t.Chat, "U") {
		return "", false
	}
	return t.Chat, true
}
