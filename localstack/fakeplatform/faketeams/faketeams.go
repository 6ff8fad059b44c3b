// Package faketeams is a fake Microsoft Teams for a Bot Framework bot: the
// Bot Connector REST API (activities POST and PUT, typing), validating as
// the connector does (the app token, the conversation, the 40 KB payload
// counted as UTF-16, empty messages) and answering in its error format
// ({"error":{"code":…,"message":…}}, 429 Throttled with Retry-After); a
// fake Microsoft Entra token endpoint (client credentials, per tenant);
// and the Bot Framework's OpenID issuer, whose rotatable keys sign the
// tokens (real RS256 JWTs) of the activities it sends the bot (Sign).
//
// It serves, below its root:
//
//	POST /v3/conversations/{id}/activities            a message, a card, or typing
//	PUT  /v3/conversations/{id}/activities/{activity} replace an activity the bot sent
//	POST /login/{tenant}/oauth2/v2.0/token            Entra: an app token
//	GET  /openid/v1/.well-known/openidconfiguration   the issuer's metadata
//	GET  /openid/v1/.well-known/keys                  its keys (with endorsements)
//
// Connector API: https://learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-api-reference
package faketeams

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeissuer"
	"github.com/parleyhq/parley/shared/message"
)

// Test identities of events/teams (see its README).
const (
	AppID    = "00000000-0000-4000-8000-00000000a001"
	TenantID = "00000000-0000-4000-8000-0000000000e1"
	Password = "fake-teams-app-password"
	// Issuer is the iss of the connector's tokens.
	Issuer = "https://api.botframework.com"
	// MaxPayload is the connector's limit on one activity: 40 KB of UTF-16.
	MaxPayload = 40 << 10
	// TokenLife is how long the issuer's tokens and Entra's app tokens
	// live.
	TokenLife = time.Hour
	// Paths of the issuer and Entra below the fake's root.
	OpenIDPath   = "/openid"
	LoginPath    = "/login"
	MetadataPath = OpenIDPath + fakeissuer.MetadataPath
)

// Options configure an API.
type Options struct {
	// AppID, TenantID and Password are the app the fake knows. Defaults
	// to the test identities.
	AppID, TenantID, Password string
	// Recorder records what the API accepts and holds its faults.
	Recorder *fakeapi.Recorder
	// Issuer signs the activities' tokens. Defaults to one endorsing
	// msteams whose first key is TestKey.
	Issuer *fakeissuer.Issuer
}

// API is the fake Teams. It is safe for concurrent use.
type API struct {
	fakeapi.Base
	opt Options
	mux *http.ServeMux

	mu         sync.Mutex
	tokens     map[string]time.Time // app token → expiry
	activities map[string]string    // conversation + "/" + id → text
	gone       map[string]bool      // conversations the bot was removed from
	tokenCalls atomic.Int64
	lastID     atomic.Int64
	// files are the inline images people sent, by attachment id
	// (attachments.go).
	files fakefiles.Store
}

// New returns an API.
func New(opt Options) *API {
	if opt.AppID == "" {
		opt.AppID, opt.TenantID, opt.Password = AppID, TenantID, Password
	}
	if opt.Recorder == nil {
		opt.Recorder = fakeapi.New(fakeapi.Options{})
	}
	if opt.Issuer == nil {
		opt.Issuer = NewIssuer()
	}
	a := &API{opt: opt, mux: http.NewServeMux(), tokens: map[string]time.Time{}, activities: map[string]string{}, gone: map[string]bool{}}
	a.lastID.Store(1732896000000)
	a.Base = fakeapi.NewBase(fakeapi.Config{Token: "unused", Recorder: opt.Recorder}, activityIDs{a})
	a.mux.HandleFunc("POST /v3/conversations/{conv}/activities", a.post)
	a.mux.HandleFunc("PUT /v3/conversations/{conv}/activities/{id}", a.put)
	a.mux.HandleFunc("GET /v3/attachments/{id}/views/{view}", a.attachment)
	a.mux.HandleFunc("POST "+LoginPath+"/{tenant}/oauth2/v2.0/token", a.token)
	a.mux.Handle(OpenIDPath+"/", http.StripPrefix(OpenIDPath, opt.Issuer))
	return a
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// NewIssuer is the fake Bot Framework issuer: tokens of Issuer, keys
// endorsing msteams, the first of them TestKey.
func NewIssuer() *fakeissuer.Issuer {
	return fakeissuer.New(fakeissuer.Options{Issuer: Issuer, Endorsements: []string{"msteams"}, Key: TestKey(), KeyID: TestKeyID})
}

// Issuer is the fake's OpenID issuer (rotate its keys, take it down).
func (a *API) Issuer() *fakeissuer.Issuer { return a.opt.Issuer }

// SetRoot tells the fake where it is served, so that its issuer's
// metadata names its keys there.
func (a *API) SetRoot(root string) { a.opt.Issuer.SetRoot(strings.TrimRight(root, "/") + OpenIDPath) }

// TokenCalls is how many app tokens Entra was asked for.
func (a *API) TokenCalls() int64 { return a.tokenCalls.Load() }

// Remove makes conversation one the bot is no member of any more: sends
// there are refused 403 BotNotInConversationRoster.
func (a *API) Remove(conversation string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gone[conversation] = true
}

// Sign returns the headers the connector sends a bot with the activity
// body at at: a JWT of the issuer's current key for the app, whose
// serviceurl claim is the activity's serviceUrl.
func (a *API) Sign(body []byte, at time.Time) http.Header {
	return SignFor(a.opt.Issuer, a.opt.AppID, body, at)
}

// SignFor signs body for app with iss's current key, as the connector does.
func SignFor(iss *fakeissuer.Issuer, app string, body []byte, at time.Time) http.Header {
	var head struct {
		ServiceURL string `json:"serviceUrl"`
	}
	_ = json.Unmarshal(body, &head)
	claims := struct {
		jwt.RegisteredClaims
		ServiceURL string `json:"serviceurl,omitempty"`
	}{iss.Claims(app, at, TokenLife), head.ServiceURL}
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Authorization", "Bearer "+iss.Sign(claims))
	return h
}

// token is Entra's client-credentials endpoint.
func (a *API) token(w http.ResponseWriter, r *http.Request) {
	a.tokenCalls.Add(1)
	if err := r.ParseForm(); err != nil {
		entraError(w, http.StatusBadRequest, "invalid_request", "AADSTS900144: The request body must contain the following parameter: 'grant_type'.")
		return
	}
	switch {
	case r.PathValue("tenant") != a.opt.TenantID:
		entraError(w, http.StatusBadRequest, "invalid_tenant", "AADSTS90002: Tenant not found.")
	case r.PostForm.Get("grant_type") != "client_credentials":
		entraError(w, http.StatusBadRequest, "unsupported_grant_type", "AADSTS70003: The app requested an unsupported grant type.")
	case r.PostForm.Get("client_id") != a.opt.AppID:
		entraError(w, http.StatusBadRequest, "unauthorized_client", "AADSTS700016: Application not found in the directory.")
	case r.PostForm.Get("client_secret") != a.opt.Password:
		entraError(w, http.StatusUnauthorized, "invalid_client", "AADSTS7000215: Invalid client secret provided.")
	case r.PostForm.Get("scope") != "https://api.botframework.com/.default":
		entraError(w, http.StatusBadRequest, "invalid_scope", "AADSTS70011: The provided value for the input parameter 'scope' is not valid.")
	default:
		var b [16]byte
		_, _ = rand.Read(b[:])
		tok := "fake-teams-app-token-" + hex.EncodeToString(b[:])
		a.mu.Lock()
		a.tokens[tok] = a.Recorder().Now().Add(TokenLife)
		a.mu.Unlock()
		fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "expires_in": int(TokenLife / time.Second), "ext_expires_in": int(TokenLife / time.Second), "access_token": tok})
	}
}

func entraError(w http.ResponseWriter, status int, code, desc string) {
	fakeapi.WriteJSON(w, status, map[string]any{"error": code, "error_description": desc, "error_codes": []int{}})
}

// authorized checks the app token, answering the connector's 401.
func (a *API) authorized(w http.ResponseWriter, r *http.Request) bool {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	a.mu.Lock()
	exp, ok := a.tokens[tok]
	a.mu.Unlock()
	if !strings.EqualFold(scheme, "Bearer") || !ok || !a.Recorder().Now().Before(exp) {
		connectorError(w, http.StatusUnauthorized, "Unauthorized", "Authorization has been denied for this request.")
		a.Recorder().Refused()
		return false
	}
	return true
}

// post is a message, a card or a typing activity.
func (a *API) post(w http.ResponseWriter, r *http.Request) {
	if !a.authorized(w, r) {
		return
	}
	conv := r.PathValue("conv")
	body, act, ok := readActivity(w, r)
	if !ok {
		a.Recorder().Refused()
		return
	}
	chat, thread, _ := strings.Cut(conv, ";messageid=")
	if act.Type == "typing" {
		if a.refusedConversation(w, conv) {
			a.Recorder().Refused()
			return
		}
		a.Recorder().Act(fakeapi.Action{Platform: message.Teams, Chat: chat, Thread: thread, Action: "typing"})
		fakeapi.WriteJSON(w, http.StatusOK, map[string]string{})
		return
	}
	a.Send(w, fakeapi.Send{
		Platform: message.Teams,
		Chat:     chat,
		Fail:     failWith,
		Accept: func(w http.ResponseWriter) (fakeapi.Delivery, bool) {
			if a.refusedConversation(w, conv) || !validActivity(w, body, act) {
				return fakeapi.Delivery{}, false
			}
			return fakeapi.Delivery{Chat: chat, Thread: thread, Text: textOf(act), ReplyTo: act.ReplyToID, Args: argsOf(body), Controls: controlsOf(act)}, true
		},
		Answer: func(w http.ResponseWriter, d fakeapi.Delivery) {
			a.mu.Lock()
			a.activities[conv+"/"+d.MessageID] = d.Text
			a.mu.Unlock()
			fakeapi.WriteJSON(w, http.StatusCreated, map[string]string{"id": d.MessageID})
		},
	})
}

// put replaces an activity the bot sent.
func (a *API) put(w http.ResponseWriter, r *http.Request) {
	if !a.authorized(w, r) {
		return
	}
	conv, id := r.PathValue("conv"), r.PathValue("id")
	body, act, ok := readActivity(w, r)
	if !ok || a.refusedConversation(w, conv) || !validActivity(w, body, act) {
		a.Recorder().Refused()
		return
	}
	a.mu.Lock()
	_, known := a.activities[conv+"/"+id]
	if known {
		a.activities[conv+"/"+id] = act.Text
	}
	a.mu.Unlock()
	if !known {
		connectorError(w, http.StatusNotFound, "ActivityNotFoundInConversation", "The activity was not found in the conversation.")
		a.Recorder().Refused()
		return
	}
	chat, _, _ := strings.Cut(conv, ";messageid=")
	a.Recorder().Edited(fakeapi.Edit{Platform: message.Teams, Chat: chat, MessageID: id, Text: textOf(act), Controls: controlsOf(act)})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]string{"id": id})
}

// activityIDs issues activity ids as Teams writes a message's: the
// millisecond it was posted, increasing across conversations.
type activityIDs struct{ a *API }

func (ids activityIDs) Next(string, time.Time) string {
	return strconv.FormatInt(ids.a.lastID.Add(1), 10)
}

// activity is what the fake reads of an activity.
type activity struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	TextFormat  string `json:"textFormat"`
	ReplyToID   string `json:"replyToId"`
	Attachments []struct {
		ContentType string          `json:"contentType"`
		ContentURL  string          `json:"contentUrl"`
		Content     json.RawMessage `json:"content"`
	} `json:"attachments"`
	Entities []json.RawMessage `json:"entities"`
}

func readActivity(w http.ResponseWriter, r *http.Request) ([]byte, activity, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4*MaxPayload))
	var act activity
	if err != nil || json.Unmarshal(body, &act) != nil {
		connectorError(w, http.StatusBadRequest, "BadSyntax", "The request body is not a valid activity.")
		return nil, act, false
	}
	return body, act, true
}

// refusedConversation answers for a conversation the bot cannot post
// into: one it was removed from (403), or an id no conversation has (404).
func (a *API) refusedConversation(w http.ResponseWriter, conv string) bool {
	a.mu.Lock()
	gone := a.gone[conv]
	a.mu.Unlock()
	switch {
	case gone:
		connectorError(w, http.StatusForbidden, "BotNotInConversationRoster", "The bot is not part of the conversation roster.")
	case !validConversation(conv):
		connectorError(w, http.StatusNotFound, "ConversationNotFound", "Conversation not found.")
	default:
		return false
	}
	return true
}

// validConversation: personal chats are "a:…", group chats and channels
// "19:…@thread…".
func validConversation(conv string) bool {
	chat, _, _ := strings.Cut(conv, ";messageid=")
	return strings.HasPrefix(chat, "a:") || (strings.HasPrefix(chat, "19:") && strings.Contains(chat, "@thread."))
}

// validActivity answers 400 or 413 for what the connector refuses.
func validActivity(w http.ResponseWriter, body []byte, act activity) bool {
	switch {
	case act.Type != "message":
		connectorError(w, http.StatusBadRequest, "BadArgument", "Unknown activity type.")
	case act.Text == "" && len(act.Attachments) == 0:
		connectorError(w, http.StatusBadRequest, "BadArgument", "The message has no text and no attachments.")
	case len(utf16.Encode([]rune(string(body))))*2 > MaxPayload:
		connectorError(w, http.StatusRequestEntityTooLarge, "MessageSizeTooBig", "The message size exceeds the limit.")
	case !validPictures(act):
		connectorError(w, http.StatusBadRequest, "BadArgument", "An image attachment needs an https contentUrl.")
	default:
		return true
	}
	return false
}

// textOf is what Teams shows of an activity: its text, or its card's
// TextRuns.
func textOf(act activity) string {
	if act.Text != "" {
		return act.Text
	}
	var parts []string
	for _, at := range act.Attachments {
		if picture(at.ContentType) {
			parts = append(parts, ImageText(at.ContentURL))
			continue
		}
		var card struct {
			Body []struct {
				Type    string `json:"type"`
				Text    string `json:"text"`
				Inlines []struct {
					Text string `json:"text"`
				} `json:"inlines"`
			} `json:"body"`
		}
		_ = json.Unmarshal(at.Content, &card)
		for _, b := range card.Body {
			for _, in := range b.Inlines {
				parts = append(parts, in.Text)
			}
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// controlsOf are a card's buttons, then its choice set's choices, each
// with the data a press of it submits.
func controlsOf(act activity) []fakeapi.Control {
	var out []fakeapi.Control
	for _, at := range act.Attachments {
		var card struct {
			Body []struct {
				Type    string `json:"type"`
				Choices []struct {
					Title string `json:"title"`
					Value string `json:"value"`
				} `json:"choices"`
			} `json:"body"`
			Actions []struct {
				Title string            `json:"title"`
				Data  map[string]string `json:"data"`
			} `json:"actions"`
		}
		_ = json.Unmarshal(at.Content, &card)
		for _, b := range card.Body {
			for _, c := range b.Choices {
				out = append(out, fakeapi.Control{Label: c.Title, Data: ChoicePrefix + c.Value})
			}
		}
		for _, ac := range card.Actions {
			out = append(out, fakeapi.Control{Label: ac.Title, Data: ac.Data["parley"]})
		}
	}
	return out
}

// ChoicePrefix marks a recorded control that is a choice of a card's
// choice set (submitted with the card's submit button), not a button.
const ChoicePrefix = "choice:"

func argsOf(body []byte) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	_ = json.Unmarshal(body, &out)
	return out
}

// codeStatus is the HTTP status of each connector error code a fault
// names.
var codeStatus = map[string]int{
	"BadArgument": 400, "BadSyntax": 400,
	"Unauthorized": 401, "BotNotRegistered": 401,
	"ConversationBlockedByUser": 403, "BotNotInConversationRoster": 403, "BotDisabledByAdmin": 403, "Forbidden": 403,
	"ConversationNotFound": 404, "NotFound": 404,
	"PreconditionFailed": 412, "MessageSizeTooBig": 413, "Throttled": 429,
	"ServiceError": 500, "BadGateway": 502, "GatewayTimeout": 504,
}

// failWith answers a fault in the connector's format.
func failWith(w http.ResponseWriter, f fakeapi.Fault) {
	status := f.Status
	if status == 0 {
		status = codeStatus[f.Error]
	}
	if status == 0 {
		status = http.StatusBadRequest
	}
	code := f.Error
	if code == "" {
		code = map[int]string{429: "Throttled", 412: "PreconditionFailed", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 413: "MessageSizeTooBig", 400: "BadArgument"}[status]
	}
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(f.RetryAfterSeconds(), 10))
	}
	if code == "" {
		// An edge's page: no connector body.
		http.Error(w, http.StatusText(status), status)
		return
	}
	connectorError(w, status, code, http.StatusText(status))
}

func connectorError(w http.ResponseWriter, status int, code, msg string) {
	fakeapi.WriteJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}
