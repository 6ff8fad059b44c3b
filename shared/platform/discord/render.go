package discord

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// Limits of Discord's components, in code points where they are lengths.
const (
	MaxRows          = 5   // action rows per message
	MaxButtonsPerRow = 5   // buttons per action row
	MaxSelectOptions = 25  // options of a string select
	MaxCustomID      = 100 // a custom_id (and a select option's value)
	MaxButtonLabel   = 80
	MaxOptionLabel   = 100
)

// escaped are the characters Inert escapes wherever they are: emphasis,
// bold, underline and strike (* _ ~), spoilers (|), code (`), masked links
// ([), mentions, channels, emoji and timestamps (< and the > every one of
// them ends with), and the backslash itself. Headings (#), lists (- and
// "1.") and block quotes (>) are escaped where they mean something, at the
// start of a line.
const escaped = "\\*_~|`[<>"

// Inert escapes text so that Discord shows it as written: every character
// its markdown reads is preceded by a backslash, which Discord shows as
// nothing. URLs, as Discord's parser finds them (simple-markdown's url rule:
// http(s):// up to a space or "<", less trailing . , : ; " ' ) ]; the rule
// discord.py's escape_markdown keeps links by), are left as written: a
// backslash inside one would be part of the link. An http(s):// too short to
// be a link has its ":" escaped, since the backslashes after it could make
// it one. Mentions never notify anyone either way (allowed_mentions). The
// result is at most twice as long, in code points, as text.
//
// A line starts after "\n", "\r" or "\r\n": Discord's parser reads both
// as "\n" (simple-markdown's preprocess), and drops every "\f" before it
// parses, which could join "http" and "://" or a "#" to a line's start; so
// Inert drops "\f" too, which Discord would not have shown.
func Inert(text string) string {
	text = strings.ReplaceAll(text, "\f", "")
	var b strings.Builder
	b.Grow(len(text) + len(text)/8)
	lineStart, afterURL := true, false
	for i := 0; i < len(text); {
		if n := urlLen(text[i:]); n > 0 {
			b.WriteString(text[i : i+n])
			i += n
			lineStart, afterURL = false, true
			continue
		}
		if scheme := schemeOf(text[i:]); scheme != "" {
			// Too short to be a URL, it would become one once escaped
			// ("https://*" shown as a link to "https://\*"): its ":" is
			// escaped instead.
			b.WriteString(scheme + `\:`)
			i += len(scheme) + 1
			lineStart, afterURL = false, false
			continue
		}
		c := text[i]
		if lineStart {
			if c == ' ' || c == '\t' {
				b.WriteByte(c)
				i++
				continue
			}
			lineStart = false
			switch {
			case c == '#' || c == '-' || c == '+':
				b.WriteByte('\\')
			case '0' <= c && c <= '9':
				// "1." starts an ordered list, renumbered by Discord.
				j := i
				for j < len(text) && '0' <= text[j] && text[j] <= '9' {
					j++
				}
				if j < len(text) && text[j] == '.' {
					b.WriteString(text[i:j])
					b.WriteString(`\.`)
					i = j + 1
					continue
				}
			}
		}
		// Right after a URL a backslash would end the link instead of
		// escaping: "<" stays as written there, and with every ">" escaped
		// no mention, emoji or timestamp can close.
		if strings.IndexByte(escaped, c) >= 0 && !(c == '<' && afterURL) {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
		afterURL = false
		lineStart = c == '\n' || c == '\r'
		i++
	}
	return b.String()
}

// schemeOf is "https" or "http" when s starts with it and "://", else "".
func schemeOf(s string) string {
	switch {
	case strings.HasPrefix(s, "https://"):
		return "https"
	case strings.HasPrefix(s, "http://"):
		return "http"
	}
	return ""
}

// urlLen is the length of the URL s starts with, as Discord's parser finds
// it ("https?://[^\s<]+[^<.,:;"')\]\s]"), or 0.
func urlLen(s string) int {
	scheme := schemeOf(s)
	if scheme == "" {
		return 0
	}
	rest := s[len(scheme)+len("://"):]
	n := 0 // bytes of rest in the URL
	for n < len(rest) {
		r, size := utf8.DecodeRuneInString(rest[n:])
		if r == '<' || isSpace(r) {
			break
		}
		n += size
	}
	// The last character may not be one of . , : ; " ' ) ].
	for n > 0 && strings.IndexByte(`.,:;"')]`, rest[n-1]) >= 0 {
		n--
	}
	// At least two characters after "//": one of the run, and the last.
	if utf8.RuneCountInString(rest[:n]) < 2 {
		return 0
	}
	return len(s) - len(rest) + n
}

// isSpace is JavaScript's \s, which Discord's client parses with.
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return 0x2000 <= r && r <= 0x200A
}

// components lays a prompt out as Discord message components: its options
// as buttons (rows of MaxButtonsPerRow, then its actions on rows of their
// own), or as one string select when they do not fit MaxRows or the prompt
// is a multi-select with a select of its own; a closed prompt has none, so
// that an edit to it removes the controls. Each control's custom_id (and a
// select option's value) is its Choice.Data, which must be unique and at
// most MaxCustomID long.
func components(p message.Prompt) ([]DiscordComponent, error) {
	out := []DiscordComponent{}
	if p.Closed() {
		return out, nil
	}
	seen := map[string]bool{}
	for _, d := range append(dataOf(p.Options), dataOf(p.Actions)...) {
		if err := checkData(d, seen); err != nil {
			return nil, err
		}
	}
	fits := rows(len(p.Options))+rows(len(p.Actions)) <= MaxRows
	asSelect := p.Select != "" && len(p.Options) > 0 && (p.Multi || !fits)
	if !asSelect && !fits {
		return nil, invalid("the prompt has more controls than " + strconv.Itoa(MaxRows) + " rows of buttons, and no select")
	}
	if asSelect {
		if err := checkData(p.Select, seen); err != nil {
			return nil, err
		}
		if len(p.Options) > MaxSelectOptions {
			return nil, invalid("a select has at most " + strconv.Itoa(MaxSelectOptions) + " options")
		}
		if 1+rows(len(p.Actions)) > MaxRows {
			return nil, invalid("the prompt's actions do not fit beside its select")
		}
		labels := shorten(labelsOf(p.Options, false), MaxOptionLabel)
		sel := DiscordComponent{Type: DiscordComponentStringSelect, CustomID: p.Select, MinValues: ptr(1), MaxValues: ptr(1)}
		if p.Multi {
			// Every chosen option at once; Done submits, so clearing the
			// choice is allowed.
			sel.MinValues, sel.MaxValues = ptr(0), ptr(len(p.Options))
		}
		for i, o := range p.Options {
			sel.Options = append(sel.Options, DiscordSelectOption{Label: labels[i], Value: o.Data, Default: o.Selected})
		}
		out = append(out, DiscordComponent{Type: DiscordComponentActionRow, Components: []DiscordComponent{sel}})
		return append(out, buttons(p.Actions, shorten(labelsOf(p.Actions, false), MaxButtonLabel), DiscordButtonSecondary)...), nil
	}
	// A multi-select without a select of its own: each option toggles,
	// marked when chosen.
	labels := shorten(append(labelsOf(p.Options, p.Multi), labelsOf(p.Actions, false)...), MaxButtonLabel)
	out = append(out, buttons(p.Options, labels[:len(p.Options)], DiscordButtonPrimary)...)
	return append(out, buttons(p.Actions, labels[len(p.Options):], DiscordButtonSecondary)...), nil
}

// buttons lays cs out on rows of MaxButtonsPerRow, with labels; a selected
// choice is a success (green) button.
func buttons(cs []message.Choice, labels []string, style int) []DiscordComponent {
	var out []DiscordComponent
	for start := 0; start < len(cs); start += MaxButtonsPerRow {
		row := DiscordComponent{Type: DiscordComponentActionRow}
		for i := start; i < min(start+MaxButtonsPerRow, len(cs)); i++ {
			st := style
			if cs[i].Selected {
				st = DiscordButtonSuccess
			}
			row.Components = append(row.Components, DiscordComponent{Type: DiscordComponentButton, Style: st, Label: labels[i], CustomID: cs[i].Data})
		}
		out = append(out, row)
	}
	return out
}

func rows(n int) int { return (n + MaxButtonsPerRow - 1) / MaxButtonsPerRow }

func dataOf(cs []message.Choice) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Data
	}
	return out
}

// labelsOf are the choices' labels, trimmed; marked with a check when
// toggled on (a multi-select of buttons).
func labelsOf(cs []message.Choice, marked bool) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = strings.TrimSpace(c.Label)
		if marked && c.Selected {
			out[i] = "✓ " + out[i]
		}
	}
	return out
}

func checkData(d string, seen map[string]bool) error {
	switch n := utf8.RuneCountInString(d); {
	case strings.TrimSpace(d) == "":
		return invalid("a control without data")
	case n > MaxCustomID:
		return invalid("a control's data is over " + strconv.Itoa(MaxCustomID) + " characters")
	case seen[d]:
		return invalid("two controls carry the same data")
	}
	seen[d] = true
	return nil
}

// shorten fits each label into max code points. A label that is too long
// keeps its start and ends with "…"; when that leaves two different labels
// alike, they keep their start and their end instead, and when even that is
// alike, they are numbered by their place, so that every control still
// says which it is. An empty label (a choice the agent left unnamed) is
// shown as "…".
func shorten(labels []string, max int) []string {
	out := make([]string, len(labels))
	cut := make([]bool, len(labels))
	for i, l := range labels {
		switch {
		case l == "":
			out[i] = "…"
		case utf8.RuneCountInString(l) > max:
			out[i], cut[i] = head(l, max-1)+"…", true
		default:
			out[i] = l
		}
	}
	for _, step := range []func(i int) string{
		func(i int) string {
			keep := max - 1
			return head(labels[i], keep/2) + "…" + tail(labels[i], keep-keep/2)
		},
		func(i int) string {
			n := strconv.Itoa(i+1) + ". "
			return n + head(labels[i], max-utf8.RuneCountInString(n)-1) + "…"
		},
	} {
		clash := clashes(labels, out, cut)
		if len(clash) == 0 {
			break
		}
		for _, i := range clash {
			out[i] = step(i)
		}
	}
	return out
}

// clashes are the shortened labels that read like another label of the
// prompt whose original differs.
func clashes(labels, out []string, cut []bool) []int {
	var idx []int
	for i := range out {
		if !cut[i] {
			continue
		}
		for j := range out {
			if i != j && out[i] == out[j] && labels[i] != labels[j] {
				idx = append(idx, i)
				break
			}
		}
	}
	return idx
}

// head is s's first n code points, not ending inside a character that
// combines with the one before it.
func head(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	for i > 0 && i < len(s) {
		r, _ := utf8.DecodeRuneInString(s[i:])
		prev, _ := utf8.DecodeLastRuneInString(s[:i])
		if !platform.Joins(r) && prev != '\u200D' {
			break
		}
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return strings.TrimRightFunc(s[:i], unicode.IsSpace)
}

// tail is s's last n code points, not starting inside a combined character.
func tail(s string, n int) string {
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		prev, _ := utf8.DecodeLastRuneInString(s[:i])
		if !platform.Joins(r) && prev != '\u200D' {
			break
		}
		i += size
	}
	return strings.TrimLeftFunc(s[i:], unicode.IsSpace)
}

func ptr[T any](v T) *T { return &v }

func invalid(reason string) error {
	return &message.SendError{Class: message.FailInvalidPayload, Reason: reason}
}
