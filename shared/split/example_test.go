package split_test

import (
	"fmt"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/split"
)

func ExampleText() {
	parts := split.Text("first paragraph\n\nsecond paragraph", message.Capabilities{TextLimit: 20, Counting: message.CountRunes})
	fmt.Printf("%q\n", parts)
	// Output:
	// ["first paragraph\n\n" "second paragraph"]
}

func ExampleCount() {
	// Telegram counts UTF-16 code units: the emoji is a surrogate pair.
	fmt.Println(split.Count("ok 👍", message.CountUTF16), split.Count("ok 👍", message.CountRunes))
	// Output:
	// 5 4
}
