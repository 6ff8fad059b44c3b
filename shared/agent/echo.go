package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/parleyhq/parley/shared/message"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/standardwebhooks"
	"github.com/parleyhq/parley/shared/wait"
)

// echoMaxBody bounds the echo agent's request body, as a real agent should.
const echoMaxBody = 1 << 20

// Echo is the built-in echo agent: an http.Handler speaking the agent
// protocol, for demos and tests. A Client whose URL is BuiltinEcho serves it
// in process; the local runner can mount it at a path (/agent/echo) too.
//
// It refuses a request that is not a POST (405), over 1 MiB (413), without a
// valid Standard Webhooks signature (401), or that is not a parley.turn.v1
// request with a turn_id (400). Otherwise it answers by the event's text,
// deterministically:
//
//	"/one TEXT"          one bubble, TEXT verbatim
//	"/bubbles A | B | C" one bubble per |-separated segment, trimmed; blank
//	                     segments are dropped
//	"/text TEXT"         a text/plain reply, TEXT verbatim
//	"/silent"            an envelope with next "silent" and one bubble that
//	                     must never be sent
//	"/stream TEXT"       a streamed reply (StreamType): a status line, then
//	                     "echo:" and each word of TEXT as deltas, StreamPause
//	                     apart, then a final of two bubbles: "echo: TEXT"
//	                     (what the deltas wrote) and "streamed in <n> deltas"
//	"/ask [FORM]"        one bubble and a question (next "ask"): FORM is seat
//	                     (a single select), extras (a multi-select of at most
//	                     two), note (free text), optional (seat, skippable);
//	                     without FORM all three of seat, extras and note
//	"/image [CAPTION]"   an image bubble: EchoImage, uploaded through
//	                     Parley's POST /media (Echo.Media), with CAPTION
//	attachments          one bubble per file: its kind, type, size, what the
//	                     platform said of it (dimensions, duration, name) and
//	                     the first 12 hex digits of its SHA-256, or the reason
//	                     it has no URL; then the text's answer, if there is text
//	text with " | "      like /bubbles on the whole text
//	any other text       two bubbles: "echo: <text>" and "<n> characters,
//	                     via <platform>" (n counts code points)
//
// A command is the first word of the trimmed text; an empty argument or
// text becomes "(empty)". A request carrying an Answer gets one bubble,
// "answer <action> to <question id>" and its content as JSON.
type Echo struct {
	// Secret verifies requests; it must be the secret the client signs
	// with. Required: without it every request is refused.
	Secret standardwebhooks.Secret
	// Now is the clock timestamps are checked against. Defaults to
	// time.Now.
	Now func() time.Time
	// StreamPause is the pause between the lines of a /stream reply.
	// Defaults to 400 milliseconds; negative: none.
	StreamPause time.Duration
	// Media is Parley's POST /media URL, where /image uploads its
	// picture; empty: /image says it cannot.
	Media string
}

func (e Echo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, echoMaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	v := standardwebhooks.Verifier{Secrets: []standardwebhooks.Secret{e.Secret}}
	if _, err := v.Verify(r.Header, body, now()); err != nil {
		// The verifier's reasons name no secret: safe to answer with.
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var req TurnRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "body is not a turn request", http.StatusBadRequest)
		return
	}
	if req.Version != Version || req.TurnID == "" {
		http.Error(w, fmt.Sprintf("want version %q and a turn_id", Version), http.StatusBadRequest)
		return
	}

	if cmd, arg := splitCommand(req.Event.Text); cmd == "/stream" && req.Answer == nil {
		e.stream(w, r, orEmpty(arg))
		return
	} else if cmd == "/image" && req.Answer == nil {
		e.image(w, r, arg)
		return
	}
	ctype, out := echoReply(req)
	w.Header().Set("Content-Type", ctype)
	_, _ = w.Write(out)
}

// echoEnvelope is the openab.turn.v1 envelope the echo agent answers with.
type echoEnvelope struct {
	Schema   string       `json:"schema"`
	Messages []echoBubble `json:"messages"`
	Next     echoNext     `json:"next"`
}

type echoBubble struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

type echoNext struct {
	Type string `json:"type"`
}

const (
	jsonType  = "application/json; charset=utf-8"
	textType  = "text/plain; charset=utf-8"
	emptyText = "(empty)"
)

// echoReply is the echo agent's answer to a verified request.
func echoReply(req TurnRequest) (contentType string, body []byte) {
	text := req.Event.Text
	cmd, arg := splitCommand(text)
	switch {
	case req.Answer != nil:
		line := fmt.Sprintf("answer %s to %s", req.Answer.Action, req.Answer.QuestionID)
		if len(req.Answer.Content) > 0 {
			content, err := json.Marshal(req.Answer.Content) // map keys sorted: deterministic
			if err == nil {
				line += ": " + string(content)
			}
		}
		return jsonType, envelope("stop", line)
	case cmd == "/silent":
		return jsonType, envelope("silent", "this bubble must never be sent")
	case cmd == "/ask":
		return jsonType, askEnvelope(arg)
	case cmd == "/text":
		return textType, []byte(arg)
	case cmd == "/one":
		return jsonType, envelope("stop", orEmpty(arg))
	case cmd == "/bubbles":
		return jsonType, envelope("stop", segments(arg)...)
	case len(req.Event.Attachments) > 0:
		lines := describe(req.Event.Attachments)
		if strings.TrimSpace(text) != "" {
			lines = append(lines, "echo: "+text)
		}
		return jsonType, envelope("stop", lines...)
	case strings.Contains(text, " | "):
		return jsonType, envelope("stop", segments(text)...)
	}
	platform := string(req.Event.Platform)
	if platform == "" {
		platform = "unknown"
	}
	n := utf8.RuneCountInString(text)
	unit := "characters"
	if n == 1 {
		unit = "character"
	}
	return jsonType, envelope("stop", "echo: "+orEmpty(text), fmt.Sprintf("%d %s, via %s", n, unit, platform))
}

// splitCommand returns the leading "/word" of the trimmed text and the rest,
// trimmed; cmd is empty when the text starts with no slash. A Telegram-style
// "@botname" suffix on the command is dropped ("/one@parley_bot hi").
func splitCommand(text string) (cmd, arg string) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return "", ""
	}
	cmd = t
	if i := strings.IndexFunc(t, unicode.IsSpace); i >= 0 {
		cmd, arg = t[:i], strings.TrimSpace(t[i:])
	}
	cmd, _, _ = strings.Cut(cmd, "@")
	return cmd, arg
}

func segments(s string) []string {
	var out []string
	for seg := range strings.SplitSeq(s, "|") {
		if seg = strings.TrimSpace(seg); seg != "" {
			out = append(out, seg)
		}
	}
	if len(out) == 0 {
		return []string{emptyText}
	}
	return out
}

func orEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return emptyText
	}
	return s
}

func envelope(next string, texts ...string) []byte {
	env := echoEnvelope{Schema: "openab.turn.v1", Next: echoNext{Type: next}, Messages: make([]echoBubble, len(texts))}
	for i, t := range texts {
		env.Messages[i] = echoBubble{ID: fmt.Sprintf("b%d", i+1), Text: t}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // readable "<" and "&" in demos
	_ = enc.Encode(env)      // strings only: cannot fail
	return buf.Bytes()
}

// echoForms are the questions /ask asks, as JSON Schema properties.
var echoForms = map[string]string{
	"seat":   `"seat": {"type": "string", "title": "Seat", "oneOf": [{"const": "12A", "title": "Window"}, {"const": "12C", "title": "Aisle"}]}`,
	"extras": `"extras": {"type": "array", "title": "Extras", "maxItems": 2, "items": {"anyOf": [{"const": "meal", "title": "Meal"}, {"const": "bag", "title": "Extra bag"}, {"const": "wifi", "title": "Wi-Fi"}]}}`,
	"note":   `"note": {"type": "string", "title": "A note for the crew", "minLength": 1, "maxLength": 200}`,
}

// askEnvelope is /ask's answer: a bubble, then the form named (all three
// when none is).
func askEnvelope(form string) []byte {
	var props, required []string
	switch form {
	case "seat", "extras", "note":
		props, required = []string{echoForms[form]}, []string{`"` + form + `"`}
	case "optional":
		props = []string{echoForms["seat"]}
	default:
		props = []string{echoForms["seat"], echoForms["extras"], echoForms["note"]}
		required = []string{`"seat"`, `"note"`}
	}
	return []byte(`{"schema": "openab.turn.v1", "messages": [{"id": "b1", "text": "A quick question before I book."}],
 "next": {"type": "ask", "request": {"message": "Your flight to Lisbon",
  "requestedSchema": {"type": "object", "properties": {` + strings.Join(props, ", ") + `}, "required": [` + strings.Join(required, ", ") + `]}}}}`)
}

// describe is a line per attachment, as the echo agent reports them.
func describe(atts []message.Attachment) []string {
	var lines []string
	for _, a := range atts {
		if a.URL == "" {
			lines = append(lines, fmt.Sprintf("%s %d: not stored (%s)", a.Kind, a.Index, a.Reason))
			continue
		}
		line := fmt.Sprintf("%s %d: %s, %d bytes", a.Kind, a.Index, a.MIME, a.Size)
		if a.Width > 0 && a.Height > 0 {
			line += fmt.Sprintf(", %dx%d", a.Width, a.Height)
		}
		if a.Duration > 0 {
			line += fmt.Sprintf(", %d s", a.Duration)
		}
		if a.Name != "" {
			line += ", " + strconv.Quote(a.Name)
		}
		lines = append(lines, line+fmt.Sprintf(", sha256 %.12s", a.SHA256))
	}
	return lines
}

// stream answers /stream: a status line, the text as deltas, a final.
func (e Echo) stream(w http.ResponseWriter, r *http.Request, text string) {
	pause := e.StreamPause
	switch {
	case pause == 0:
		pause = 400 * time.Millisecond
	case pause < 0:
		pause = 0
	}
	w.Header().Set("Content-Type", StreamType)
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	line := func(ev StreamEvent) bool {
		if enc.Encode(ev) != nil {
			return false
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		return wait.For(r.Context(), pause) == nil
	}
	str := func(s string) *string { return &s }
	if !line(StreamEvent{Type: EventStatus, Text: str("thinking…")}) {
		return
	}
	deltas := append([]string{"echo:"}, strings.Fields(text)...)
	for i, d := range deltas {
		if i > 0 {
			d = " " + d
		}
		if !line(StreamEvent{Type: EventDelta, Text: str(d)}) {
			return
		}
	}
	final := envelope("stop", "echo: "+strings.Join(strings.Fields(text), " "), fmt.Sprintf("streamed in %d deltas", len(deltas)))
	_ = enc.Encode(StreamEvent{Type: EventFinal, Envelope: bytes.TrimSpace(final)})
}
