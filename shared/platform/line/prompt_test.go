package line

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/message"
)

func choices(labels ...string) []message.Choice {
	out := make([]message.Choice, len(labels))
	for i, l := range labels {
		out[i] = message.Choice{Label: l, Data: "q1:0:" + strconv.Itoa(i)}
	}
	return out
}

func button(label, data, display string) LineQuickReplyItem {
	return LineQuickReplyItem{Type: "action", Action: LinePostbackAction{Type: "postback", Label: label, Data: data, DisplayText: display}}
}

func TestQuickReplies(t *testing.T) {
	t.Parallel()
	skip := message.Choice{Label: "Skip", Data: "q1:x"}
	done := message.Choice{Label: "Done", Data: "q1:0:d"}
	many := make([]string, 14)
	for i := range many {
		many[i] = "City " + strconv.Itoa(i+1)
	}
	long := "Lisbon, the old town by the river"
	cases := []struct {
		name     string
		p        message.Prompt
		text     string
		items    []LineQuickReplyItem
		noQuick  bool
		quote    string
		wantText string
	}{
		{name: "Closed", p: message.Prompt{Text: "Which city? Lisbon"}, text: "Which city? Lisbon", noQuick: true},
		{
			name: "OptionsThenActions", p: message.Prompt{Text: "Which city?", Options: choices("Lisbon", "Porto"), Actions: []message.Choice{skip}},
			text:  "Which city?",
			items: []LineQuickReplyItem{button("Lisbon", "q1:0:0", "Lisbon"), button("Porto", "q1:0:1", "Porto"), button("Skip", "q1:x", "Skip")},
		},
		{
			// 13 buttons fit: 12 options and Skip.
			name: "ThirteenFit", p: message.Prompt{Text: "Pick", Options: choices(many[:12]...), Actions: []message.Choice{skip}},
			text: "Pick",
		},
		{
			// 14 do not: the numbered form, answered by number, and the
			// actions as buttons.
			name: "FourteenAreNumbered", p: message.Prompt{Text: "Pick", Options: choices(many[:13]...), Actions: []message.Choice{skip}},
			text:  message.Prompt{Text: "Pick", Options: choices(many[:13]...), Actions: []message.Choice{skip}}.FallbackText(),
			items: []LineQuickReplyItem{button("Skip", "q1:x", "Skip")},
		},
		{
			name: "MultiSelectIsNumbered", p: message.Prompt{Text: "Which days?", Multi: true, Options: []message.Choice{{Label: "Mon", Data: "q1:0:0", Selected: true}, {Label: "Tue", Data: "q1:0:1"}}, Actions: []message.Choice{done}},
			text:  "Which days?\n\n1. Mon ✓\n2. Tue\n\nReply with the numbers you choose, like 1 3.\nOr reply done.",
			items: []LineQuickReplyItem{button("Done", "q1:0:d", "Done")},
		},
		{
			name: "LongLabelIsCut", p: message.Prompt{Text: "Where?", Options: choices(long, "Porto")},
			text:  "Where?",
			items: []LineQuickReplyItem{button("Lisbon, the old tow…", "q1:0:0", long), button("Porto", "q1:0:1", "Porto")},
		},
		{
			// Cut, the two read the same: numbered, with the full labels
			// in the text.
			name: "CutLabelsThatClashAreNumbered", p: message.Prompt{Text: "Where?", Options: choices(long, "Lisbon, the old town by the sea")},
			text: "Where?\n\n1. " + long + "\n2. Lisbon, the old town by the sea\n\nReply with a number.",
			items: []LineQuickReplyItem{
				button("1. Lisbon, the old…", "q1:0:0", long),
				button("2. Lisbon, the old…", "q1:0:1", "Lisbon, the old town by the sea"),
			},
		},
		{
			name: "EmptyLabelShowsItsNumber", p: message.Prompt{Text: "?", Options: []message.Choice{{Data: "q1:0:0"}}},
			text: "?", items: []LineQuickReplyItem{button("#1", "q1:0:0", "#1")},
		},
		{
			name: "Quoted", p: message.Prompt{Text: "Sure?", Options: choices("Yes")}, quote: "qt1",
			text: "Sure?", items: []LineQuickReplyItem{button("Yes", "q1:0:0", "Yes")},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msg, err := promptMessage(tc.p, tc.quote)
			if err != nil {
				t.Fatal(err)
			}
			if msg.Type != "text" || msg.Text != tc.text || msg.QuoteToken != tc.quote {
				t.Fatalf("message %+v\nwant text %q", msg, tc.text)
			}
			if tc.noQuick {
				if msg.QuickReply != nil {
					t.Fatalf("quick replies on a closed question: %+v", msg.QuickReply)
				}
				return
			}
			if msg.QuickReply == nil || len(msg.QuickReply.Items) > MaxQuickReplies {
				t.Fatalf("quick reply %+v", msg.QuickReply)
			}
			for _, it := range msg.QuickReply.Items {
				if n := utf8.RuneCountInString(it.Action.Label); n > MaxLabel || n == 0 {
					t.Fatalf("label %q is %d characters", it.Action.Label, n)
				}
			}
			if tc.items != nil && !reflect.DeepEqual(msg.QuickReply.Items, tc.items) {
				t.Fatalf("items\n got %+v\nwant %+v", msg.QuickReply.Items, tc.items)
			}
		})
	}
}

func TestQuickReplyDataLimits(t *testing.T) {
	t.Parallel()
	for name, data := range map[string]string{"Empty": "", "Over300": strings.Repeat("😀", 151)} {
		_, err := promptMessage(message.Prompt{Text: "?", Options: []message.Choice{{Label: "a", Data: data}}}, "")
		classOf(t, err, message.FailInvalidPayload)
		_ = name
	}
	if _, err := promptMessage(message.Prompt{Text: "?", Options: []message.Choice{{Label: "a", Data: strings.Repeat("😀", 150)}}}, ""); err != nil {
		t.Fatalf("300 UTF-16 units of data refused: %v", err)
	}
}
