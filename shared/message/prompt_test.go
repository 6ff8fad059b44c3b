package message_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/parleyhq/parley/shared/message"
)

func TestPromptFallbackText(t *testing.T) {
	t.Parallel()
	single := message.Prompt{Text: "Which seat?", Options: []message.Choice{{Label: "Window", Data: "a"}, {Label: "Aisle", Data: "b"}},
		Actions: []message.Choice{{Label: "Skip", Data: "s"}}}
	if got, want := single.FallbackText(), "Which seat?\n\n1. Window\n2. Aisle\n\nReply with a number.\nOr reply skip."; got != want {
		t.Errorf("single:\n%s\nwant\n%s", got, want)
	}
	multi := message.Prompt{Text: "Toppings?", Multi: true, Options: []message.Choice{{Label: "Olives", Data: "a", Selected: true}, {Label: "Basil", Data: "b"}},
		Actions: []message.Choice{{Label: "Done", Data: "d"}}}
	if got, want := multi.FallbackText(), "Toppings?\n\n1. Olives ✓\n2. Basil\n\nReply with the numbers you choose, like 1 3.\nOr reply done."; got != want {
		t.Errorf("multi:\n%s\nwant\n%s", got, want)
	}
	closed := message.Prompt{Text: "Which seat? Window"}
	if !closed.Closed() || closed.FallbackText() != "Which seat? Window" {
		t.Errorf("closed prompt renders %q", closed.FallbackText())
	}
}

func TestPromptRoundTrip(t *testing.T) {
	t.Parallel()
	p := message.Prompt{Text: "x", Multi: true, Select: "m", Options: []message.Choice{{Label: "A", Data: "1", Selected: true}}, Actions: []message.Choice{{Label: "Done", Data: "d"}}}
	b, err := json.Marshal(message.Content{Prompt: &p})
	if err != nil {
		t.Fatal(err)
	}
	var c message.Content
	if err := json.Unmarshal(b, &c); err != nil || c.Kind() != message.ContentPrompt || !reflect.DeepEqual(*c.Prompt, p) {
		t.Fatalf("round trip: %s -> %+v, %v", b, c, err)
	}
}
