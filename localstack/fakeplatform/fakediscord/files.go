package fakediscord

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"regexp"
	"strconv"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
)

// MaxUpload is the largest file the fake takes: Discord's default for a
// bot where no boost raises it, 10 MiB.
const MaxUpload = 10 << 20

// ArgFiles is the Args entry of how many files a message carried; the
// first one's bytes, name and type are fakeapi.RecordFile's entries.
const ArgFiles = "_files"

// fileField is a file part's name: files[n], n the attachment's id in
// payload_json's attachments.
var fileField = regexp.MustCompile(`^files\[([0-9]{1,3})\]$`)

// form reads a multipart/form-data message as Discord does: the message
// in payload_json (a JSON object) or in plain fields, and its files, each
// a files[n] part with a filename, at most MaxUpload (413, 40005 past it),
// at most 10; an attachments array in payload_json names only files the
// form holds. It returns the message's args, the files recorded in them,
// or answers the refusal (50035 naming the field).
func form(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, bool) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		formError(w, "files", "CONTENT_TYPE_INVALID", "The multipart body has no boundary")
		return nil, false
	}
	args := map[string]json.RawMessage{}
	type file struct {
		name, typ string
		body      []byte
	}
	files := map[string]file{}
	var first string
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			formError(w, "files", "MULTIPART_INVALID", "The multipart body does not parse")
			return nil, false
		}
		body, err := io.ReadAll(io.LimitReader(p, MaxUpload+1))
		if err != nil {
			formError(w, "files", "MULTIPART_INVALID", "The multipart body does not parse")
			return nil, false
		}
		field := p.FormName()
		switch m := fileField.FindStringSubmatch(field); {
		case m != nil:
			switch {
			case p.FileName() == "":
				formError(w, field, "BASE_TYPE_REQUIRED", "A file needs a filename")
				return nil, false
			case len(body) > MaxUpload:
				fail(w, http.StatusRequestEntityTooLarge, 40005, "Request entity too large", nil)
				return nil, false
			case len(files) == 10:
				formError(w, "files", "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
				return nil, false
			}
			if first == "" {
				first = m[1]
			}
			files[m[1]] = file{p.FileName(), p.Header.Get("Content-Type"), body}
		case field == "payload_json":
			if json.Unmarshal(body, &args) != nil || args == nil {
				fail(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.", nil)
				return nil, false
			}
		case p.FileName() != "":
			formError(w, field, "FILE_FIELD_INVALID", "A file's field is files[n]")
			return nil, false
		default:
			args[field], _ = json.Marshal(string(body))
		}
	}
	var attachments []struct {
		ID json.RawMessage `json:"id"`
	}
	if raw, ok := args["attachments"]; ok && json.Unmarshal(raw, &attachments) != nil {
		formError(w, "attachments", "BASE_TYPE_ARRAY", "Must be an array.")
		return nil, false
	}
	for i, a := range attachments {
		id := fakeapi.Str(map[string]json.RawMessage{"id": a.ID}, "id")
		if _, ok := files[id]; !ok {
			formError(w, "attachments."+strconv.Itoa(i)+".id", "ATTACHMENT_NOT_FOUND", "The attachment names no files[n] of this form")
			return nil, false
		}
	}
	if f, ok := files[first]; ok {
		fakeapi.RecordFile(args, f.body, f.name, f.typ)
	}
	args[ArgFiles], _ = json.Marshal(len(files))
	return args, true
}
