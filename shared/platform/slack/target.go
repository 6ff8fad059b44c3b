package slack

import (
	"errors"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// CanonicalTarget returns the function that puts a conversation named from
// outside (an events target, a configured pattern) in the form Slack's events
// name it by: the workspace team (the one of the bot token, team; a target in
// any other workspace is refused), the channel id in upper case, a thread's
// ts with six fractional digits. So "c0chan0001" and "C0CHAN0001", or
// "1764432060.0002" and "1764432060.000200", are one conversation with one
// triage policy and one set of counters. chatless checks the account alone.
func CanonicalTarget(team string) func(t message.Thread, chatless bool) (message.Thread, error) {
	return func(t message.Thread, chatless bool) (message.Thread, error) {
		if team == "" {
			return message.Thread{}, errors.New("slack: set SLACK_TEAM_ID, the team_id auth.test returns for SLACK_BOT_TOKEN, to target Slack")
		}
		if !strings.EqualFold(t.Account, team) {
			return message.Thread{}, errors.New("slack: the account must be the bot's workspace, SLACK_TEAM_ID")
		}
		t.Account = strings.ToUpper(team)
		if chatless {
			return t, nil
		}
		t.Chat = strings.ToUpper(t.Chat)
		if !channelID(t.Chat) {
			return message.Thread{}, errors.New("slack: the chat is a channel id (C…, G… or D…)")
		}
		if t.Thread != "" {
			ts, ok := canonicalTS(t.Thread)
			if !ok {
				return message.Thread{}, errors.New("slack: the thread is a message ts, <seconds>.<microseconds>")
			}
			t.Thread = ts
		}
		return t, nil
	}
}

func channelID(s string) bool {
	if len(s) < 3 || (s[0] != 'C' && s[0] != 'G' && s[0] != 'D') {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// canonicalTS writes a ts with its fraction padded to six digits, as Slack
// writes it.
func canonicalTS(s string) (string, bool) {
	secs, frac, ok := strings.Cut(s, ".")
	if !ok || secs == "" || frac == "" || len(frac) > 6 || !digits(secs) || !digits(frac) {
		return "", false
	}
	secs = strings.TrimLeft(secs, "0")
	if secs == "" {
		return "", false
	}
	return secs + "." + frac + strings.Repeat("0", 6-len(frac)), true
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

var _ platform.PrivateChats = adapter{}

// Private: a D… channel is a direct message with one person, whom its id
// does not name; C… and G… are channels and group conversations.
func (adapter) Private(t message.Thread) (string, bool) {
	return "", strings.HasPrefix(strings.ToUpper(t.Chat), "D")
}
