package fakegooglechat

import (
	"encoding/json"
	"strings"
	"time"
)

// The people of events/googlechat.
const (
	Ada   = "users/100000000000000000042"
	Grace = "users/100000000000000000043"
)

// space is an event's space: a direct message for "spaces/dm…", a
// threaded space otherwise.
func space(name string) map[string]any {
	if strings.HasPrefix(name, "spaces/dm") {
		return map[string]any{"name": name, "type": "DM", "spaceType": "DIRECT_MESSAGE", "singleUserBotDm": true}
	}
	return map[string]any{"name": name, "type": "ROOM", "spaceType": "SPACE", "spaceThreadingState": "THREADED_MESSAGES"}
}

func user(name string) map[string]any {
	display := map[string]string{Ada: "Ada Lovelace", Grace: "Grace Hopper"}[name]
	return map[string]any{"name": name, "displayName": display, "type": "HUMAN"}
}

// Message is the MESSAGE event of from's text in spaceName (in thread
// when set), the message named id.
func Message(spaceName, thread, from, id, text string, at time.Time) []byte {
	msg := map[string]any{
		"name": spaceName + "/messages/" + id, "sender": user(from), "createTime": at.UTC().Format(time.RFC3339Nano),
		"text": text, "argumentText": text, "space": space(spaceName),
	}
	if thread != "" {
		msg["thread"] = map[string]string{"name": spaceName + "/threads/" + thread}
	}
	b, _ := json.Marshal(map[string]any{
		"type": "MESSAGE", "eventTime": at.UTC().Format(time.RFC3339Nano), "message": msg,
		"user": user(from), "space": space(spaceName), "common": map[string]any{"hostApp": "CHAT"},
	})
	return b
}

// Click is the CARD_CLICKED event of from clicking a control of Parley's
// card on message (a message name) whose data is data; values are the
// card's selection, when it has one.
func Click(message, thread, from, data string, values []string, at time.Time) []byte {
	spaceName, _, _ := strings.Cut(message, "/messages/")
	msg := map[string]any{"name": message, "sender": map[string]string{"name": "users/app", "type": "BOT"}, "space": space(spaceName)}
	if thread != "" {
		msg["thread"] = map[string]string{"name": spaceName + "/threads/" + thread}
	}
	common := map[string]any{"hostApp": "CHAT", "invokedFunction": "parley", "parameters": map[string]string{"data": data}}
	if len(values) > 0 {
		common["formInputs"] = map[string]any{"parley_choice": map[string]any{"stringInputs": map[string]any{"value": values}}}
	}
	b, _ := json.Marshal(map[string]any{
		"type": "CARD_CLICKED", "eventTime": at.UTC().Format(time.RFC3339Nano), "message": msg, "user": user(from),
		"space": space(spaceName), "common": common,
		"action": map[string]any{"actionMethodName": "parley", "parameters": []map[string]string{{"key": "data", "value": data}}},
	})
	return b
}
