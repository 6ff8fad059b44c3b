package questions

import (
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// Text applies a person's message as an answer to the question's current
// field. It is one when the question is open, who may answer it, and the
// field takes text (free text, a number), or the text picks options by
// number or label, or says skip or done. ok is false when the message is no
// answer: the caller handles it as any message, and the question stays open.
// A free-text or number field's invalid answer is an answer all the same:
// its Outcome is a one-line re-prompt (Notice), and the question stays open.
func Text(q store.Question, text, who, eventKey string) (o Outcome, ok bool) {
	if q.ClosedBy == eventKey && q.State != store.QuestionOpen {
		return Outcome{Edit: ptr(Closed(q)), Answer: answerOf(q)}, true
	}
	if q.State != store.QuestionOpen || q.Field >= len(q.Form.Fields) || (q.Owner != "" && who != q.Owner) {
		return Outcome{}, false
	}
	f := q.Form.Fields[q.Field]
	s := strings.TrimSpace(text)
	word := strings.ToLower(s)
	if word == "skip" && optional(q.Form) {
		return decline(q, eventKey), true
	}
	switch f.Kind {
	case message.FieldText:
		if reason := checkText(f, s); reason != "" {
			return Outcome{Notice: reason}, true
		}
		return advance(q, f, s, eventKey), true
	case message.FieldNumber, message.FieldInteger:
		v, reason := checkNumber(f, s)
		if reason != "" {
			return Outcome{Notice: reason}, true
		}
		return advance(q, f, v, eventKey), true
	case message.FieldBoolean:
		switch word {
		case "yes", "y", "true", "1":
			return advance(q, f, true, eventKey), true
		case "no", "n", "false", "2":
			return advance(q, f, false, eventKey), true
		}
		return Outcome{}, false
	case message.FieldSingleSelect:
		picks, ok := pick(f, s)
		if !ok || len(picks) != 1 {
			return Outcome{}, false
		}
		return advance(q, f, picks[0], eventKey), true
	case message.FieldMultiSelect:
		if word == "done" {
			return done(q, f, eventKey), true
		}
		picks, ok := pick(f, s)
		if !ok {
			return Outcome{}, false
		}
		if f.MaxItems != nil && len(picks) > *f.MaxItems {
			return Outcome{Notice: fmt.Sprintf("Choose at most %d.", *f.MaxItems)}, true
		}
		q.Selected = inOrder(f.Options, picks)
		return done(q, f, eventKey), true
	}
	return Outcome{}, false
}

// pick reads options named by number ("2", "1 3", "1, 3") or by label or
// value, case aside.
func pick(f message.Field, s string) ([]string, bool) {
	opts := options(f)
	for _, o := range opts {
		if strings.EqualFold(s, o.Label()) || strings.EqualFold(s, o.Value) {
			return []string{o.Value}, true
		}
	}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' })
	if len(fields) == 0 {
		return nil, false
	}
	var out []string
	for _, w := range fields {
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 || n > len(opts) {
			return nil, false
		}
		if v := opts[n-1].Value; !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, true
}

// checkText returns why s does not answer the text field f, or "".
func checkText(f message.Field, s string) string {
	n := utf8.RuneCountInString(s)
	switch {
	case n == 0:
		return "Please " + lowerFirst(textHint(f))
	case f.MinLength != nil && n < *f.MinLength, f.MaxLength != nil && n > *f.MaxLength:
		return "Please " + lowerFirst(textHint(f))
	}
	var ok bool
	switch f.Format {
	case "":
		ok = true
	case "email":
		a, err := mail.ParseAddress(s)
		ok = err == nil && a.Address == s
	case "uri":
		u, err := url.Parse(s)
		ok = err == nil && u.Scheme != "" && (u.Host != "" || u.Opaque != "")
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		ok = err == nil
	case "date-time":
		_, err := time.Parse(time.RFC3339, s)
		ok = err == nil
	default:
		ok = true
	}
	if !ok {
		return "Please " + lowerFirst(textHint(f))
	}
	return ""
}

// checkNumber reads s as the number field f asks for.
func checkNumber(f message.Field, s string) (any, string) {
	again := "Please " + lowerFirst(textHint(f))
	var x float64
	var v any
	if f.Kind == message.FieldInteger {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, again
		}
		x, v = float64(n), n
	} else {
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || n != n || n > 1.7e308 || n < -1.7e308 {
			return nil, again
		}
		x, v = n, n
	}
	if (f.Minimum != nil && x < *f.Minimum) || (f.Maximum != nil && x > *f.Maximum) {
		return nil, again
	}
	return v, ""
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
