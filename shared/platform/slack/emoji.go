package slack

import "strings"

// emojiNames maps the emoji people react with most to Slack's names for
// them, both ways: a reaction's name reaches the agent as its emoji, and an
// emoji the agent reacts with goes to Slack by name. Slack has aliases
// ("thumbsup" and "+1"); the first name listed for an emoji is the one
// Parley sends.
var emojiNames = []struct{ emoji, name string }{
	{"👍", "+1"}, {"👍", "thumbsup"}, {"👎", "-1"}, {"👎", "thumbsdown"},
	{"❤️", "heart"}, {"❤", "heart"}, {"👀", "eyes"}, {"✅", "white_check_mark"}, {"✔️", "heavy_check_mark"},
	{"❌", "x"}, {"⚠️", "warning"}, {"🎉", "tada"}, {"😂", "joy"}, {"🙏", "pray"}, {"🔥", "fire"},
	{"👌", "ok_hand"}, {"😢", "cry"}, {"🤔", "thinking_face"}, {"💯", "100"}, {"🚀", "rocket"},
	{"😄", "smile"}, {"😀", "grinning"}, {"👏", "clap"}, {"🙌", "raised_hands"}, {"⏳", "hourglass_flowing_sand"},
	{"💔", "broken_heart"}, {"🤷", "shrug"},
}

// EmojiFromName is the emoji a Slack reaction name stands for, or the name
// in colons (":partyparrot:") for one Parley does not know. A skin tone is
// dropped.
func EmojiFromName(name string) string {
	name, _, _ = strings.Cut(name, "::")
	for _, e := range emojiNames {
		if e.name == name {
			return e.emoji
		}
	}
	return ":" + name + ":"
}

// NameFromEmoji is Slack's name for an emoji: a known emoji's name, a
// name in colons as given without them, or "" for an emoji Parley cannot
// name.
func NameFromEmoji(emoji string) string {
	if n, ok := strings.CutPrefix(emoji, ":"); ok {
		if n, ok = strings.CutSuffix(n, ":"); ok && n != "" && !strings.ContainsAny(n, ": ") {
			return n
		}
		return ""
	}
	for _, e := range emojiNames {
		if e.emoji == emoji {
			return e.name
		}
	}
	return ""
}
