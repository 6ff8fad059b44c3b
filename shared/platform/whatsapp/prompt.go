package whatsapp

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
)

// Limits of interactive messages, as the Cloud API documents them, in
// characters (counted as UTF-16 units, as TextLimit is: never fewer than
// code points).
const (
	// MaxButtons is the most reply buttons one message holds.
	MaxButtons = 3
	// MaxRows is the most rows a list holds, in all its sections.
	MaxRows = 10
	// buttonBodyLimit bounds a reply-button message's body text,
	// listBodyLimit a list message's.
	buttonBodyLimit = 1024
	listBodyLimit   = 4096
	// buttonTitleLimit bounds a reply button's title.
	buttonTitleLimit = 20
	// rowTitleLimit and rowDescriptionLimit bound a list row's title and
	// description.
	rowTitleLimit       = 24
	rowDescriptionLimit = 72
	// idLimit bounds a control's id: a list row's (a reply button's may
	// hold 256).
	idLimit = 200
	// ListButton opens a list message's rows.
	ListButton = "Choose"
)

// renderPrompt lays out a question for WhatsApp, into a send's Type and
// Text or Interactive:
//
//   - a closed prompt (no controls) is its text;
//   - at most MaxButtons controls, options and actions together (Done and
//     Skip count against the three buttons), are reply buttons;
//   - at most MaxRows controls are a list message behind a "Choose" button,
//     one row per control, the full label as the row's description when
//     the title had to be shortened;
//   - a multi-select, more than MaxRows controls, or a question whose body
//     would pass its limit (1024 characters with buttons, 4096 in a list)
//     is the numbered text form
//     (Prompt.FallbackText), answered by text.
//
// Every control carries its Choice.Data as its id, so a press or a choice
// comes back as Press.Data. Titles are unique and within their limit: when
// one is too long, empty or a repeat, every title is numbered ("2. Porto")
// and cut with "…", and the full labels of the cut ones are listed, by
// number, under the question's text. markup renders the question's text
// (inert, unless the operator trusts the agent's markup).
func renderPrompt(p message.Prompt, markup func(string) string, m *WhatsAppSendMessage) error {
	if p.Closed() {
		return textMessage(p.Text, markup, m)
	}
	controls := append(append([]message.Choice(nil), p.Options...), p.Actions...)
	if p.Multi || len(controls) > MaxRows {
		return textMessage(p.FallbackText(), markup, m)
	}
	if strings.TrimSpace(p.Text) == "" {
		return invalid("a question without text")
	}
	seen := map[string]bool{}
	labels := make([]string, len(controls))
	for i, c := range controls {
		if c.Data == "" || len(c.Data) > idLimit || seen[c.Data] {
			return invalid("a control's data is empty, over " + strconv.Itoa(idLimit) + " bytes, or repeated")
		}
		seen[c.Data] = true
		labels[i] = oneLine(c.Label)
	}

	if len(controls) <= MaxButtons {
		titles, cut := shorten(labels, buttonTitleLimit)
		body := markup(withLegend(p.Text, labels, cut))
		if units(body) > buttonBodyLimit {
			return textMessage(p.FallbackText(), markup, m)
		}
		in := &WhatsAppInteractive{Type: WhatsAppInteractiveButton, Body: WhatsAppBody{Text: body}}
		for i, c := range controls {
			in.Action.Buttons = append(in.Action.Buttons, WhatsAppButton{Type: "reply", Reply: WhatsAppButtonReply{ID: c.Data, Title: titles[i]}})
		}
		m.Type, m.Interactive = WhatsAppTypeInteractive, in
		return nil
	}

	titles, cut := shorten(labels, rowTitleLimit)
	rows := make([]WhatsAppRow, len(controls))
	lost := make([]bool, len(controls))
	for i, c := range controls {
		rows[i] = WhatsAppRow{ID: c.Data, Title: titles[i]}
		if cut[i] {
			rows[i].Description = truncate(labels[i], rowDescriptionLimit)
			lost[i] = rows[i].Description != labels[i]
		}
	}
	body := markup(withLegend(p.Text, labels, lost))
	if units(body) > listBodyLimit {
		return textMessage(p.FallbackText(), markup, m)
	}
	m.Type = WhatsAppTypeInteractive
	m.Interactive = &WhatsAppInteractive{
		Type:   WhatsAppInteractiveList,
		Body:   WhatsAppBody{Text: body},
		Action: WhatsAppAction{Button: ListButton, Sections: []WhatsAppSection{{Rows: rows}}},
	}
	return nil
}

// textMessage makes m a text message of s. An empty text is refused
// without a call; one over TextLimit is Graph's to refuse (100,
// invalid_payload): units arrive split to the limit, and inert keeps their
// length.
func textMessage(s string, markup func(string) string, m *WhatsAppSendMessage) error {
	if strings.TrimSpace(s) == "" {
		return invalid("empty text")
	}
	m.Type, m.Text = WhatsAppTypeText, &WhatsAppText{Body: markup(s)}
	return nil
}

// withLegend appends the full labels of the controls whose titles were
// cut, by number, to the question's text.
func withLegend(text string, labels []string, cut []bool) string {
	var b strings.Builder
	for i, l := range labels {
		if cut[i] {
			b.WriteString("\n" + strconv.Itoa(i+1) + ". " + l)
		}
	}
	if b.Len() == 0 {
		return text
	}
	return text + "\n" + b.String()
}

// shorten returns a title of at most limit characters for each label. When
// every label already fits, is not empty and no two are alike (regardless
// of case), they are the titles. Otherwise every title is its number, ". "
// and its label, cut to fit with "…": numbers keep cut titles apart and
// tell which option is which. cut says whose label the title lost.
func shorten(labels []string, limit int) (titles []string, cut []bool) {
	titles = make([]string, len(labels))
	cut = make([]bool, len(labels))
	seen := map[string]bool{}
	fits := true
	for _, l := range labels {
		key := strings.ToLower(l)
		if l == "" || units(l) > limit || seen[key] {
			fits = false
		}
		seen[key] = true
	}
	if fits {
		copy(titles, labels)
		return titles, cut
	}
	for i, l := range labels {
		n := strconv.Itoa(i + 1)
		if l == "" {
			titles[i] = n
			continue
		}
		prefix := n + ". "
		rest := truncate(l, limit-units(prefix))
		titles[i] = prefix + rest
		cut[i] = rest != l
	}
	return titles, cut
}

// truncate cuts s to at most limit characters, ending it with "…" when cut.
func truncate(s string, limit int) string {
	if units(s) <= limit {
		return s
	}
	n := 0
	for i, r := range s {
		if n+runeUnits(r)+1 > limit { // room for the ellipsis
			return strings.TrimRight(s[:i], " ") + "…"
		}
		n += runeUnits(r)
	}
	return s
}

// oneLine puts a label on one line: titles hold no line breaks.
func oneLine(s string) string {
	return strings.TrimSpace(strings.Join(strings.Fields(s), " "))
}

// units counts s as TextLimit is counted: in UTF-16 code units, which is
// never fewer than its code points, so a text within a limit of either
// counting is within this one.
func units(s string) int {
	n := 0
	for _, r := range s {
		n += runeUnits(r)
	}
	return n
}

func runeUnits(r rune) int {
	if r >= 0x10000 && r <= utf8.MaxRune {
		return 2
	}
	return 1
}
