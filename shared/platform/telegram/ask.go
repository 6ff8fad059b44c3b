package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

var (
	_ platform.Asker        = (*Client)(nil)
	_ platform.Editor       = (*Client)(nil)
	_ platform.Acknowledger = (*Client)(nil)
)

// buttonLabel is the most of a label a button shows; Telegram truncates
// longer ones on narrow screens anyway.
const buttonLabel = 48

// Ask posts a question message (m.Content.Prompt) with sendMessage and an
// inline keyboard: one option a row (two a row past eight options), a ✓ on
// the chosen ones of a multi-select, then the actions. Every button's
// callback_data is the control's own data. Failures are classified like
// Send's.
func (c *Client) Ask(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	p := m.Content.Prompt
	if p == nil {
		return message.Receipt{}, fmt.Errorf("telegram sendMessage: %w", &message.SendError{Class: message.FailInvalidPayload, Reason: "content is not a question"})
	}
	kb, err := keyboard(*p)
	if err != nil {
		return message.Receipt{}, fmt.Errorf("telegram sendMessage: %w", err)
	}
	m.Content = message.Text(p.Text)
	rc, err := c.sendWith(ctx, m, kb)
	if err != nil {
		return message.Receipt{}, fmt.Errorf("telegram sendMessage: %w", err)
	}
	return rc, nil
}

// Edit changes a message the bot sent with editMessageText: new text, or a
// prompt with its keyboard changed (a closed prompt removes it).
func (c *Client) Edit(ctx context.Context, t message.Thread, messageID string, content message.Content) error {
	if err := platform.CheckThread(c.BotID, t); err != nil {
		return fmt.Errorf("telegram editMessageText: %w", err)
	}
	id, err := strconv.ParseInt(messageID, 10, 64)
	if err != nil {
		return fmt.Errorf("telegram editMessageText: %w", &message.SendError{Class: message.FailInvalidPayload, Reason: "message_id is not an integer"})
	}
	args := TelegramEditMessageText{ChatID: TelegramChatID(t.Chat), MessageID: id, Text: content.Text}
	if p := content.Prompt; p != nil {
		if args.ReplyMarkup, err = keyboard(*p); err != nil {
			return fmt.Errorf("telegram editMessageText: %w", err)
		}
		args.Text = p.Text
		if p.Closed() {
			// A closed question's summary of its answers is Parley's own,
			// as long as the answers: cut to fit. An open question's text
			// fits already, or the planner refused it.
			args.Text = platform.Fit(p.Text, TextLimit, message.CountUTF16)
		}
	}
	if args.Text == "" {
		return fmt.Errorf("telegram editMessageText: %w", &message.SendError{Class: message.FailInvalidPayload, Reason: "no text"})
	}
	var edited TelegramMessage
	err = c.call(ctx, "editMessageText", args, &edited)
	var se *message.SendError
	if errors.As(err, &se) && se.Status == http.StatusBadRequest && strings.HasPrefix(se.Reason, notModified) {
		// Already so: an edit retried after an unknown outcome.
		return nil
	}
	if err != nil {
		return fmt.Errorf("telegram editMessageText: %w", err)
	}
	return nil
}

// Acknowledge answers a press. Its webhook answered it already, with
// answerCallbackQuery (Receiver): Telegram takes one answer per press, and
// only within seconds, so an empty notice sends nothing. A notice is sent
// as a message replying to the pressed one, in its chat (where everyone in
// a group sees it: a bot has no message for one person alone but that
// answer). Failures are classified as Send's.
func (c *Client) Acknowledge(ctx context.Context, ev message.Event, notice string) error {
	if ev.Press == nil || ev.Press.AckID == "" {
		return fmt.Errorf("telegram acknowledge: %w", &message.SendError{Class: message.FailInvalidPayload, Reason: "no callback query to answer"})
	}
	if err := platform.CheckThread(c.BotID, ev.Thread); err != nil {
		return fmt.Errorf("telegram acknowledge: %w", err)
	}
	if notice == "" {
		return nil
	}
	if _, err := c.send(ctx, message.Outgoing{Thread: ev.Thread, Content: message.Text(notice), ReplyTo: ev.Press.MessageID}); err != nil {
		return fmt.Errorf("telegram acknowledge: %w", err)
	}
	return nil
}

// keyboard lays a prompt out as an inline keyboard. A closed prompt gets an
// empty one, which removes the buttons of an edited message.
func keyboard(p message.Prompt) (*TelegramInlineKeyboardMarkup, error) {
	kb := &TelegramInlineKeyboardMarkup{InlineKeyboard: [][]TelegramInlineKeyboardButton{}}
	perRow := 1
	if len(p.Options) > 8 {
		perRow = 2
	}
	var row []TelegramInlineKeyboardButton
	for _, o := range p.Options {
		label := o.Label
		if o.Selected {
			label = "✓ " + label
		}
		b, err := button(label, o.Data)
		if err != nil {
			return nil, err
		}
		if row = append(row, b); len(row) == perRow {
			kb.InlineKeyboard, row = append(kb.InlineKeyboard, row), nil
		}
	}
	if len(row) > 0 {
		kb.InlineKeyboard = append(kb.InlineKeyboard, row)
	}
	row = nil
	for _, a := range p.Actions {
		b, err := button(a.Label, a.Data)
		if err != nil {
			return nil, err
		}
		row = append(row, b)
	}
	if len(row) > 0 {
		kb.InlineKeyboard = append(kb.InlineKeyboard, row)
	}
	return kb, nil
}

func button(label, data string) (TelegramInlineKeyboardButton, error) {
	if data == "" || len(data) > message.MaxControlData {
		return TelegramInlineKeyboardButton{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "callback data must be 1-64 bytes"}
	}
	if utf8.RuneCountInString(label) > buttonLabel {
		r := []rune(label)
		label = string(r[:buttonLabel-1]) + "…"
	}
	return TelegramInlineKeyboardButton{Text: label, CallbackData: data}, nil
}
