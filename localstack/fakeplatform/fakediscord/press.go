package fakediscord

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
)

// Press is the MESSAGE_COMPONENT interaction (type 3) Discord sends the
// endpoint when user presses a control on the bot's message messageID in
// channel, at at: in guild, or in the user's DM with the bot when guild is
// "". data is what PressData names the control by: a button's custom_id, or
// "<select custom_id>=<value>[,<value>…]" for options of a string select.
// The interaction has a fresh id (a snowflake of at) and a token the fake
// honours for 15 minutes; sign it with Sign.
func Press(guild, channel, user, messageID, data string, at time.Time) []byte {
	id := Snowflake(at)
	d := map[string]any{"component_type": 2, "custom_id": data}
	if custom, values, ok := strings.Cut(data, "="); ok {
		d = map[string]any{"component_type": 3, "custom_id": custom, "values": strings.Split(values, ",")}
	}
	person := map[string]any{"id": user, "username": "ada", "global_name": "Ada", "discriminator": "0"}
	in := map[string]any{
		"type": 3, "version": 1, "id": id, "application_id": ApplicationID,
		"token":      PressToken(ApplicationID, id, channel, messageID),
		"channel_id": channel, "data": d,
		"message": map[string]any{"id": messageID, "channel_id": channel, "author": map[string]any{"id": ApplicationID, "bot": true}},
	}
	if guild != "" {
		in["guild_id"] = guild
		in["channel"] = map[string]any{"id": channel, "type": 0, "guild_id": guild}
		in["member"] = map[string]any{"user": person, "nick": nil}
	} else {
		in["channel"] = map[string]any{"id": channel, "type": 1}
		in["user"] = person
	}
	body, _ := json.Marshal(in) // maps of strings and numbers: cannot fail
	return body
}

// PressData is how Press names control c of delivered message d: a
// button's custom_id, or, for an option of a string select, the select's
// custom_id and the option's value, "<custom_id>=<value>" (Discord sends
// both). make run prints it under each control.
func PressData(d fakeapi.Delivery, c fakeapi.Control) string {
	var rows []component
	if json.Unmarshal(d.Args["components"], &rows) != nil {
		return c.Data
	}
	for _, row := range rows {
		for _, comp := range row.Components {
			if comp.Type != 3 || comp.CustomID == nil {
				continue
			}
			for _, o := range comp.Options {
				if o.Value == c.Data {
					return *comp.CustomID + "=" + c.Data
				}
			}
		}
	}
	return c.Data
}
