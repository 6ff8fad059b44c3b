package ingress_test

import (
	"time"

	"github.com/parleyhq/parley/shared/message"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// humanEvent is a Telegram private-chat message.
func humanEvent(id string) message.Event {
	th := message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"}
	return message.Event{
		Platform: message.Telegram, Account: "7000000001", EventID: id, Kind: message.KindMessage,
		Thread: th, Sender: message.Sender{ID: "42", Name: "Ada"}, Text: "hello " + id,
		MessageID: "m" + id, ChatType: message.ChatPrivate, Time: t0,
	}
}

// proactiveEvent is a Standard Webhooks event for the same conversation.
func proactiveEvent(id string) message.Event {
	ev := humanEvent(id)
	ev.Platform, ev.Account, ev.Kind = message.Events, "events", message.KindProactive
	ev.Sender = message.Sender{ID: "ci", IsBot: true}
	ev.Data = map[string]any{"build": "failed", "n": 3.0}
	return ev
}
