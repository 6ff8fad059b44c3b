package fakediscord

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Message flags Discord takes from an app: SUPPRESS_EMBEDS and
// SUPPRESS_NOTIFICATIONS anywhere, EPHEMERAL on interaction responses and
// follow-ups only.
const (
	flagSuppressEmbeds        = 1 << 2
	flagEphemeral             = 1 << 6
	flagSuppressNotifications = 1 << 12
)

// validate checks a message body (a channel message, a follow-up, an edit)
// as Discord does, and returns the message it makes, or answers the
// refusal: 50035 Invalid Form Body naming the field, or 50006 for a
// message of no content, no components and no files.
func validate(w http.ResponseWriter, args map[string]json.RawMessage, webhook bool) (Message, bool) {
	var m Message
	if raw, ok := args["content"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &m.Content) != nil {
			formError(w, "content", "STRING_TYPE_CONVERT", "Could not interpret the value as string.")
			return Message{}, false
		}
		if utf8.RuneCountInString(m.Content) > TextLimit {
			formError(w, "content", "BASE_TYPE_MAX_LENGTH", "Must be "+strconv.Itoa(TextLimit)+" or fewer in length.")
			return Message{}, false
		}
	}
	m.Components = json.RawMessage("[]")
	var rows []component
	if raw, ok := args["components"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &rows) != nil {
			formError(w, "components", "BASE_TYPE_ARRAY", "Must be an array.")
			return Message{}, false
		}
		if field, code, msg := checkComponents(rows); field != "" {
			formError(w, field, code, msg)
			return Message{}, false
		}
		m.Components = raw
	}
	if raw, ok := args["allowed_mentions"]; ok && string(raw) != "null" {
		if field, msg := checkAllowedMentions(raw); field != "" {
			formError(w, field, "ALLOWED_MENTIONS_INVALID", msg)
			return Message{}, false
		}
	}
	if raw, ok := args["nonce"]; ok && string(raw) != "null" {
		var s string
		var n json.Number
		switch {
		case json.Unmarshal(raw, &s) == nil:
			if utf8.RuneCountInString(s) > 25 {
				formError(w, "nonce", "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
				return Message{}, false
			}
		case json.Unmarshal(raw, &n) == nil:
		default:
			formError(w, "nonce", "NONCE_TYPE_INVALID", "Must be a string or an integer.")
			return Message{}, false
		}
	}
	if raw, ok := args["enforce_nonce"]; ok {
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			formError(w, "enforce_nonce", "BASE_TYPE_BOOLEAN", "Must be either true or false.")
			return Message{}, false
		}
	}
	if raw, ok := args["flags"]; ok && string(raw) != "null" {
		allowed := flagSuppressEmbeds | flagSuppressNotifications
		if webhook {
			allowed |= flagEphemeral
		}
		if json.Unmarshal(raw, &m.Flags) != nil || m.Flags&^allowed != 0 {
			formError(w, "flags", "MESSAGE_FLAGS_INVALID", "Invalid message flags.")
			return Message{}, false
		}
	}
	var files int
	_ = json.Unmarshal(args[ArgFiles], &files)
	if strings.TrimSpace(m.Content) == "" && len(rows) == 0 && files == 0 {
		fail(w, http.StatusBadRequest, 50006, "Cannot send an empty message", nil)
		return Message{}, false
	}
	return m, true
}

// component is an action row, a button or a select, as Discord reads it.
type component struct {
	Type       int         `json:"type"`
	Components []component `json:"components"`
	Style      int         `json:"style"`
	Label      *string     `json:"label"`
	CustomID   *string     `json:"custom_id"`
	URL        string      `json:"url"`
	Emoji      any         `json:"emoji"`
	Options    []struct {
		Label   string `json:"label"`
		Value   string `json:"value"`
		Default bool   `json:"default"`
	} `json:"options"`
	MinValues *int `json:"min_values"`
	MaxValues *int `json:"max_values"`
}

// checkComponents returns the first refusal of rows: the field's path
// (components.0.components.1.label), Discord's code and message; "" when
// they are valid. Limits: 5 rows; 5 buttons or one select a row; custom_id
// 1–100 and unique; a button's label at most 80; a select's 1–25 options,
// labels and values 1–100, values unique, 0 ≤ min_values ≤ max_values ≤
// options, max_values at least 1.
func checkComponents(rows []component) (field, code, msg string) {
	if len(rows) > 5 {
		return "components", "BASE_TYPE_MAX_LENGTH", "Must be 5 or fewer in length."
	}
	ids := map[string]bool{}
	custom := func(path string, id *string) (string, string, string) {
		switch {
		case id == nil || *id == "":
			return path + ".custom_id", "BASE_TYPE_REQUIRED", "This field is required"
		case utf8.RuneCountInString(*id) > 100:
			return path + ".custom_id", "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length."
		case ids[*id]:
			return path + ".custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated"
		}
		ids[*id] = true
		return "", "", ""
	}
	for i, row := range rows {
		rp := "components." + strconv.Itoa(i)
		if row.Type != 1 {
			return rp + ".type", "UNION_TYPE_CHOICES", "Value of field \"type\" must be one of (1,)."
		}
		if len(row.Components) == 0 || len(row.Components) > 5 {
			return rp + ".components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length."
		}
		for j, c := range row.Components {
			cp := rp + ".components." + strconv.Itoa(j)
			switch c.Type {
			case 2:
				if c.Style < 1 || c.Style > 5 {
					return cp + ".style", "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3, 4, 5}."
				}
				if c.Style == 5 {
					if c.URL == "" || c.CustomID != nil {
						return cp + ".url", "BUTTON_COMPONENT_INVALID_URL", "A link button has a url and no custom_id"
					}
				} else if f, co, m := custom(cp, c.CustomID); f != "" {
					return f, co, m
				}
				if (c.Label == nil || *c.Label == "") && c.Emoji == nil {
					return cp + ".label", "BUTTON_COMPONENT_LABEL_OR_EMOJI_REQUIRED", "A button has a label or an emoji"
				}
				if c.Label != nil && utf8.RuneCountInString(*c.Label) > 80 {
					return cp + ".label", "BASE_TYPE_MAX_LENGTH", "Must be 80 or fewer in length."
				}
			case 3:
				if len(row.Components) != 1 {
					return cp, "COMPONENT_LAYOUT_WIDTH_EXCEEDED", "The specified component exceeds the maximum width"
				}
				if f, co, m := custom(cp, c.CustomID); f != "" {
					return f, co, m
				}
				if len(c.Options) == 0 || len(c.Options) > 25 {
					return cp + ".options", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 25 in length."
				}
				var values []string
				for k, o := range c.Options {
					op := cp + ".options." + strconv.Itoa(k)
					switch {
					case o.Label == "" || utf8.RuneCountInString(o.Label) > 100:
						return op + ".label", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length."
					case o.Value == "" || utf8.RuneCountInString(o.Value) > 100:
						return op + ".value", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length."
					case slices.Contains(values, o.Value):
						return op + ".value", "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED", "Select component option value cannot be duplicated"
					}
					values = append(values, o.Value)
				}
				lo, hi := 1, 1
				if c.MinValues != nil {
					lo = *c.MinValues
				}
				if c.MaxValues != nil {
					hi = *c.MaxValues
				}
				switch {
				case lo < 0 || lo > 25:
					return cp + ".min_values", "NUMBER_TYPE_MAX", "int value should be between 0 and 25."
				case hi < 1 || hi > 25 || hi > len(c.Options):
					return cp + ".max_values", "NUMBER_TYPE_MAX", "max_values is between 1 and the number of options."
				case lo > hi:
					return cp + ".min_values", "SELECT_COMPONENT_MIN_GREATER_THAN_MAX", "min_values may not exceed max_values"
				}
			default:
				return cp + ".type", "UNION_TYPE_CHOICES", "This fake takes buttons (2) and string selects (3)."
			}
		}
	}
	return "", "", ""
}

// checkAllowedMentions returns the refusal of an allowed_mentions object:
// parse holds only "roles", "users" and "everyone", users and roles are
// lists of ids, and a kind parsed cannot be listed as well.
func checkAllowedMentions(raw json.RawMessage) (field, msg string) {
	var am struct {
		Parse       *[]string `json:"parse"`
		Users       []string  `json:"users"`
		Roles       []string  `json:"roles"`
		RepliedUser *bool     `json:"replied_user"`
	}
	if json.Unmarshal(raw, &am) != nil {
		return "allowed_mentions", "Must be an object of parse, users, roles and replied_user."
	}
	if am.Parse != nil {
		for _, p := range *am.Parse {
			if p != "roles" && p != "users" && p != "everyone" {
				return "allowed_mentions.parse", "Value must be one of ('roles', 'users', 'everyone')."
			}
			if (p == "users" && len(am.Users) > 0) || (p == "roles" && len(am.Roles) > 0) {
				return "allowed_mentions", "parse:[\"" + p + "\"] and " + p + ": [ids] are mutually exclusive."
			}
		}
	}
	return "", ""
}
