package platform

import (
	"context"

	"github.com/parleyhq/parley/shared/message"
)

// MessageTyper is a sender whose typing indicator is shown for one of the
// person's messages rather than for a thread (WhatsApp's: it also marks that
// message read, and shows until a message is sent or for 25 seconds). The
// turn feeds it the id of the message it answers, and prefers it to Typer;
// a TypingRenewer's life applies to it as to a Typer.
type MessageTyper interface {
	TypingFor(ctx context.Context, t message.Thread, messageID string) error
}
