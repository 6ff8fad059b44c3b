package fakediscord

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
)

// chatInputName is what Discord takes as a chat-input command's (and an
// option's) name: 1–32 letters, digits, - _ ', in lower case.
var chatInputName = regexp.MustCompile(`^[-_'\p{L}\p{N}]{1,32}$`)

// command is an application command as the bulk overwrite takes it.
type command struct {
	Type        *int   `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Options     []struct {
		Type        int    `json:"type"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Required    bool   `json:"required"`
	} `json:"options"`
	Contexts         []int `json:"contexts"`
	IntegrationTypes []int `json:"integration_types"`
}

// putCommands is the bulk overwrite of the application's global commands:
// the body is the whole list, validated as Discord does, answered with the
// commands as registered (ids, application_id, version).
func (a *API) putCommands(w http.ResponseWriter, r *http.Request) {
	app := r.PathValue("app")
	if !a.bot(w, r) {
		return
	}
	if a.opt.ApplicationID != "" && app != a.opt.ApplicationID {
		fail(w, http.StatusForbidden, 50001, "Missing Access", nil)
		return
	}
	var raws []json.RawMessage
	var cmds []command
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") ||
		json.NewDecoder(r.Body).Decode(&raws) != nil || json.Unmarshal(mustJSON(raws), &cmds) != nil {
		fail(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.", nil)
		return
	}
	if len(cmds) > 100 {
		formError(w, "_errors", "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")
		return
	}
	seen := map[string]bool{}
	var out []json.RawMessage
	for i, c := range cmds {
		path := strconv.Itoa(i)
		if field, msg := checkCommand(c); field != "" {
			formError(w, path+"."+field, "APPLICATION_COMMAND_INVALID", msg)
			return
		}
		key := strconv.Itoa(typeOf(c)) + "/" + c.Name
		if seen[key] {
			formError(w, path+".name", "APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique")
			return
		}
		seen[key] = true
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(raws[i], &fields)
		fields["id"] = mustJSON(a.nextID())
		fields["application_id"] = mustJSON(app)
		fields["version"] = mustJSON(a.nextID())
		fields["type"] = mustJSON(typeOf(c))
		out = append(out, mustJSON(fields))
	}
	a.mu.Lock()
	a.commands = out
	a.mu.Unlock()
	if out == nil {
		out = []json.RawMessage{}
	}
	fakeapi.WriteJSON(w, http.StatusOK, out)
}

func (a *API) getCommands(w http.ResponseWriter, r *http.Request) {
	if !a.bot(w, r) {
		return
	}
	if a.opt.ApplicationID != "" && r.PathValue("app") != a.opt.ApplicationID {
		fail(w, http.StatusForbidden, 50001, "Missing Access", nil)
		return
	}
	cmds := a.Commands()
	if cmds == nil {
		cmds = []json.RawMessage{}
	}
	fakeapi.WriteJSON(w, http.StatusOK, cmds)
}

func typeOf(c command) int {
	if c.Type == nil {
		return 1
	}
	return *c.Type
}

// checkCommand returns the refusal of one command: a chat-input command
// (1) has a lower-case name and a description of 1–100, options likewise,
// required ones first; a user (2) or message (3) command has a name of 1–32
// and no description.
func checkCommand(c command) (field, msg string) {
	switch t := typeOf(c); t {
	case 1:
		if !chatInputName.MatchString(c.Name) || strings.ToLower(c.Name) != c.Name {
			return "name", "Command name is invalid"
		}
		if n := utf8.RuneCountInString(c.Description); n < 1 || n > 100 {
			return "description", "Must be between 1 and 100 in length."
		}
		if len(c.Options) > 25 {
			return "options", "Must be 25 or fewer in length."
		}
		optional := false
		for j, o := range c.Options {
			op := "options." + strconv.Itoa(j)
			switch {
			case o.Type < 1 || o.Type > 11:
				return op + ".type", "Value must be one of the option types."
			case !chatInputName.MatchString(o.Name) || strings.ToLower(o.Name) != o.Name:
				return op + ".name", "Command name is invalid"
			case utf8.RuneCountInString(o.Description) < 1 || utf8.RuneCountInString(o.Description) > 100:
				return op + ".description", "Must be between 1 and 100 in length."
			case o.Required && optional:
				return op + ".required", "Required options must be placed before non-required options"
			}
			optional = optional || !o.Required
		}
	case 2, 3:
		if n := utf8.RuneCountInString(c.Name); n < 1 || n > 32 {
			return "name", "Must be between 1 and 32 in length."
		}
		if c.Description != "" {
			return "description", "Context menu commands cannot have description"
		}
		if len(c.Options) > 0 {
			return "options", "Context menu commands cannot have options"
		}
	default:
		return "type", "Value must be one of (1, 2, 3)."
	}
	for _, x := range c.Contexts {
		if x < 0 || x > 2 {
			return "contexts", "Value must be one of (0, 1, 2)."
		}
	}
	for _, x := range c.IntegrationTypes {
		if x < 0 || x > 1 {
			return "integration_types", "Value must be one of (0, 1)."
		}
	}
	return "", ""
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
