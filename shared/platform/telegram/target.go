package telegram

import (
	"errors"
	"strconv"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// CanonicalTarget puts a conversation named from outside (an events target,
// a configured pattern) in the form Telegram's updates name it by: the bot's
// numeric id, the chat's integer id, the forum topic's integer id, each
// without leading zeros or a plus sign. So "07000000001" and "7000000001",
// or "+42" and "42", are one conversation with one triage policy and one set
// of counters. A "@channelusername" chat is refused: the same chat would have
// two keys. chatless checks the account alone (a pattern's "telegram:<bot>:*").
func CanonicalTarget(t message.Thread, chatless bool) (message.Thread, error) {
	var err error
	if t.Account, err = canonicalInt(t.Account, false); err != nil {
		return message.Thread{}, errors.New("telegram: the account is the bot's numeric id (the bot token's prefix)")
	}
	if chatless {
		return t, nil
	}
	if t.Chat, err = canonicalInt(t.Chat, true); err != nil {
		return message.Thread{}, errors.New("telegram: the chat is the chat's integer id (a @username names it twice over)")
	}
	if t.Thread != "" {
		if t.Thread, err = canonicalInt(t.Thread, false); err != nil {
			return message.Thread{}, errors.New("telegram: the thread is a forum topic's integer message_thread_id")
		}
	}
	return t, nil
}

// canonicalInt formats s as the integer it is, refusing anything else (and
// negatives unless allowed: chat ids of groups are negative).
func canonicalInt(s string, negative bool) (string, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == 0 || (n < 0 && !negative) {
		return "", errors.New("not a non-zero integer")
	}
	return strconv.FormatInt(n, 10), nil
}

var _ platform.PrivateChats = adapter{}

// Private: a chat with a positive id is a private chat with the user of
// that id; groups, supergroups and channels have negative ids.
func (adapter) Private(t message.Thread) (string, bool) {
	if n, err := strconv.ParseInt(t.Chat, 10, 64); err != nil || n <= 0 {
		return "", false
	}
	return t.Chat, true
}
