package slack

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

var (
	_ platform.Asker        = (*Client)(nil)
	_ platform.Editor       = (*Client)(nil)
	_ platform.Acknowledger = (*Client)(nil)
)

// Block Kit limits Parley keeps to.
const (
	sectionLimit   = 3000 // a section's text
	controlLabel   = 75   // a button's or an option's text
	buttonsAtMost  = 5    // more single-select options: a static select
	checkboxesMost = 10   // more multi-select options: a multi-select menu
)

// Ask posts a question message (m.Content.Prompt) with chat.postMessage: a
// plain_text section (Slack parses no mention or markup in it) and an actions
// block — buttons for up to five options, a static select for more,
// checkboxes (or a multi-select past ten) for a multi-select, then the
// actions. The message's text, what notifications show, is escaped as any.
func (c *Client) Ask(ctx context.Context, m message.Outgoing) (message.Receipt, error) {
	p := m.Content.Prompt
	if p == nil {
		return message.Receipt{}, fmt.Errorf("slack chat.postMessage: %w", &message.SendError{Class: message.FailInvalidPayload, Reason: "content is not a question"})
	}
	m.Content = message.Text(p.Text)
	rc, err := c.postWith(ctx, m, blocks(*p))
	if err != nil {
		return message.Receipt{}, fmt.Errorf("slack chat.postMessage: %w", err)
	}
	return rc, nil
}

// Edit changes a message the bot sent with chat.update: new text, or a
// prompt with its controls changed (a closed prompt removes them).
func (c *Client) Edit(ctx context.Context, t message.Thread, messageID string, content message.Content) error {
	if err := platform.CheckThread(c.TeamID, t); err != nil {
		return fmt.Errorf("slack chat.update: %w", err)
	}
	text := content.Text
	var bl []SlackBlock
	if p := content.Prompt; p != nil {
		if p.Closed() {
			// A closed question's summary of its answers is Parley's own,
			// as long as the answers: cut to fit. An open question's text
			// fits already, or the planner refused it.
			closed := *p
			closed.Text = platform.Fit(p.Text, sectionLimit, message.CountRunes)
			p = &closed
		}
		text, bl = p.Text, blocks(*p)
	}
	if text == "" || messageID == "" {
		return fmt.Errorf("slack chat.update: %w", &message.SendError{Class: message.FailInvalidPayload, Reason: "no text or no ts"})
	}
	if bl == nil {
		bl = []SlackBlock{section(text)}
	}
	off := false
	body := SlackUpdate{Channel: t.Chat, TS: messageID, Text: inert.Replace(text), Blocks: bl, LinkNames: &off}
	if _, err := c.call(ctx, "/chat.update", body); err != nil {
		return fmt.Errorf("slack chat.update: %w", err)
	}
	return nil
}

// Acknowledge answers a press. Slack's own acknowledgement is the webhook's
// 200, already sent; a notice goes to the presser alone with
// chat.postEphemeral.
func (c *Client) Acknowledge(ctx context.Context, ev message.Event, notice string) error {
	if notice == "" {
		return nil
	}
	if err := platform.CheckThread(c.TeamID, ev.Thread); err != nil {
		return fmt.Errorf("slack chat.postEphemeral: %w", err)
	}
	if ev.Sender.ID == "" {
		return fmt.Errorf("slack chat.postEphemeral: %w", &message.SendError{Class: message.FailInvalidPayload, Reason: "no user to show the notice to"})
	}
	off := false
	body := SlackPostEphemeral{Channel: ev.Thread.Chat, User: ev.Sender.ID, Text: inert.Replace(notice), ThreadTS: ev.Thread.Thread, LinkNames: &off}
	if _, err := c.call(ctx, "/chat.postEphemeral", body); err != nil {
		return fmt.Errorf("slack chat.postEphemeral: %w", err)
	}
	return nil
}

// section is a plain_text section block of text. A question's text is
// within sectionLimit (the planner refuses a longer one: PromptLimit),
// a closed one's is fitted to it (Edit); a text edit's is cut there.
func section(text string) SlackBlock {
	return SlackBlock{Type: "section", Text: &SlackText{Type: "plain_text", Text: cut(text, sectionLimit)}}
}

// blocks lays a prompt out in Block Kit.
func blocks(p message.Prompt) []SlackBlock {
	out := []SlackBlock{section(p.Text)}
	var els []SlackElement
	opts := func() (all, chosen []SlackOption) {
		for _, o := range p.Options {
			so := SlackOption{Text: &SlackText{Type: "plain_text", Text: cut(o.Label, controlLabel)}, Value: o.Data}
			all = append(all, so)
			if o.Selected {
				chosen = append(chosen, so)
			}
		}
		return all, chosen
	}
	switch {
	case len(p.Options) == 0:
	case p.Multi:
		all, chosen := opts()
		kind := "checkboxes"
		if len(all) > checkboxesMost {
			kind = "multi_static_select"
		}
		el := SlackElement{Type: kind, ActionID: p.Select, Options: all, InitialOptions: chosen}
		if kind == "multi_static_select" {
			el.Placeholder = &SlackText{Type: "plain_text", Text: "Choose"}
		}
		els = append(els, el)
	case len(p.Options) > buttonsAtMost:
		all, _ := opts()
		els = append(els, SlackElement{Type: "static_select", ActionID: p.Select, Options: all, Placeholder: &SlackText{Type: "plain_text", Text: "Choose"}})
	default:
		for _, o := range p.Options {
			els = append(els, button(o))
		}
	}
	for _, a := range p.Actions {
		els = append(els, button(a))
	}
	if len(els) > 0 {
		out = append(out, SlackBlock{Type: "actions", Elements: els})
	}
	return out
}

func button(c message.Choice) SlackElement {
	return SlackElement{Type: "button", ActionID: c.Data, Value: c.Data, Text: &SlackText{Type: "plain_text", Text: cut(c.Label, controlLabel)}}
}

// cut shortens s to at most n runes, marking the cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// call posts body to a Web API method and reads its answer like
// chat.postMessage's.
func (c *Client) call(ctx context.Context, method string, body any) (SlackPostMessageResponse, error) {
	api := c.webAPI()
	header := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "Authorization": {"Bearer " + c.Token}}
	resp, err := api.PostJSON(ctx, method, header, body)
	if err != nil {
		return SlackPostMessageResponse{}, err
	}
	var r SlackPostMessageResponse
	if err := webAnswer(api, resp, &r); err != nil {
		return SlackPostMessageResponse{}, err
	}
	return r, nil
}

func (c *Client) webAPI() platform.API {
	return platform.API{Name: "Web API", BaseURL: c.BaseURL, DefaultBaseURL: DefaultBaseURL, Token: c.Token, HTTP: c.HTTP}
}

// answer is a Web API answer's ok and error code.
type answer interface{ answer() (ok bool, code string) }

func (r SlackPostMessageResponse) answer() (bool, string) { return r.OK, r.Error }
func (r SlackHistory) answer() (bool, string)             { return r.OK, r.Error }
func (r SlackUploadURL) answer() (bool, string)           { return r.OK, r.Error }
func (r SlackCompleteUpload) answer() (bool, string)      { return r.OK, r.Error }

// webAnswer reads a Web API answer into v: a status other than 200 is
// classified by platform.StatusFailure, a body that is no Web API answer
// is unknown, and ok:false is classified by its error code (errorClass),
// a rate limit waiting its Retry-After.
func webAnswer(api platform.API, resp *platform.Response, v answer) error {
	if resp.Status != http.StatusOK {
		return platform.StatusFailure(resp.Status, resp.Header)
	}
	if err := api.Decode(resp, v); err != nil {
		return err
	}
	if ok, code := v.answer(); !ok {
		se := &message.SendError{Class: errorClass(code), Status: resp.Status, Reason: platform.Reason(cmp.Or(code, "ok:false without error"))}
		if se.Class == message.FailRateLimit {
			se.RetryAfter = platform.RetryAfter(resp.Header, time.Now())
		}
		return se
	}
	return nil
}
