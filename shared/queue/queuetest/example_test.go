package queuetest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/parleyhq/parley/shared/queue"
	"github.com/parleyhq/parley/shared/queue/queuetest"
)

// Several messages of one group arrive in one batch, in order, before the
// next group's: what real SQS FIFO does and fauxqs never does.
func Example() {
	clock := queuetest.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	q := queuetest.New(queuetest.Options{Now: clock.Now})
	ctx := context.Background()
	for _, m := range []queue.Message{
		{Group: "telegram:bot1:42", Dedup: "evt#1", Body: []byte("hello")},
		{Group: "telegram:bot1:42", Dedup: "evt#2", Body: []byte("are you there?")},
		{Group: "slack:T1:C7", Dedup: "evt#3", Body: []byte("deploy done")},
		{Group: "telegram:bot1:42", Dedup: "evt#4", Body: []byte("never mind")},
	} {
		if err := q.Send(ctx, m); err != nil {
			fmt.Println(err)
		}
	}
	for _, r := range q.Receive(10) {
		fmt.Printf("%s %q (receive %s)\n", r.Attributes["MessageGroupId"], r.Body, r.Attributes["ApproximateReceiveCount"])
	}
	// Output:
	// telegram:bot1:42 "hello" (receive 1)
	// telegram:bot1:42 "are you there?" (receive 1)
	// telegram:bot1:42 "never mind" (receive 1)
	// slack:T1:C7 "deploy done" (receive 1)
}
