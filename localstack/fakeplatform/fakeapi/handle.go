package fakeapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// Send is one send a fake hands to Handle: what its platform does at each
// step.
type Send struct {
	Platform message.Platform
	// Chat is where the message goes, for the faults that name a chat.
	Chat string
	// IDs issues the message's id (Base.Send sets the fake's).
	IDs IDs
	// Fail answers f, a fault that Fails, in the platform's error format.
	Fail func(w http.ResponseWriter, f Fault)
	// Accept validates the call as the platform does: it answers a refusal
	// itself and returns false, or returns the message to record.
	Accept func(w http.ResponseWriter) (Delivery, bool)
	// Answer writes the platform's answer for the recorded message.
	Answer func(w http.ResponseWriter, d Delivery)
}

// Handle runs one send: it counts the attempt and takes the first matching
// fault; the fault's Delay holds everything; a failing fault answers before
// the call is validated (a platform refuses what it will not take before
// it looks at it); then the message is validated, recorded, and answered,
// unless the fault drops the answer after the message was recorded.
func (r *Recorder) Handle(w http.ResponseWriter, s Send) {
	f, faulty := r.attempt(s.Platform, s.Chat, false)
	if faulty && f.Delay > 0 {
		time.Sleep(f.Delay)
	}
	if faulty && f.Fails() {
		s.Fail(w, f)
		return
	}
	d, ok := s.Accept(w)
	if !ok {
		return
	}
	d.Platform = s.Platform
	d = r.deliver(d, s.IDs)
	if faulty && f.DropResponseAfterCommit {
		DropConnection(w)
		return
	}
	s.Answer(w, d)
}

// Edit runs one edit through the faults queued for edits (Fault.Edits):
// a failing fault is answered by fail and the edit not made; otherwise
// apply makes it, and a DropResponseAfterCommit fault then closes the
// connection without an answer. It reports whether the caller answers.
func (r *Recorder) Edit(w http.ResponseWriter, p message.Platform, chat string, fail func(http.ResponseWriter, Fault), apply func()) bool {
	f, faulty := r.attempt(p, chat, true)
	if faulty && f.Delay > 0 {
		time.Sleep(f.Delay)
	}
	if faulty && f.Fails() {
		fail(w, f)
		return false
	}
	apply()
	if faulty && f.DropResponseAfterCommit {
		DropConnection(w)
		return false
	}
	return true
}

// DropConnection closes the connection without an answer.
func DropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// HTTP/2 cannot hijack; aborting resets the stream instead.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// WriteJSON answers v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Args reads a call's arguments: a JSON object, or form fields (the Bot API
// and the Web API take either), each form field as a JSON string.
func Args(r *http.Request) (map[string]json.RawMessage, bool) {
	out := map[string]json.RawMessage{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || json.Unmarshal(body, &out) != nil || out == nil {
			return nil, false
		}
		return out, true
	}
	if err := r.ParseForm(); err != nil {
		return nil, false
	}
	for k := range r.Form {
		b, _ := json.Marshal(r.Form.Get(k))
		out[k] = b
	}
	return out, true
}

// Str reads an argument as text: a JSON string as is, a number by its
// digits, anything else (or nothing) as "".
func Str(args map[string]json.RawMessage, key string) string {
	raw, ok := args[key]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}
