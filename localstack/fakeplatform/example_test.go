package fakeplatform_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/telegram"
)

// A fake Bot API behind an httptest server, a real Telegram client sending
// two bubbles to it, and one flood-control fault in between.
func Example() {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	fake := fakeplatform.New(fakeplatform.Options{
		TelegramToken: "7000000001:AAFakeToken",
		Now:           func() time.Time { return now },
		Out:           os.Stdout,
	})
	srv := httptest.NewServer(fake.Handler())
	defer srv.Close()
	tg := &telegram.Client{Token: "7000000001:AAFakeToken", BaseURL: srv.URL + "/telegram"}

	chat := message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"}
	ctx := context.Background()
	_, _ = tg.Send(ctx, message.Outgoing{Thread: chat, Content: message.Text("on it")})

	fake.Inject(fakeplatform.Fault{Platform: message.Telegram, Status: 429, RetryAfter: 2 * time.Second})
	_, err := tg.Send(ctx, message.Outgoing{Thread: chat, Content: message.Text("your flight moved to 8pm")})
	fmt.Println(message.ClassOf(err), err)

	now = now.Add(1200 * time.Millisecond)
	rc, _ := tg.Send(ctx, message.Outgoing{Thread: chat, Content: message.Text("your flight moved to 8pm")})
	fmt.Println(rc.MessageIDs, fake.Calls())
	// Output:
	// [+0.00s] telegram chat=42 | on it
	// rate_limit telegram sendMessage: rate_limit: Too Many Requests: retry after 2 (retry after 2s)
	// [+1.20s] telegram chat=42 | your flight moved to 8pm
	// [2] 3
}
