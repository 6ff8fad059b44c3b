package faketeams

import (
	"encoding/json"
	"strings"
	"time"
)

// The people of events/teams.
const (
	Ada   = "29:1ada00000000000000000000000000000000000000000000000000000000000042"
	Grace = "29:1grace000000000000000000000000000000000000000000000000000000000043"
)

// WithServiceURL is body, an activity, with its serviceUrl replaced by
// svc (the samples name Microsoft's; a local run answers through the
// fake), and so is the root of every inline image's contentUrl on it.
// Other bytes stay as they are.
func WithServiceURL(body []byte, svc string) []byte {
	var head struct {
		ServiceURL string `json:"serviceUrl"`
	}
	if json.Unmarshal(body, &head) != nil || head.ServiceURL == "" {
		return body
	}
	old, _ := json.Marshal(head.ServiceURL)
	now, _ := json.Marshal(svc)
	out := strings.Replace(string(body), `"serviceUrl":`+string(old), `"serviceUrl":`+string(now), 1)
	// An inline image's contentUrl is on the same connector.
	oldRoot, newRoot := strings.TrimRight(strings.Trim(string(old), `"`), "/")+"/v3/attachments/", strings.TrimRight(strings.Trim(string(now), `"`), "/")+"/v3/attachments/"
	return []byte(strings.ReplaceAll(out, `"contentUrl":"`+oldRoot, `"contentUrl":"`+newRoot))
}

// Submit is the message activity Teams sends when from presses an
// Action.Submit of the card activity replyTo in conversation (a channel
// thread's id holds ";messageid="): the card's data {"parley": data}, and
// the chosen values of its choice set, comma-joined, when there are any.
func Submit(svc, conversation, from, replyTo, id, data string, values []string, at time.Time) []byte {
	value := map[string]string{"parley": data}
	if len(values) > 0 {
		value["parley_choice"] = strings.Join(values, ",")
	}
	kind := "personal"
	switch {
	case strings.Contains(conversation, ";messageid="):
		kind = "channel"
	case strings.HasPrefix(conversation, "19:"):
		kind = "groupChat"
	}
	b, _ := json.Marshal(map[string]any{
		"type": "message", "id": id, "timestamp": at.UTC().Format(time.RFC3339Nano), "channelId": "msteams", "serviceUrl": svc,
		"from":         map[string]string{"id": from, "name": nameOf(from)},
		"conversation": map[string]any{"id": conversation, "conversationType": kind, "tenantId": TenantID, "isGroup": kind != "personal"},
		"recipient":    map[string]string{"id": "28:" + AppID, "name": "Parley"},
		"channelData":  map[string]any{"tenant": map[string]string{"id": TenantID}, "source": map[string]string{"name": "message"}},
		"replyToId":    replyTo,
		"value":        value,
	})
	return b
}

// Message is a person's text message activity in conversation.
func Message(svc, conversation, from, id, text string, at time.Time) []byte {
	var act map[string]any
	_ = json.Unmarshal(Submit(svc, conversation, from, "", id, "", nil, at), &act)
	delete(act, "value")
	delete(act, "replyToId")
	act["text"], act["textFormat"] = text, "plain"
	b, _ := json.Marshal(act)
	return b
}

func nameOf(id string) string {
	switch id {
	case Ada:
		return "Ada Lovelace"
	case Grace:
		return "Grace Hopper"
	}
	return "Someone"
}
