package whatsapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// Window is WhatsApp's customer-service window: a business may send a
// person free-form messages for 24 hours after their last message; after
// it, only approved templates (Graph answers a free-form message 131047).
const Window = 24 * time.Hour

// WindowMargin is how long before the window closes a free-form message is
// no longer tried: it must reach Meta while the window is still open.
const WindowMargin = time.Minute

// ReasonWindowClosed is the failure reason of a bubble outside the window
// with no template configured.
const ReasonWindowClosed = "window_closed"

// TextParam is the body parameter that stands for the bubble's text.
const TextParam = "{text}"

// MaxParam bounds a template's text parameter, in UTF-16 units.
const MaxParam = 1024

// Template is the approved template a bubble goes as outside the window
// (WHATSAPP_WINDOW_TEMPLATE).
type Template struct {
	// Name and Language are the template's, as approved in WhatsApp
	// Manager (its language code: en_US).
	Name     string `json:"name"`
	Language string `json:"language"`
	// Body are its body's parameters, {{1}} first: each written as given,
	// with TextParam replaced by the bubble's text.
	Body []string `json:"body"`
}

// isTemplateName reports whether s is 1 to 512 of a–z, 0–9 and '_', as
// Meta names templates. A loop, not a regular expression: RE2 compiles a
// bounded repeat into that many copies at package initialisation, and
// every function links this package (the registry).
func isTemplateName(s string) bool {
	if len(s) == 0 || len(s) > 512 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ParseTemplate reads WHATSAPP_WINDOW_TEMPLATE; "" is none.
func ParseTemplate(s string) (*Template, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	var t Template
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("%s: want {\"name\":…,\"language\":…,\"body\":[…]}: %v", SettingWindowTemplate, err)
	}
	var errs []error
	if !isTemplateName(t.Name) {
		errs = append(errs, errors.New(SettingWindowTemplate+": name must be a template's name (lower case letters, digits, _)"))
	}
	if t.Language == "" || strings.ContainsAny(t.Language, " /") {
		errs = append(errs, errors.New(SettingWindowTemplate+": language must be the template's language code, like en_US"))
	}
	for _, p := range t.Body {
		if strings.TrimSpace(p) == "" {
			errs = append(errs, errors.New(SettingWindowTemplate+": a body parameter is empty"))
		}
	}
	return &t, errors.Join(errs...)
}

// message is the template message for text: its body parameters with
// TextParam replaced by text, each on one line, without runs of more than
// four spaces (Meta refuses those, 132018), and cut to MaxParam.
func (t *Template) message(text string) *WhatsAppTemplate {
	out := &WhatsAppTemplate{Name: t.Name, Language: WhatsAppTemplateLanguage{Code: t.Language}}
	if len(t.Body) == 0 {
		return out
	}
	body := WhatsAppTemplateComponent{Type: "body"}
	for _, p := range t.Body {
		body.Parameters = append(body.Parameters, WhatsAppTemplateParameter{Type: "text", Text: param(strings.ReplaceAll(p, TextParam, text))})
	}
	out.Components = []WhatsAppTemplateComponent{body}
	return out
}

// param is s on one line (oneLine: every run of white space, newlines and
// tabs included, one space), cut to MaxParam UTF-16 units.
func param(s string) string {
	s = oneLine(s)
	if units(s) <= MaxParam {
		return s
	}
	n := 0
	for i, r := range s {
		if n+runeUnits(r) > MaxParam-1 {
			return s[:i] + "…"
		}
		n += runeUnits(r)
	}
	return s
}

// closedSend is what a send outside the window came to.
type closedSend struct {
	receipt message.Receipt
	err     error
}

// outsideWindow sends m as the window template when m carries a window
// (Outgoing.ReplyContext, Token message.WindowToken) that is closed, or
// closes within WindowMargin; without a template it fails window_closed
// (permission) before any call. closed is false when the window is open,
// or unknown (no window carried: Graph decides, 131047).
func (c *Client) outsideWindow(ctx context.Context, m message.Outgoing) (bool, closedSend) {
	rc := m.ReplyContext
	if rc == nil || rc.Token != message.WindowToken {
		return false, closedSend{}
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if rc.Fresh(now(), WindowMargin) {
		return false, closedSend{}
	}
	if err := c.checkThread(m.Thread); err != nil {
		return true, closedSend{err: fmt.Errorf("whatsapp send: %w", err)}
	}
	if c.WindowTemplate == nil {
		return true, closedSend{err: fmt.Errorf("whatsapp send: %w", &message.SendError{Class: message.FailPermission,
			Reason: ReasonWindowClosed + ": the person last wrote more than 24 hours ago; set " + SettingWindowTemplate + " to reach them with an approved template"})}
	}
	var text string
	switch m.Content.Kind() {
	case message.ContentText:
		text = m.Content.Text
	case message.ContentPrompt:
		// A template has no controls of Parley's: the question's text
		// form, answered by text once the person writes.
		text = m.Content.Prompt.FallbackText()
	default:
		return true, closedSend{err: fmt.Errorf("whatsapp send: %w", invalid("content is neither text nor a question"))}
	}
	m.ReplyTo = "" // a template quotes nothing
	rc2, err := c.send(ctx, m, func(msg *WhatsAppSendMessage) error {
		msg.Type, msg.Template = "template", c.WindowTemplate.message(c.markup(text))
		return nil
	})
	if err != nil {
		err = fmt.Errorf("whatsapp send template: %w", err)
	}
	return true, closedSend{receipt: rc2, err: err}
}
