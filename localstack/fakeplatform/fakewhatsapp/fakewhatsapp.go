// Package fakewhatsapp is a fake WhatsApp Cloud API: an http.Handler
// speaking Graph's wire format, validating POST /<phone number id>/messages
// as the Cloud API does (the bearer token, the phone number id, text of at
// most 4096 characters, reply buttons and list messages within their
// limits) and answering in Graph's error envelope
// ({"error":{"message","type","code","error_subcode","error_data",
// "fbtrace_id"}}). It records what it accepts in a fakeapi.Recorder, with
// the text as the person sees it (buttons and list rows under the body).
//
// It serves POST /<phone number id>/messages, also under a version
// (/v25.0/<phone number id>/messages), and the media people sent
// (AddMedia, ServeSamples): GET /<media id> answers a URL that lasts
// MediaURLLife, and GET /whatsapp_business/attachments/?mid=… serves the
// file there, as lookaside.fbsbx.com does, both to the access token. Sign
// signs webhooks as Meta does;
// HandshakeQuery is the query of Meta's verification GET.
//
// Messages API: https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/text-messages/
// Error codes: https://developers.facebook.com/documentation/business-messaging/whatsapp/support/error-codes/
package fakewhatsapp

import (
	"crypto/hmac"
	"crypto/sha1" // X-Hub-Signature is SHA-1 by Meta's definition; receivers must not rely on it
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
	"github.com/parleyhq/parley/shared/message"
)

// Limits the Cloud API enforces, in characters (counted here as UTF-16
// code units).
const (
	// TextLimit bounds a text message's body.
	TextLimit = 4096
	// ButtonBodyLimit bounds a reply-button message's body, ListBodyLimit a
	// list message's.
	ButtonBodyLimit = 1024
	ListBodyLimit   = 4096
	// MaxButtons reply buttons, with ids of at most ButtonIDLimit bytes and
	// unique titles of at most ButtonTitleLimit characters.
	MaxButtons       = 3
	ButtonIDLimit    = 256
	ButtonTitleLimit = 20
	// MaxRows rows in all of a list's sections (at most MaxSections), with
	// unique ids of at most RowIDLimit, titles of at most RowTitleLimit and
	// descriptions of at most RowDescriptionLimit; the list's button label
	// of at most ButtonTitleLimit.
	MaxRows             = 10
	MaxSections         = 10
	RowIDLimit          = 200
	RowTitleLimit       = 24
	RowDescriptionLimit = 72
	// TagLimit bounds biz_opaque_callback_data.
	TagLimit = 512
)

// Options configure an API.
type Options struct {
	// Token is the access token the API accepts; any other gets Graph's
	// 190. Empty refuses every call.
	Token string
	// PhoneNumberID is the business phone number the token may send from;
	// any other id gets Graph's "object does not exist" (100, subcode 33).
	// Empty accepts any numeric id.
	PhoneNumberID string
	// Recorder records what the fake accepts and holds its faults.
	// Defaults to a new one.
	Recorder *fakeapi.Recorder
}

// API is the fake Cloud API. It is safe for concurrent use.
type API struct {
	fakeapi.Base
	phone string

	mu    sync.Mutex
	wrote map[string]time.Time // wa_id → the person's last message
	// files are the media people sent, by media id (media.go).
	files fakefiles.Store
}

// Window is the customer-service window: a free-form message reaches a
// person only this long after their last message; a template, any time.
const Window = 24 * time.Hour

// Wrote records that the person waID wrote to the business at at (the
// fake does not see webhooks: a test or make post tells it). Free-form
// messages to a person whose last message is older than Window are refused
// 131047; a person the fake never heard from is taken as within the window,
// so that tests that do not model people's messages still send.
func (a *API) Wrote(waID string, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.wrote == nil {
		a.wrote = map[string]time.Time{}
	}
	if at.After(a.wrote[waID]) {
		a.wrote[waID] = at
	}
}

// windowClosed reports whether a free-form message may not reach waID now.
func (a *API) windowClosed(waID string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	last, known := a.wrote[waID]
	return known && a.Recorder().Now().Sub(last) > Window
}

// New returns an API.
func New(opt Options) *API {
	return &API{
		Base:  fakeapi.NewBase(fakeapi.Config{Token: opt.Token, Recorder: opt.Recorder}, wamids{}),
		phone: opt.PhoneNumberID,
	}
}

// Sign returns the headers Meta sends with a webhook POST of body:
// X-Hub-Signature-256 ("sha256=" + hex HMAC-SHA256(app secret, body)), the
// older X-Hub-Signature ("sha1=" + hex HMAC-SHA1) and the Content-Type.
func Sign(appSecret string, body []byte) http.Header {
	mac256 := hmac.New(sha256.New, []byte(appSecret))
	mac256.Write(body)
	mac1 := hmac.New(sha1.New, []byte(appSecret))
	mac1.Write(body)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac256.Sum(nil)))
	h.Set("X-Hub-Signature", "sha1="+hex.EncodeToString(mac1.Sum(nil)))
	return h
}

// HandshakeQuery is the query of the GET with which Meta verifies the
// callback URL when it is saved: hub.mode=subscribe, the verify token typed
// into the app's configuration, and a challenge to echo.
func HandshakeQuery(verifyToken, challenge string) url.Values {
	return url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {verifyToken}, "hub.challenge": {challenge}}
}

// graphError is one of Graph's error answers.
type graphError struct {
	status  int
	typ     string
	message string
	details string
}

// codes are the Cloud API's answers for the error codes a fault can name.
var codes = map[int]graphError{
	1:      {400, "OAuthException", "An unknown error occurred", ""},
	2:      {503, "OAuthException", "An unexpected error has occurred. Please retry your request later.", ""},
	4:      {400, "OAuthException", "(#4) Application request limit reached", ""},
	10:     {403, "OAuthException", "(#10) Application does not have permission for this action", ""},
	33:     {400, "OAuthException", "(#33) This object does not exist or does not support this action", ""},
	100:    {400, "OAuthException", "(#100) Invalid parameter", ""},
	190:    {401, "OAuthException", "Invalid OAuth access token - Cannot parse access token", ""},
	200:    {403, "OAuthException", "(#200) Permissions error", ""},
	368:    {403, "OAuthException", "(#368) Temporarily blocked for policies violations", ""},
	80007:  {400, "OAuthException", "(#80007) Rate limit issues", ""},
	130429: {400, "OAuthException", "(#130429) Rate limit hit", "Cloud API message throughput has been reached."},
	131000: {500, "OAuthException", "(#131000) Something went wrong", ""},
	131005: {403, "OAuthException", "(#131005) Access denied", ""},
	131008: {400, "OAuthException", "(#131008) Required parameter is missing", ""},
	131009: {400, "OAuthException", "(#131009) Parameter value is not valid", ""},
	131016: {500, "OAuthException", "(#131016) Service unavailable", ""},
	131026: {400, "OAuthException", "(#131026) Message undeliverable", ""},
	131047: {400, "OAuthException", "(#131047) Re-engagement message", "Message failed to send because more than 24 hours have passed since the customer last replied to this number."},
	131048: {400, "OAuthException", "(#131048) Spam rate limit hit", ""},
	131051: {400, "OAuthException", "(#131051) Unsupported message type", ""},
	131056: {400, "OAuthException", "(#131056) (Business Account, Consumer Account) pair rate limit hit", "Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time."},
	131057: {500, "OAuthException", "(#131057) Account in maintenance mode", ""},
}

// Common fault codes, for Fault.Error.
const (
	// CodeReEngagement: the 24-hour customer service window is closed.
	CodeReEngagement = "131047"
	// CodeThroughput: the number's messages per second are spent.
	CodeThroughput = "130429"
	// CodePairRate: too many messages to one person in a short time.
	CodePairRate = "131056"
)

// fail answers Graph's error envelope for code (and subcode), with status
// (the code's own when 0).
func fail(w http.ResponseWriter, status, code, subcode int, msg, details string) {
	e := map[string]any{"message": msg, "type": "OAuthException", "code": code, "fbtrace_id": "AFakeTrace000000000001"}
	if known, ok := codes[code]; ok {
		e["type"] = known.typ
		if status == 0 {
			status = known.status
		}
		if details == "" {
			details = known.details
		}
	}
	if subcode != 0 {
		e["error_subcode"] = subcode
	}
	if details != "" {
		e["error_data"] = map[string]any{"messaging_product": "whatsapp", "details": details}
	}
	fakeapi.WriteJSON(w, max(status, 400), map[string]any{"error": e})
}

func invalid(w http.ResponseWriter, code int, details string) {
	fail(w, 0, code, 0, codes[code].message, details)
}

// failWith answers an injected fault: an Error ("131047", or "100/33" with
// a subcode) as Graph's envelope for that code, with Status when set, else
// the code's own; a Status alone as a plain edge page. RetryAfter sets a
// Retry-After header (Graph sends none; a proxy in front of it may).
func failWith(w http.ResponseWriter, f fakeapi.Fault) {
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(f.RetryAfterSeconds(), 10))
	}
	if f.Error == "" {
		http.Error(w, http.StatusText(f.Status), f.Status)
		return
	}
	c, s, _ := strings.Cut(f.Error, "/")
	code, _ := strconv.Atoi(c)
	sub, _ := strconv.Atoi(s)
	msg := codes[code].message
	if msg == "" {
		msg = "(#" + c + ") Error"
	}
	fail(w, f.Status, code, sub, msg, "")
}

// ServeHTTP serves the Cloud API. A version segment (/v25.0) is optional.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.Trim(r.URL.Path, "/")
	if v, rest, ok := strings.Cut(path, "/"); ok && version(v) {
		path = rest
	}
	if r.Method == http.MethodGet {
		switch {
		case path == "whatsapp_business/attachments":
			a.mediaFile(w, r)
			return
		case digits(path):
			a.mediaInfo(w, r, path)
			return
		}
	}
	phone, edge, ok := strings.Cut(path, "/")
	if !ok || edge != "messages" || phone == "" {
		fail(w, 400, 2500, 0, "Unknown path components: /"+path, "")
		return
	}
	if r.Method != http.MethodPost {
		fail(w, 400, 100, 0, "Unsupported "+strings.ToLower(r.Method)+" request.", "")
		return
	}
	token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !bearer || token == "":
		a.Recorder().Refused()
		fail(w, 400, 104, 0, "An access token is required to request this resource.", "")
		return
	case !a.Authorized(token):
		a.Recorder().Refused()
		invalid(w, 190, "")
		return
	}
	args, ok := fakeapi.Args(r)
	if !ok {
		a.Recorder().Refused()
		invalid(w, 100, "the body is not a JSON object")
		return
	}
	if _, ok := args["status"]; ok {
		a.read(w, phone, args)
		return
	}
	to := fakeapi.Str(args, "to")
	if fakeapi.Str(args, "type") == "reaction" {
		a.react(w, phone, to, args)
		return
	}
	a.Send(w, fakeapi.Send{
		Platform: message.WhatsApp,
		Chat:     to,
		Fail:     failWith,
		Accept: func(w http.ResponseWriter) (fakeapi.Delivery, bool) {
			if !digits(phone) || (a.phone != "" && phone != a.phone) {
				fail(w, 400, 100, 33, "Unsupported post request. Object with ID '"+phone+"' does not exist, cannot be loaded due to missing permissions, or does not support this operation.", "")
				return fakeapi.Delivery{}, false
			}
			text, controls, code, details := validate(args)
			if code != 0 {
				invalid(w, code, details)
				return fakeapi.Delivery{}, false
			}
			if fakeapi.Str(args, "type") != "template" && a.windowClosed(to) {
				fail(w, 400, 131047, 0, "Re-engagement message", "Message failed to send because more than 24 hours have passed since the customer last replied to this number.")
				return fakeapi.Delivery{}, false
			}
			var ctx struct {
				MessageID string `json:"message_id"`
			}
			if raw, ok := args["context"]; ok {
				_ = json.Unmarshal(raw, &ctx)
			}
			return fakeapi.Delivery{Chat: to, Text: text, ReplyTo: ctx.MessageID, Args: args, Controls: controls}, true
		},
		Answer: answer,
	})
}

// react takes a reaction message: it names the message it is on and an
// emoji ("" takes the business's reaction back), and replaces the one the
// business set before. It is answered like a message, and is no delivery.
func (a *API) react(w http.ResponseWriter, phone, to string, args map[string]json.RawMessage) {
	var r struct {
		MessageID string `json:"message_id"`
		Emoji     string `json:"emoji"`
	}
	raw, ok := args["reaction"]
	switch {
	case !digits(phone) || (a.phone != "" && phone != a.phone):
		fail(w, 400, 100, 33, "Unsupported post request. Object with ID '"+phone+"' does not exist, cannot be loaded due to missing permissions, or does not support this operation.", "")
		return
	case !ok || json.Unmarshal(raw, &r) != nil || r.MessageID == "":
		invalid(w, 100, "The parameter reaction['message_id'] is required.")
		return
	case !digits(strings.TrimPrefix(to, "+")):
		invalid(w, 100, "Param to must be a phone number.")
		return
	}
	a.Recorder().Reacted(fakeapi.Reaction{Platform: message.WhatsApp, Chat: to, MessageID: r.MessageID, Emoji: r.Emoji, Replace: true})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{
		"messaging_product": "whatsapp",
		"contacts":          []map[string]string{{"input": to, "wa_id": to}},
		"messages":          []map[string]string{{"id": "wamid.reaction." + r.MessageID}},
	})
}

// version reports whether s is a Graph version segment: v25.0, v3.
func version(s string) bool {
	v, ok := strings.CutPrefix(s, "v")
	if !ok || v == "" {
		return false
	}
	major, minor, _ := strings.Cut(v, ".")
	return digits(major) && (minor == "" || digits(minor))
}

// answer is the messages endpoint's answer: the recipient and the new
// message's wamid.
func answer(w http.ResponseWriter, d fakeapi.Delivery) {
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{
		"messaging_product": "whatsapp",
		"contacts":          []map[string]string{{"input": d.Chat, "wa_id": d.Chat}},
		"messages":          []map[string]string{{"id": d.MessageID}},
	})
}

// send is a send's body as the fake reads it.
type send struct {
	MessagingProduct string `json:"messaging_product"`
	RecipientType    string `json:"recipient_type"`
	To               string `json:"to"`
	Type             string `json:"type"`
	Context          *struct {
		MessageID string `json:"message_id"`
	} `json:"context"`
	BizOpaqueCallbackData string `json:"biz_opaque_callback_data"`
	Text                  *struct {
		Body       string `json:"body"`
		PreviewURL *bool  `json:"preview_url"`
	} `json:"text"`
	Interactive *interactive `json:"interactive"`
	Template    *template    `json:"template"`
	// Media messages by link (media.go).
	Image    *mediaLink `json:"image"`
	Document *mediaLink `json:"document"`
	Audio    *mediaLink `json:"audio"`
	Video    *mediaLink `json:"video"`
}

// template is a template message as the fake reads it: the template's
// name and language, and its body's text parameters.
type template struct {
	Name     string `json:"name"`
	Language *struct {
		Code string `json:"code"`
	} `json:"language"`
	Components []struct {
		Type       string `json:"type"`
		Parameters []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"parameters"`
	} `json:"components"`
}

// TemplateParamLimit bounds a template's text parameter, in characters.
const TemplateParamLimit = 1024

// validate checks a template message: a name, a language, text parameters
// without the newlines, tabs and runs of spaces Meta refuses (132018). It
// returns what the person sees: the name and its parameters.
func (t *template) validate() (string, int, string) {
	if t.Name == "" || t.Language == nil || t.Language.Code == "" {
		return "", 131008, "The parameters template['name'] and template['language']['code'] are required."
	}
	parts := []string{"[template " + t.Name + "]"}
	for _, c := range t.Components {
		for _, p := range c.Parameters {
			switch {
			case p.Type != "text":
				return "", 100, "Param type must be text in this fake."
			case strings.ContainsAny(p.Text, "\n\t") || strings.Contains(p.Text, "     "):
				return "", 132018, "Param text cannot have new-line/tab characters or more than 4 consecutive spaces."
			case units(p.Text) > TemplateParamLimit:
				return "", 132005, "Translated text too long."
			}
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, " "), 0, ""
}

type interactive struct {
	Type string `json:"type"`
	Body *struct {
		Text string `json:"text"`
	} `json:"body"`
	Action struct {
		Buttons []struct {
			Type  string `json:"type"`
			Reply struct {
				ID    string `json:"id"`
				Title string `json:"title"`
			} `json:"reply"`
		} `json:"buttons"`
		Button   string `json:"button"`
		Sections []struct {
			Title string `json:"title"`
			Rows  []struct {
				ID          string `json:"id"`
				Title       string `json:"title"`
				Description string `json:"description"`
			} `json:"rows"`
		} `json:"sections"`
	} `json:"action"`
}

// validate checks a send as the Cloud API does. It returns what the person
// sees, the text and the controls under it (reply buttons; a list's rows),
// or Graph's error code and details.
func validate(args map[string]json.RawMessage) (string, []fakeapi.Control, int, string) {
	raw, _ := json.Marshal(args)
	var s send
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", nil, 100, "a parameter has the wrong type"
	}
	switch {
	case s.MessagingProduct != "whatsapp":
		return "", nil, 100, "The parameter messaging_product is required."
	case s.RecipientType != "" && s.RecipientType != "individual":
		return "", nil, 100, "Param recipient_type must be individual."
	case !digits(strings.TrimPrefix(s.To, "+")):
		return "", nil, 100, "Param to must be a phone number."
	case s.Context != nil && s.Context.MessageID == "":
		return "", nil, 100, "Param context['message_id'] is required."
	case units(s.BizOpaqueCallbackData) > TagLimit:
		return "", nil, 100, "Param biz_opaque_callback_data must be at most " + strconv.Itoa(TagLimit) + " characters long."
	}
	switch s.Type {
	case "text":
		switch {
		case s.Text == nil || strings.TrimSpace(s.Text.Body) == "":
			return "", nil, 100, "The parameter text['body'] is required."
		case units(s.Text.Body) > TextLimit:
			return "", nil, 100, "Param text['body'] must be at most " + strconv.Itoa(TextLimit) + " characters long."
		}
		return s.Text.Body, nil, 0, ""
	case "interactive":
		if s.Interactive == nil {
			return "", nil, 131008, "The parameter interactive is required."
		}
		controls, code, details := s.Interactive.validate()
		if code != 0 {
			return "", nil, code, details
		}
		return s.Interactive.Body.Text, controls, 0, ""
	case "template":
		if s.Template == nil {
			return "", nil, 131008, "The parameter template is required."
		}
		text, code, details := s.Template.validate()
		return text, nil, code, details
	case "image", "document", "audio", "video":
		return s.validateMedia()
	default:
		return "", nil, 131051, "Message type " + strconv.Quote(s.Type) + " is not supported by this fake."
	}
}

func (in *interactive) validate() ([]fakeapi.Control, int, string) {
	if in.Body == nil || strings.TrimSpace(in.Body.Text) == "" {
		return nil, 131008, "The parameter interactive['body']['text'] is required."
	}
	var controls []fakeapi.Control
	switch in.Type {
	case "button":
		if units(in.Body.Text) > ButtonBodyLimit {
			return nil, 131009, "Body text length invalid. Should be at most " + strconv.Itoa(ButtonBodyLimit) + " characters."
		}
		n := len(in.Action.Buttons)
		if n < 1 || n > MaxButtons {
			return nil, 131009, "Buttons count invalid. Should be between 1 and " + strconv.Itoa(MaxButtons) + "."
		}
		ids, titles := map[string]bool{}, map[string]bool{}
		for i, bt := range in.Action.Buttons {
			switch id, t := bt.Reply.ID, bt.Reply.Title; {
			case bt.Type != "reply":
				return nil, 100, "Param action['buttons'][" + strconv.Itoa(i) + "]['type'] must be reply."
			case id == "" || len(id) > ButtonIDLimit:
				return nil, 131009, "Button id length invalid. Should be between 1 and " + strconv.Itoa(ButtonIDLimit) + " characters."
			case strings.TrimSpace(t) == "" || units(t) > ButtonTitleLimit:
				return nil, 131009, "Button title length invalid. Should be between 1 and " + strconv.Itoa(ButtonTitleLimit) + " characters."
			case ids[id]:
				return nil, 131009, "Button ids must be unique."
			case titles[t]:
				return nil, 131009, "Button titles must be unique."
			}
			ids[bt.Reply.ID], titles[bt.Reply.Title] = true, true
			controls = append(controls, fakeapi.Control{Label: bt.Reply.Title, Data: bt.Reply.ID})
		}
	case "list":
		a := in.Action
		switch {
		case units(in.Body.Text) > ListBodyLimit:
			return nil, 131009, "Body text length invalid. Should be at most " + strconv.Itoa(ListBodyLimit) + " characters."
		case strings.TrimSpace(a.Button) == "" || units(a.Button) > ButtonTitleLimit:
			return nil, 131009, "Button label length invalid. Should be between 1 and " + strconv.Itoa(ButtonTitleLimit) + " characters."
		case len(a.Sections) < 1 || len(a.Sections) > MaxSections:
			return nil, 131009, "Sections count invalid. Should be between 1 and " + strconv.Itoa(MaxSections) + "."
		}
		ids := map[string]bool{}
		rows := 0
		for _, sec := range a.Sections {
			if len(a.Sections) > 1 && (sec.Title == "" || units(sec.Title) > RowTitleLimit) {
				return nil, 131009, "Section title is required with more than one section, at most " + strconv.Itoa(RowTitleLimit) + " characters."
			}
			if len(sec.Rows) == 0 {
				return nil, 131009, "A section needs at least one row."
			}
			for _, row := range sec.Rows {
				rows++
				switch {
				case row.ID == "" || len(row.ID) > RowIDLimit:
					return nil, 131009, "Row id length invalid. Should be between 1 and " + strconv.Itoa(RowIDLimit) + " characters."
				case ids[row.ID]:
					return nil, 131009, "Row ids must be unique."
				case strings.TrimSpace(row.Title) == "" || units(row.Title) > RowTitleLimit:
					return nil, 131009, "Row title length invalid. Should be between 1 and " + strconv.Itoa(RowTitleLimit) + " characters."
				case units(row.Description) > RowDescriptionLimit:
					return nil, 131009, "Row description length invalid. Should be at most " + strconv.Itoa(RowDescriptionLimit) + " characters."
				}
				ids[row.ID] = true
				label := row.Title
				if row.Description != "" {
					label += ": " + row.Description
				}
				controls = append(controls, fakeapi.Control{Label: label, Data: row.ID})
			}
		}
		if rows > MaxRows {
			return nil, 131009, "Total row count exceed max allowed count: " + strconv.Itoa(MaxRows) + "."
		}
	default:
		return nil, 100, "Param interactive['type'] must be button or list in this fake."
	}
	return controls, 0, ""
}

// units counts s in UTF-16 code units.
func units(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// wamids issues WhatsApp message ids: "wamid." and a base64 blob that
// names the chat and a sequence, unique per fake.
type wamids map[string]int64

func (w wamids) Next(chat string, _ time.Time) string {
	w[""]++
	blob := fmt.Sprintf("\x15%s\x15\x02\x00\x12\x18\x14FAKE%016X", chat, w[""])
	return "wamid." + base64.StdEncoding.EncodeToString([]byte(blob))
}

// Reply is a person's use of a control on an interactive message the
// business sent: a reply button's press or a list row's choice, as the
// messages webhook delivers it (Body), to sign with Sign.
type Reply struct {
	// WABA is the WhatsApp Business Account's id (the entry's id).
	WABA string
	// PhoneNumberID and DisplayPhoneNumber are the business number's.
	PhoneNumberID, DisplayPhoneNumber string
	// From is the person's wa_id, Name their profile name.
	From, Name string
	// ID is the reply's own wamid; Question the interactive message's
	// (context.id).
	ID, Question string
	// Data is the button's or row's id, Title what it showed.
	Data, Title string
	// List makes it a list_reply; else a button_reply.
	List bool
	// At is when it was sent.
	At time.Time
}

// Body is the webhook's body.
func (r Reply) Body() []byte {
	kind, reply := "button_reply", map[string]string{"id": r.Data, "title": r.Title}
	if r.List {
		kind = "list_reply"
	}
	msg := map[string]any{
		"context":     map[string]string{"from": r.DisplayPhoneNumber, "id": r.Question},
		"from":        r.From,
		"id":          r.ID,
		"timestamp":   strconv.FormatInt(r.At.Unix(), 10),
		"type":        "interactive",
		"interactive": map[string]any{"type": kind, kind: reply},
	}
	value := map[string]any{
		"messaging_product": "whatsapp",
		"metadata":          map[string]string{"display_phone_number": r.DisplayPhoneNumber, "phone_number_id": r.PhoneNumberID},
		"contacts":          []map[string]any{{"profile": map[string]string{"name": r.Name}, "wa_id": r.From}},
		"messages":          []map[string]any{msg},
	}
	b, _ := json.Marshal(map[string]any{
		"object": "whatsapp_business_account",
		"entry":  []map[string]any{{"id": r.WABA, "changes": []map[string]any{{"value": value, "field": "messages"}}}},
	})
	return b
}

// Status is WhatsApp's report on a message the business sent, as the
// messages webhook delivers it (Body), to sign with Sign.
type Status struct {
	// WABA is the WhatsApp Business Account's id (the entry's id).
	WABA string
	// PhoneNumberID and DisplayPhoneNumber are the business number's.
	PhoneNumberID, DisplayPhoneNumber string
	// ID is the reported message's wamid, To its recipient's wa_id.
	ID, To string
	// State is sent, delivered, read or failed.
	State string
	// Tag is the send's biz_opaque_callback_data, echoed; empty for none.
	Tag string
	// Code and Title are a failed status's error.
	Code  int
	Title string
	// At is when the state was reached.
	At time.Time
}

// Body is the webhook's body.
func (s Status) Body() []byte {
	st := map[string]any{
		"id":           s.ID,
		"status":       s.State,
		"timestamp":    strconv.FormatInt(s.At.Unix(), 10),
		"recipient_id": s.To,
	}
	if s.Tag != "" {
		st["biz_opaque_callback_data"] = s.Tag
	}
	if s.Code != 0 {
		st["errors"] = []map[string]any{{"code": s.Code, "title": s.Title, "message": s.Title}}
	}
	value := map[string]any{
		"messaging_product": "whatsapp",
		"metadata":          map[string]string{"display_phone_number": s.DisplayPhoneNumber, "phone_number_id": s.PhoneNumberID},
		"statuses":          []map[string]any{st},
	}
	b, _ := json.Marshal(map[string]any{
		"object": "whatsapp_business_account",
		"entry":  []map[string]any{{"id": s.WABA, "changes": []map[string]any{{"value": value, "field": "messages"}}}},
	})
	return b
}
