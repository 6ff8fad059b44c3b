package operator

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Text rendering for a terminal. Anything an agent or a sender wrote, and
// anything read from a record or a line, is printed quoted (Go syntax:
// control characters escaped), so it cannot move the cursor, recolour the
// terminal or pass for Parley's own output.

func quote(s string) string { return strconv.Quote(s) }

// inert is s with control characters escaped, unquoted: for values that
// are Parley's own words but may carry a record's or a line's text.
func inert(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "                        "
	}
	return t.UTC().Format("2006-01-02 15:04:05.000Z")
}

// WriteTimeline prints a message's timeline.
func WriteTimeline(w io.Writer, tl Timeline) {
	fmt.Fprintf(w, "message %s\n", inert(tl.CorrelationID))
	fmt.Fprintf(w, "  correlation id  %s (every log line of it: event_key)\n", inert(tl.CorrelationID))
	fmt.Fprintf(w, "  intent / turn   %s\n", tl.IntentID)
	if tl.Thread != "" {
		fmt.Fprintf(w, "  thread          %s\n", inert(tl.Thread))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range tl.Steps {
		src := s.Source
		if s.Function != "" {
			src += ":" + s.Function
		}
		detail := s.Detail
		if detail == "" {
			detail = fieldsText(s.Fields)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", stamp(s.At), inert(s.Name), src, inert(detail))
	}
	_ = tw.Flush()
	if len(tl.Units) > 0 {
		fmt.Fprintln(w, "\n  units")
		for _, u := range tl.Units {
			mark := ""
			if u.NeedsOperator {
				mark = "  ← needs an operator: parley resend|abandon " + u.Key
			}
			fmt.Fprintf(w, "    %s  %s  %s%s\n", u.Key, u.State, quote(u.Text), mark)
			if len(u.Controls) > 0 {
				var cs []string
				for _, c := range u.Controls {
					cs = append(cs, quote(c))
				}
				fmt.Fprintf(w, "      controls %s\n", strings.Join(cs, " "))
			}
		}
	}
	for _, n := range tl.Notes {
		fmt.Fprintf(w, "\n  note: %s", inert(n))
	}
	if len(tl.Notes) > 0 {
		fmt.Fprintln(w)
	}
}

func fieldsText(f map[string]any) string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, f[k]))
	}
	return strings.Join(parts, " ")
}

// WriteAttention prints the attention list, oldest first.
func WriteAttention(w io.Writer, items []Item, notes []string) {
	if len(items) == 0 {
		fmt.Fprintln(w, "nothing needs a person")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(items) > 0 {
		fmt.Fprintln(tw, "SINCE\tKIND\tKEY\tCORRELATION ID\tDETAIL")
	}
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", stamp(it.Since), it.Kind, inert(it.Key), inert(it.CorrelationID), inert(it.Detail))
	}
	_ = tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, "note:", inert(n))
	}
}

// WriteDecision prints what a resend or an abandon did.
func WriteDecision(w io.Writer, d Decision) {
	fmt.Fprintf(w, "%s: unit %s (%s → %s)\n  %s\n  correlation id %s\n", d.Outcome, d.Unit, d.Before, d.After, d.Detail, inert(d.CorrelationID))
}

// WriteDeadLetters prints a dead-letter queue's messages.
func WriteDeadLetters(w io.Writer, queue string, msgs []DLQMessage, p Peek) {
	fmt.Fprintf(w, "%s dead-letter queue: %d message(s)", queue, p.Visible)
	if p.Hidden > 0 {
		fmt.Fprintf(w, ", %d of them behind others of their conversations (not readable until those go)", p.Hidden)
	}
	fmt.Fprintln(w)
	if len(msgs) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEAD-LETTERED\tAGE\tMESSAGE ID\tCORRELATION ID\tDETAIL")
	for _, m := range msgs {
		age := "undated"
		if !m.Made.IsZero() {
			age = m.Age.Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", stamp(m.DeadLetteredAt), age, m.MessageID, inert(m.CorrelationID), inert(m.Detail()))
	}
	_ = tw.Flush()
}

// WriteRedrive prints what a redrive did, and what stopped it.
func WriteRedrive(w io.Writer, r RedriveResult) {
	fmt.Fprintf(w, "%s: %s\n", r.Outcome, inert(r.Detail))
	if r.TaskHandle != "" {
		fmt.Fprintf(w, "  task %s\n", r.TaskHandle)
	}
	for _, m := range r.Refused {
		age := "undated"
		if !m.Made.IsZero() {
			age = m.Age.Round(time.Second).String() + " old"
		}
		fmt.Fprintf(w, "  refused %s (%s): %s %s\n", m.MessageID, age, inert(m.CorrelationID), inert(m.Problem))
	}
}

// WriteStatus prints the stack at a glance.
func WriteStatus(w io.Writer, st Status) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tVISIBLE\tIN FLIGHT\tDELAYED\tOLDEST\tDEAD LETTERS")
	for _, q := range st.Queues {
		oldest := q.OldestAgeNote
		if q.OldestAge != nil {
			oldest = q.OldestAge.String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%d\n", q.Name, q.Visible, q.InFlight, q.Delayed, oldest, q.DeadLetters)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\nunits held in unknown_after_send: %d   failed units: %d   (parley attention lists them)\n\n", st.HeldUnits, st.FailedUnits)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "FUNCTION\tERRORS (last %s)\tNOTE\n", st.Window)
	for _, f := range st.Functions {
		n := "-"
		switch {
		case f.Errors != nil:
			n = strconv.Itoa(*f.Errors)
		case f.LogErrors != nil:
			n = strconv.Itoa(*f.LogErrors) + " in the log"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, n, f.Note)
	}
	_ = tw.Flush()
	for _, n := range st.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}
