package discord

import (
	"errors"
	"strconv"

	"github.com/parleyhq/parley/shared/message"
)

// CanonicalTarget returns the function that puts a conversation named from
// outside (an events target, a configured pattern) in the form Discord's
// interactions name it by: the application (appID; a target of any other
// application is refused) and the channel, each as the decimal snowflake
// Discord writes, without leading zeros or a sign. A Discord thread is a
// channel of its own: it is named as the chat, never as a thread. chatless
// checks the account alone.
func CanonicalTarget(appID string) func(t message.Thread, chatless bool) (message.Thread, error) {
	return func(t message.Thread, chatless bool) (message.Thread, error) {
		app, ok := canonicalSnowflake(appID)
		if !ok {
			return message.Thread{}, errors.New("discord: set DISCORD_APPLICATION_ID, the application's id, to target Discord")
		}
		if acct, ok := canonicalSnowflake(t.Account); !ok || acct != app {
			return message.Thread{}, errors.New("discord: the account must be the application, DISCORD_APPLICATION_ID")
		}
		t.Account = app
		if chatless {
			return t, nil
		}
		chat, ok := canonicalSnowflake(t.Chat)
		if !ok {
			return message.Thread{}, errors.New("discord: the chat is a channel id, a number")
		}
		if t.Thread != "" {
			return message.Thread{}, errors.New("discord: a thread is a channel: name its id as the chat")
		}
		t.Chat = chat
		return t, nil
	}
}

// canonicalSnowflake writes s as the snowflake it is: a decimal uint64 other
// than 0, without leading zeros or a sign.
func canonicalSnowflake(s string) (string, bool) {
	if s == "" || s[0] == '+' || s[0] == '-' {
		return "", false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return "", false
	}
	return strconv.FormatUint(n, 10), true
}

// snowflake reports whether s is a snowflake as Discord writes it.
func snowflake(s string) bool {
	c, ok := canonicalSnowflake(s)
	return ok && c == s
}
