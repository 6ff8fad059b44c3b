package main

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/registry"
)

// pressUsage is how to press a control of a question make run printed.
var pressUsage = "usage: parley-local press " + chatPlatforms() + " CHAT MESSAGE DATA [USER]"

// pressHint is what make run prints under a question's control: the
// command that presses it, ready to paste.
func pressHint(d fakeapi.Delivery, c fakeapi.Control) string {
	p := fakeplatform.PressOf(d, c)
	switch d.Platform {
	case message.Telegram, message.Slack, message.WhatsApp, message.Discord, message.LINE, message.GoogleChat:
		return fmt.Sprintf("press: go run ./localstack/cmd/parley-local press %s %s %s '%s'", d.Platform, p.Chat, p.Message, p.Data)
	case message.Teams:
		return fmt.Sprintf("press: go run ./localstack/cmd/parley-local press teams '%s' %s '%s'", p.Chat, p.Message, p.Data)
	}
	return ""
}

var pressSeq atomic.Int64

// press posts, signed as its platform signs it, the webhook a person's press
// of the control carrying data on message (chat's) sends: a Telegram
// callback_query, a Slack block_actions, a Discord component interaction, a
// LINE postback, a WhatsApp button reply, a Teams Action.Submit, a Google
// Chat CARD_CLICKED (fakeplatform.Signer.Press, which the console presses
// through too). USER is who presses: Ada by default, the sample identity of
// events/README.md.
func press(ctx context.Context, out io.Writer, getenv config.Getenv, args []string) error {
	fs := flags("press", out)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if args = fs.Args(); len(args) < 4 || len(args) > 5 {
		return fmt.Errorf("%s", pressUsage)
	}
	p := fakeplatform.Pressed{Platform: message.Platform(args[0]), Chat: args[1], Message: args[2], Data: args[3]}
	if len(args) == 5 {
		p.User = args[4]
	}
	if _, ok := registry.Lookup(p.Platform); !ok {
		return fmt.Errorf("%s", pressUsage)
	}
	now := time.Now()
	w, err := signer(getenv).Press(p, now, now.UnixNano()/1000+pressSeq.Add(1))
	if err != nil {
		return err
	}
	return send(ctx, out, getenv, string(p.Platform), w.Header, w.Body)
}
