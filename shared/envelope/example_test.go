package envelope_test

import (
	"errors"
	"fmt"

	"github.com/parleyhq/parley/shared/envelope"
	"github.com/parleyhq/parley/shared/message"
)

func ExampleBuild() {
	body := []byte(`{"schema": "openab.turn.v1",
	  "messages": [{"id": "bubble_1", "text": "on it"},
	               {"id": "bubble_2", "text": "your flight moved to 8pm\ngate B12"}],
	  "next": {"type": "stop"}}`)
	telegram := message.Capabilities{TextLimit: 4096, Counting: message.CountUTF16}

	plan, err := envelope.Build(envelope.Reply{Body: body, ContentType: "application/json"}, envelope.Config{}, telegram)
	if err != nil {
		panic(err)
	}
	fmt.Println(plan.Outcome, plan.Next.Type)
	for _, u := range plan.Units {
		fmt.Printf("%s %q\n", u.ID, u.Text)
	}
	// Output:
	// envelope stop
	// bubble_1#1 "on it"
	// bubble_2#1 "your flight moved to 8pm\ngate B12"
}

func ExampleBuild_fallback() {
	// An agent that chatted before its envelope, which was then cut off.
	body := []byte("Let me check that for you.\n\n{\"schema\":\"openab.turn.v1\",\"messages\":[{\"id\":\"b1\",\"text\":\"your fl")
	plan, _ := envelope.Build(envelope.Reply{Body: body}, envelope.Config{}, message.Capabilities{TextLimit: 2000})

	var pe *envelope.ParseError
	errors.As(plan.Problem, &pe)
	fmt.Println(plan.Outcome, pe.Reason)
	for _, u := range plan.Units {
		fmt.Printf("%s %q\n", u.ID, u.Text)
	}
	// Output:
	// fallback_text embedded_envelope
	// fallback#1 "Let me check that for you."
}

func ExampleBuild_limit() {
	body := []byte(`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"1"},{"id":"b","text":"2"},{"id":"c","text":"3"}]}`)
	_, err := envelope.Build(envelope.Reply{Body: body}, envelope.Config{MaxBubbles: 2}, message.Capabilities{})
	var lim *envelope.LimitError
	if errors.As(err, &lim) {
		fmt.Println(lim.Limit, lim.Got, lim.Max)
	}
	// Output:
	// max_bubbles 3 2
}
