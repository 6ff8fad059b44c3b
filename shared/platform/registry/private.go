package registry

import (
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Private reports whether t is a one-to-one chat with the bot, and the
// person in it when the thread names them, by its platform's adapter
// (platform.PrivateChats). A platform that cannot tell, or one Parley does
// not know, says group.
func Private(t message.Thread) (person string, private bool) {
	a, ok := Lookup(t.Platform)
	if !ok {
		return "", false
	}
	pc, ok := a.(platform.PrivateChats)
	if !ok {
		return "", false
	}
	return pc.Private(t)
}
