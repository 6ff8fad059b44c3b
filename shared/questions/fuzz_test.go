package questions_test

import (
	"testing"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/questions"
	"github.com/parleyhq/parley/shared/store"
)

// FuzzPressAndText feeds any press data, select values and message text to
// an open question: nothing panics, only the owner changes anything, a
// change keeps the record's identity, and an answer closes the question.
func FuzzPressAndText(f *testing.F) {
	q := asked(form())
	f.Add(q.Short+":0:1", "", "42", "hello")
	f.Add(q.Short+":0:s", q.Short+":0:9", "42", "1 2 3")
	f.Add(q.Short+":x", "", "43", "skip")
	f.Add(q.Short+":1:d", "", "42", "done")
	f.Add(":::", "\x00", "", "")
	f.Add(q.Short+":-1:-1", q.Short+":0:0", "42", "99999999999999999999")
	f.Fuzz(func(t *testing.T, data, value, who, text string) {
		for _, cur := range []store.Question{q, press(t, q, "Window", "42", "first").Next} {
			outs := []questions.Outcome{questions.Press(cur, message.Press{Data: data, Values: []string{value}}, who, "e")}
			if o, ok := questions.Text(cur, text, who, "e"); ok {
				outs = append(outs, o)
			}
			for _, o := range outs {
				if !o.Write {
					if o.Answer != nil && cur.State == store.QuestionOpen {
						t.Fatalf("an answer without a write: %+v", o)
					}
					continue
				}
				if who != cur.Owner {
					t.Fatalf("%q changed a question owned by %q", who, cur.Owner)
				}
				n := o.Next
				if n.ID != cur.ID || n.Thread != cur.Thread || n.Version != cur.Version || n.Owner != cur.Owner {
					t.Fatalf("the record changed identity: %+v", n)
				}
				if (o.Answer != nil) != (n.State != store.QuestionOpen) {
					t.Fatalf("answer %+v with state %s", o.Answer, n.State)
				}
			}
		}
	})
}
