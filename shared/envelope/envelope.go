package envelope

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/shared/envelope/internal/jsonscan"
	"github.com/parleyhq/parley/shared/message"
)

// SchemaV1 is the envelope version Parley reads.
const SchemaV1 = "openab.turn.v1"

// Parsing limits that keep a hostile or broken reply cheap to refuse.
const (
	// MaxIDLen is the most bytes a bubble id may have.
	MaxIDLen = 64
	// parseDepth bounds nesting in an envelope (tool arguments included).
	parseDepth = 64
	// maxToolName is the most bytes a tool name may have (MCP's bound).
	maxToolName = 128
	// maxWaitSeconds bounds next.wait.seconds: one day.
	maxWaitSeconds = 86400
	// maxReason bounds next.wait.reason, in code points.
	maxReason = 500
)

// Envelope is a parsed and validated openab.turn.v1 reply.
type Envelope struct {
	// Schema is always SchemaV1.
	Schema string
	// Messages are the bubbles, in the agent's order. One bubble is one
	// platform message (split only when over the platform's limit).
	Messages []Bubble
	// Next is what the agent wants after these bubbles.
	Next Next
	// React is Parley's extension: an emoji to react with to the message
	// the turn answers ("react": "👍"), before the bubbles; empty when
	// absent. Where the platform has no reactions, nothing is sent.
	React string
}

// MaxReactLen bounds "react" in bytes: one emoji, with its modifiers and
// joiners, or a platform's ":name:".
const MaxReactLen = 64

// Bubble is one entry of an envelope's messages.
type Bubble struct {
	// ID is the agent's id: unique in the envelope, non-blank, at most
	// MaxIDLen bytes, without '#' or control characters.
	ID string
	// Text is delivered exactly as given (never trimmed); it may not be
	// empty or only whitespace. Empty when the bubble is a file.
	Text string
	// Media is the bubble's file, with its caption; a bubble has text or
	// media, never both.
	Media *message.Media
}

// NextType says what happens after a turn's bubbles.
type NextType string

const (
	// NextStop: the turn is over. The default when "next" is absent.
	NextStop NextType = "stop"
	// NextSilent: send nothing at all; wins over non-empty messages.
	NextSilent NextType = "silent"
	// NextWait: behaves as stop; the agent's wait details are recorded.
	NextWait NextType = "wait"
	// NextTool: a tool call the agent proposes; recorded, never executed.
	NextTool NextType = "tool"
	// NextAsk: Parley's question extension; the form is in Next.Ask.
	NextAsk NextType = "ask"
)

// Next is an envelope's "next", parsed.
type Next struct {
	Type NextType
	// Wait is set for NextWait (empty when the agent gave no details).
	Wait *Wait
	// Tool is set for NextTool.
	Tool *Tool
	// Ask is set for NextAsk.
	Ask *Ask
}

// Wait is the detail of next type "wait":
//
//	{"type": "wait", "wait": {"reason": "waiting for CI", "seconds": 600}}
//
// Both members are optional. Parley treats wait as stop and records it.
type Wait struct {
	// Reason is the agent's note, at most 500 code points.
	Reason string
	// Seconds is how long the agent expects to wait, 0 when not given,
	// otherwise 1 to 86400.
	Seconds int
}

// Tool is the detail of next type "tool":
//
//	{"type": "tool", "tool": {"name": "calendar.create", "arguments": {"title": "Flight"}}}
//
// Parley records the proposal and never executes it.
type Tool struct {
	// Name is 1–128 bytes of ASCII letters, digits, '_', '-', '.' and '/'.
	Name string
	// Arguments is the "arguments" object, compacted; nil when absent.
	Arguments json.RawMessage
}

// Parse reads and validates an envelope: body must be exactly one
// openab.turn.v1 object (surrounding whitespace and a UTF-8 BOM allowed).
// It applies no configured limits; Build does. The error is a *ParseError.
func Parse(body []byte) (*Envelope, error) {
	env, _, pe := parse(body)
	if pe != nil {
		return nil, pe
	}
	return env, nil
}

// parse also returns the node tree's root, for offsets.
func parse(body []byte) (*Envelope, *jsonscan.Node, *ParseError) {
	// Offsets are into body itself, so a leading BOM is skipped, not cut.
	b := body
	start := firstContent(b)
	t := trimRightSpaceBytes(b)
	if start == len(b) {
		return nil, nil, perr(ReasonNotEnvelope, "", -1, "empty reply")
	}
	if b[start] != '{' {
		return nil, nil, notEnvelope(b)
	}
	pr, st, end := scan(b, start)
	if !isFragment(&pr, st, detectProse) {
		return nil, nil, notEnvelope(b)
	}
	switch st {
	case statusTruncated:
		return nil, nil, perr(ReasonTruncated, "", len(b), "reply ends inside the envelope")
	case statusBroken:
		return nil, nil, perr(ReasonSyntax, "", end, "envelope is not valid JSON")
	}
	if end != len(t) {
		return nil, nil, perr(ReasonEmbedded, "", end, "text after the envelope")
	}
	root, _, err := jsonscan.Parse(b[:end], start, jsonscan.Options{MaxDepth: parseDepth, Strict: true})
	if err != nil {
		se := err.(*jsonscan.Error)
		return nil, nil, perr(reasonOf(se.Kind), formatPath(se.Path), se.Off, se.Msg)
	}
	env, pe := validate(root, b)
	if pe != nil {
		return nil, nil, pe
	}
	return env, root, nil
}

func notEnvelope(b []byte) *ParseError {
	if encodedEnvelope(b) {
		return perr(ReasonEncoded, "", 0, "reply is a JSON string holding an envelope")
	}
	if s := fragments(b, detectProse); len(s) > 0 {
		return perr(ReasonEmbedded, "", s[0].start, "envelope among other text")
	}
	if m := findMarker(b, false); m >= 0 {
		return perr(ReasonEmbedded, "", m, "envelope schema marker among other text")
	}
	return perr(ReasonNotEnvelope, "", -1, "reply is not an envelope")
}

var bom = []byte("\xef\xbb\xbf")

func validate(root *jsonscan.Node, body []byte) (*Envelope, *ParseError) {
	if pe := allowKeys(root, "", "schema", "messages", "next", "react"); pe != nil {
		return nil, pe
	}
	env := &Envelope{Next: Next{Type: NextStop}}
	s := root.Get("schema")
	switch {
	case s == nil:
		return nil, perr(ReasonMissingField, "schema", root.Off, "schema is required")
	case s.Kind != jsonscan.String:
		return nil, wrongType(s, "schema", jsonscan.String)
	case s.Str != SchemaV1:
		return nil, perr(ReasonBadSchema, "schema", s.Off, "only "+SchemaV1+" is supported")
	}
	env.Schema = s.Str
	if m := root.Get("messages"); m != nil {
		msgs, pe := validateMessages(m)
		if pe != nil {
			return nil, pe
		}
		env.Messages = msgs
	}
	if n := root.Get("next"); n != nil {
		next, pe := validateNext(n, body)
		if pe != nil {
			return nil, pe
		}
		env.Next = next
	}
	if r := root.Get("react"); r != nil {
		if r.Kind != jsonscan.String {
			return nil, wrongType(r, "react", jsonscan.String)
		}
		if detail := checkReact(r.Str); detail != "" {
			return nil, perr(ReasonBadReact, "react", r.Off, detail)
		}
		env.React = r.Str
	}
	return env, nil
}

// checkReact returns why s is not a reaction, or "".
func checkReact(s string) string {
	switch {
	case s == "":
		return "react is empty"
	case len(s) > MaxReactLen:
		return "react is longer than " + strconv.Itoa(MaxReactLen) + " bytes"
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return "react holds white space or a control character"
	}
	return ""
}

func validateMessages(m *jsonscan.Node) ([]Bubble, *ParseError) {
	if m.Kind != jsonscan.Array {
		return nil, wrongType(m, "messages", jsonscan.Array)
	}
	out := make([]Bubble, 0, len(m.Elems))
	seen := make(map[string]int, len(m.Elems)) // id → index; an envelope may hold any number before limits apply
	for i, e := range m.Elems {
		path := "messages[" + strconv.Itoa(i) + "]"
		if e.Kind != jsonscan.Object {
			return nil, wrongType(e, path, jsonscan.Object)
		}
		if pe := allowKeys(e, path, "id", "text", "media"); pe != nil {
			return nil, pe
		}
		id, pe := requiredString(e, path, "id")
		if pe != nil {
			return nil, pe
		}
		if detail := checkID(id.Str); detail != "" {
			return nil, perr(ReasonBadID, path+".id", id.Off, detail)
		}
		if j, dup := seen[id.Str]; dup {
			return nil, perr(ReasonDuplicateID, path+".id", id.Off, "same id as messages["+strconv.Itoa(j)+"]")
		}
		seen[id.Str] = i
		if mn := e.Get("media"); mn != nil {
			if t := e.Get("text"); t != nil {
				return nil, perr(ReasonBadMedia, path+".text", t.Off, "a bubble has text or media, not both: put the text in media.caption")
			}
			m, pe := validateMedia(mn, path+".media")
			if pe != nil {
				return nil, pe
			}
			out = append(out, Bubble{ID: id.Str, Media: m})
			continue
		}
		text, pe := requiredString(e, path, "text")
		if pe != nil {
			return nil, pe
		}
		if strings.TrimSpace(text.Str) == "" {
			return nil, perr(ReasonBlankText, path+".text", text.Off, "text is empty or only whitespace")
		}
		if pe := visible(text, path+".text"); pe != nil {
			return nil, pe
		}
		out = append(out, Bubble{ID: id.Str, Text: text.Str})
	}
	return out, nil
}

// checkID returns why id is not a valid bubble id, or "".
func checkID(id string) string {
	switch {
	case strings.TrimSpace(id) == "":
		return "id is blank"
	case len(id) > MaxIDLen:
		return "id is longer than " + strconv.Itoa(MaxIDLen) + " bytes"
	case strings.IndexByte(id, '#') >= 0:
		return "id contains '#', which separates unit ids"
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return "id contains a control character"
	}
	return ""
}

// visible rejects a string that people will see if it holds envelope JSON.
func visible(n *jsonscan.Node, path string) *ParseError {
	if hasFragment(n.Str, detectStrong) {
		return perr(ReasonNestedEnvelope, path, n.Off, "text holds envelope JSON")
	}
	return nil
}

func validateNext(n *jsonscan.Node, body []byte) (Next, *ParseError) {
	if n.Kind != jsonscan.Object {
		return Next{}, wrongType(n, "next", jsonscan.Object)
	}
	t, pe := requiredString(n, "next", "type")
	if pe != nil {
		return Next{}, pe
	}
	switch NextType(t.Str) {
	case NextStop, NextSilent:
		if pe := allowKeys(n, "next", "type"); pe != nil {
			return Next{}, pe
		}
		return Next{Type: NextType(t.Str)}, nil
	case NextWait:
		if pe := allowKeys(n, "next", "type", "wait"); pe != nil {
			return Next{}, pe
		}
		w, pe := validateWait(n.Get("wait"))
		return Next{Type: NextWait, Wait: w}, pe
	case NextTool:
		if pe := allowKeys(n, "next", "type", "tool"); pe != nil {
			return Next{}, pe
		}
		tn := n.Get("tool")
		if tn == nil {
			return Next{}, perr(ReasonMissingField, "next.tool", n.Off, "tool is required for type tool")
		}
		tool, pe := validateTool(tn, body)
		return Next{Type: NextTool, Tool: tool}, pe
	case NextAsk:
		if pe := allowKeys(n, "next", "type", "request"); pe != nil {
			return Next{}, pe
		}
		rn := n.Get("request")
		if rn == nil {
			return Next{}, perr(ReasonMissingField, "next.request", n.Off, "request is required for type ask")
		}
		ask, pe := validateAsk(rn, body)
		return Next{Type: NextAsk, Ask: ask}, pe
	}
	return Next{}, perr(ReasonBadNext, "next.type", t.Off, "type must be stop, silent, wait, tool or ask")
}

func validateWait(n *jsonscan.Node) (*Wait, *ParseError) {
	w := &Wait{}
	if n == nil {
		return w, nil
	}
	const path = "next.wait"
	if n.Kind != jsonscan.Object {
		return nil, wrongType(n, path, jsonscan.Object)
	}
	if pe := allowKeys(n, path, "reason", "seconds"); pe != nil {
		return nil, pe
	}
	if r := n.Get("reason"); r != nil {
		if r.Kind != jsonscan.String {
			return nil, wrongType(r, path+".reason", jsonscan.String)
		}
		if utf8.RuneCountInString(r.Str) > maxReason {
			return nil, perr(ReasonBadNext, path+".reason", r.Off, "reason is longer than 500 characters")
		}
		w.Reason = r.Str
	}
	if s := n.Get("seconds"); s != nil {
		v, ok := intValue(s)
		if !ok {
			return nil, wrongType(s, path+".seconds", jsonscan.Number)
		}
		if v < 1 || v > maxWaitSeconds {
			return nil, perr(ReasonBadNext, path+".seconds", s.Off, "seconds must be an integer from 1 to 86400")
		}
		w.Seconds = int(v)
	}
	return w, nil
}

func validateTool(n *jsonscan.Node, body []byte) (*Tool, *ParseError) {
	const path = "next.tool"
	if n.Kind != jsonscan.Object {
		return nil, wrongType(n, path, jsonscan.Object)
	}
	if pe := allowKeys(n, path, "name", "arguments"); pe != nil {
		return nil, pe
	}
	name, pe := requiredString(n, path, "name")
	if pe != nil {
		return nil, pe
	}
	if !toolName(name.Str) {
		return nil, perr(ReasonBadNext, path+".name", name.Off, "name must be 1-128 ASCII letters, digits, '_', '-', '.' or '/'")
	}
	t := &Tool{Name: name.Str}
	if a := n.Get("arguments"); a != nil {
		if a.Kind != jsonscan.Object {
			return nil, wrongType(a, path+".arguments", jsonscan.Object)
		}
		t.Arguments = compact(body[a.Off:a.End])
	}
	return t, nil
}

func toolName(s string) bool {
	if s == "" || len(s) > maxToolName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/') {
			return false
		}
	}
	return true
}

// compact returns a compacted copy of valid JSON.
func compact(raw []byte) json.RawMessage {
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		// Unreachable: raw was parsed strictly. Keep a copy as it is.
		return append(json.RawMessage(nil), raw...)
	}
	return buf.Bytes()
}

// allowKeys rejects the first member of n not in allowed.
func allowKeys(n *jsonscan.Node, path string, allowed ...string) *ParseError {
next:
	for _, m := range n.Members {
		for _, a := range allowed {
			if m.Key == a {
				continue next
			}
		}
		return perr(ReasonUnknownField, joinPath(path, m.Key), m.Off, "field not allowed here")
	}
	return nil
}

func joinPath(path, key string) string {
	k := formatPath([]jsonscan.PathElem{{Key: key, Index: -1}})
	if path == "" || strings.HasPrefix(k, "[") {
		return path + k
	}
	return path + "." + k
}

func requiredString(n *jsonscan.Node, path, key string) (*jsonscan.Node, *ParseError) {
	v := n.Get(key)
	if v == nil {
		return nil, perr(ReasonMissingField, joinPath(path, key), n.Off, key+" is required")
	}
	if v.Kind != jsonscan.String {
		return nil, wrongType(v, joinPath(path, key), jsonscan.String)
	}
	return v, nil
}

func wrongType(n *jsonscan.Node, path string, want jsonscan.Kind) *ParseError {
	return perr(ReasonWrongType, path, n.Off, "want "+want.String()+", got "+n.Kind.String())
}

// intValue reads a JSON number that is an integer (1, 1.0, 1e3).
func intValue(n *jsonscan.Node) (int64, bool) {
	if n.Kind != jsonscan.Number {
		return 0, false
	}
	if v, err := strconv.ParseInt(n.Str, 10, 64); err == nil {
		return v, true
	}
	f, err := strconv.ParseFloat(n.Str, 64)
	if err != nil || f != float64(int64(f)) || f > 1<<53 || f < -(1<<53) {
		return 0, false
	}
	return int64(f), true
}

func floatValue(n *jsonscan.Node) (float64, bool) {
	if n.Kind != jsonscan.Number {
		return 0, false
	}
	f, err := strconv.ParseFloat(n.Str, 64)
	return f, err == nil
}
