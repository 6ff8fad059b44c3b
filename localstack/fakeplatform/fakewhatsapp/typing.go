package fakewhatsapp

import (
	"encoding/json"
	"net/http"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/message"
)

// read takes a mark-as-read, with or without a typing indicator:
// {"messaging_product":"whatsapp","status":"read","message_id":"<wamid>",
// "typing_indicator":{"type":"text"}}. It names the person's message, no
// recipient, and is answered {"success":true}. An indicator is recorded as
// the action "typing" for the message, a plain read as "read".
// https://developers.facebook.com/documentation/business-messaging/whatsapp/typing-indicators/
func (a *API) read(w http.ResponseWriter, phone string, args map[string]json.RawMessage) {
	var ind struct {
		Type string `json:"type"`
	}
	raw, typing := args["typing_indicator"]
	switch {
	case !digits(phone) || (a.phone != "" && phone != a.phone):
		fail(w, 400, 100, 33, "Unsupported post request. Object with ID '"+phone+"' does not exist, cannot be loaded due to missing permissions, or does not support this operation.", "")
		return
	case fakeapi.Str(args, "messaging_product") != "whatsapp":
		invalid(w, 100, "The parameter messaging_product is required.")
		return
	case fakeapi.Str(args, "status") != "read":
		invalid(w, 100, "Param status must be one of {read}.")
		return
	case fakeapi.Str(args, "message_id") == "":
		invalid(w, 100, "The parameter message_id is required.")
		return
	case typing && (json.Unmarshal(raw, &ind) != nil || ind.Type != "text"):
		invalid(w, 100, "Param typing_indicator['type'] must be one of {text}.")
		return
	}
	action := "read"
	if typing {
		action = "typing"
	}
	a.Recorder().Act(fakeapi.Action{Platform: message.WhatsApp, Action: action, MessageID: fakeapi.Str(args, "message_id")})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]bool{"success": true})
}
