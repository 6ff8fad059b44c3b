package fakeslack

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/shared/message"
)

// MaxUpload is the largest file the fake takes: Slack's 1 GB.
const MaxUpload = 1 << 30

// upload is a file files.getUploadURLExternal announced: its name and
// length, the bytes once they were POSTed to its upload URL, and whether
// files.completeUploadExternal shared it (which it does once).
type upload struct {
	name     string
	length   int
	body     []byte
	received bool
	done     bool
}

// tsShape is a message timestamp as Slack writes one: seconds, a dot,
// microseconds.
var tsShape = regexp.MustCompile(`^[0-9]{10}\.[0-9]{6}$`)

// getUploadURL serves files.getUploadURLExternal: filename and length (a
// positive integer, at most MaxUpload) give a new file id and the URL on
// this fake where its bytes go (upload_url, as Slack answers with
// files.slack.com).
func (a *API) getUploadURL(w http.ResponseWriter, r *http.Request) {
	args, ok := a.authorized(w, r)
	if !ok {
		return
	}
	name := fakeapi.Str(args, "filename")
	length, err := strconv.Atoi(fakeapi.Str(args, "length"))
	switch {
	case name == "" || err != nil || length < 1:
		fail(w, "invalid_arguments")
		return
	case length > MaxUpload:
		fail(w, "file_upload_size_restricted")
		return
	}
	a.mu.Lock()
	a.fileSeq++
	id := "F0FAKEUP" + strconv.Itoa(a.fileSeq)
	a.uploads[id] = &upload{name: name, length: length}
	a.mu.Unlock()
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "file_id": id, "upload_url": a.root(r, "/files.getUploadURLExternal") + "/upload/v1/" + id})
}

// root is where this fake answers r, scheme, host and the mount prefix a
// composite fake stripped, as the path method was sent below it.
func (a *API) root(r *http.Request, method string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	prefix, _, _ := strings.Cut(r.RequestURI, method)
	return scheme + "://" + r.Host + strings.TrimSuffix(prefix, "/api")
}

// receive serves POST /upload/v1/{id}: the bytes of an announced file, raw
// or as the first file of a multipart form, of exactly the announced
// length. It answers 200 "OK", and anything else for a refusal (Slack
// documents only that a non-200 answer is a failure): 404 for an id it
// never gave or a file already shared, 400 for a length that is not the
// one announced.
func (a *API) receive(w http.ResponseWriter, r *http.Request) {
	body, err := uploaded(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	u, ok := a.uploads[r.PathValue("id")]
	switch {
	case !ok || u.done:
		http.Error(w, "Not Found", http.StatusNotFound)
	case len(body) != u.length:
		http.Error(w, "length mismatch: announced "+strconv.Itoa(u.length)+" bytes, got "+strconv.Itoa(len(body)), http.StatusBadRequest)
	default:
		u.body, u.received = body, true
		_, _ = io.WriteString(w, "OK - "+strconv.Itoa(len(body)))
	}
}

// uploaded reads an upload's bytes: the body, or its form's first file.
func uploaded(r *http.Request) ([]byte, error) {
	typ, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if typ != "multipart/form-data" {
		return io.ReadAll(io.LimitReader(r.Body, MaxUpload+1))
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			return nil, err
		}
		if p.FileName() != "" {
			return io.ReadAll(io.LimitReader(p, MaxUpload+1))
		}
	}
}

// complete serves files.completeUploadExternal: files (a JSON array of
// {id, title}) whose bytes were received and not yet shared are shared
// into channel_id, as a reply in thread_ts when set, with initial_comment
// as the message's text. It is a send: faults apply, and the message is
// recorded, its Args holding the file's (fakeapi.RecordFile) and its
// id (ArgFileID). Refusals: channel_not_found; invalid_arguments for files
// that do not parse, or a thread_ts that is no timestamp; file_not_found
// for a file never announced, not uploaded or shared before (Slack takes
// one completion); msg_too_long.
func (a *API) complete(w http.ResponseWriter, r *http.Request) {
	args, ok := a.authorized(w, r)
	if !ok {
		return
	}
	channel := fakeapi.Str(args, "channel_id")
	a.Send(w, fakeapi.Send{
		Platform: message.Slack,
		Chat:     channel,
		Fail:     failWith,
		Accept: func(w http.ResponseWriter) (fakeapi.Delivery, bool) {
			var files []struct {
				ID    string `json:"id"`
				Title string `json:"title"`
			}
			raw := fakeapi.Str(args, "files")
			if raw == "" {
				raw = string(args["files"]) // a JSON body holds the array itself
			}
			thread, text := fakeapi.Str(args, "thread_ts"), fakeapi.Str(args, "initial_comment")
			var refusal string
			switch {
			case json.Unmarshal([]byte(raw), &files) != nil || len(files) != 1:
				// Slack takes several files in one message; Parley
				// sends one, and so does this fake.
				refusal = "invalid_arguments"
			case !channelID(channel):
				refusal = "channel_not_found"
			case thread != "" && !tsShape.MatchString(thread):
				refusal = "invalid_arguments"
			case utf8.RuneCountInString(text) > TextLimit:
				refusal = "msg_too_long"
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			var u *upload
			if refusal == "" {
				var known bool
				u, known = a.uploads[files[0].ID]
				if !known || !u.received || u.done {
					refusal = "file_not_found"
				}
			}
			if refusal != "" {
				fail(w, refusal)
				return fakeapi.Delivery{}, false
			}
			u.done = true
			rec := map[string]json.RawMessage{}
			for k, v := range args {
				rec[k] = v
			}
			fakeapi.RecordFile(rec, u.body, u.name, "")
			rec[ArgFileID], _ = json.Marshal(files[0].ID)
			rec[argTitle], _ = json.Marshal(files[0].Title)
			return fakeapi.Delivery{Chat: channel, Thread: thread, Text: text, Args: rec}, true
		},
		Answer: func(w http.ResponseWriter, d fakeapi.Delivery) {
			share := map[string]any{"ts": d.MessageID}
			if d.Thread != "" {
				share["thread_ts"] = d.Thread
			}
			where := "public"
			if !strings.HasPrefix(d.Chat, "C") {
				where = "private"
			}
			fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "files": []map[string]any{{
				"id": fakeapi.Str(d.Args, ArgFileID), "title": fakeapi.Str(d.Args, argTitle),
				"shares": map[string]any{where: map[string]any{d.Chat: []any{share}}},
			}}})
		},
	})
}

// ArgFileID is the Args entry of a shared file's id.
const ArgFileID = "_file_id"

const argTitle = "_title"
