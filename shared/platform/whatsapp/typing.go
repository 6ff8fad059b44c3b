package whatsapp

import (
	"context"
	"fmt"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

var (
	_ platform.MessageTyper  = (*Client)(nil)
	_ platform.TypingRenewer = (*Client)(nil)
)

// WhatsAppTypingIndicator marks a person's message read and shows the
// typing indicator in their chat: POST /<phone number id>/messages.
// https://developers.facebook.com/documentation/business-messaging/whatsapp/typing-indicators/
type WhatsAppTypingIndicator struct {
	MessagingProduct string                `json:"messaging_product"`
	Status           string                `json:"status"`
	MessageID        string                `json:"message_id"`
	TypingIndicator  WhatsAppTypingDisplay `json:"typing_indicator"`
}

// WhatsAppTypingDisplay is the indicator shown: "text".
type WhatsAppTypingDisplay struct {
	Type string `json:"type"`
}

// typingLife is how long WhatsApp shows the indicator: until a message is
// sent, or 25 seconds.
const typingLife = 25 * time.Second

// TypingFor shows the typing indicator for the person's message messageID
// (a wamid) in t, which also marks it (and the ones before it) read. It
// lasts until the business sends a message or 25 seconds, and asking again
// renews it. Failures are classified as Send's.
func (c *Client) TypingFor(ctx context.Context, t message.Thread, messageID string) error {
	if err := c.checkThread(t); err != nil {
		return fmt.Errorf("whatsapp typing indicator: %w", err)
	}
	if messageID == "" {
		return fmt.Errorf("whatsapp typing indicator: %w", invalid("no message to mark read"))
	}
	_, _, err := c.post(ctx, t, WhatsAppTypingIndicator{
		MessagingProduct: "whatsapp", Status: "read", MessageID: messageID,
		TypingIndicator: WhatsAppTypingDisplay{Type: "text"},
	})
	if err != nil {
		return fmt.Errorf("whatsapp typing indicator: %w", err)
	}
	return nil
}

// TypingLife is the indicator's life, which the turn renews it within.
func (c *Client) TypingLife(message.Thread) time.Duration { return typingLife }
