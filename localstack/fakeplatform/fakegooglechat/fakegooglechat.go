// Package fakegooglechat is a fake Google Chat for a Chat app with an HTTP
// endpoint: the Chat API's spaces.messages.create and patch, validating as
// Chat does (the app's token, the space, 32,000 bytes of text and cards,
// empty messages) and answering in Google's error format; requestId
// idempotency (a requestId seen in a space returns the message it created,
// creating nothing); Google's OAuth token endpoint for a service account's
// signed JWT assertion (2-legged OAuth); and the two issuers whose
// rotatable keys sign what Chat sends the app: the Chat service account
// (project-number tokens, Sign) and Google's OIDC (ID tokens, SignIDToken).
//
// It serves, below its root:
//
//	POST  /v1/spaces/{space}/messages[?requestId=…&messageReplyOption=…]
//	PATCH /v1/spaces/{space}/messages/{message}?updateMask=text,cardsV2
//	GET   /v1/media/{resourceName}?alt=media       a file a person uploaded (AddAttachment)
//	POST  /token                                   the service account's token
//	GET   /chatkeys/v1/.well-known/keys            the Chat service account's keys
//	GET   /googlekeys/v1/.well-known/keys          Google's ID-token keys
//
// Chat API: https://developers.google.com/workspace/chat/api/reference/rest
package fakegooglechat

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

	"github.com/golang-jwt/jwt/v5"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeissuer"
	"github.com/parleyhq/parley/shared/message"
)

// What the fake signs and limits.
const (
	// ChatIssuer is the iss of project-number tokens.
	ChatIssuer = "chat@system.gserviceaccount.com"
	// GoogleIssuer is the iss of ID tokens.
	GoogleIssuer = "https://accounts.google.com"
	// MaxMessage is Chat's limit on a message's text and cards, in bytes.
	MaxMessage = 32000
	// TokenLife is how long its tokens live.
	TokenLife = time.Hour
	// Paths below the fake's root.
	TokenPath      = "/token"
	ChatKeysPath   = "/chatkeys" + fakeissuer.KeysPath
	GoogleKeysPath = "/googlekeys" + fakeissuer.KeysPath
	scope          = "https://www.googleapis.com/auth/chat.bot"
)

// Options configure an API.
type Options struct {
	// ProjectNumber is the app's project. Defaults to the test one.
	ProjectNumber string
	// Recorder records what the API accepts and holds its faults.
	Recorder *fakeapi.Recorder
	// ChatIssuer signs project-number tokens. Defaults to NewChatIssuer.
	ChatIssuer *fakeissuer.Issuer
	// GoogleIssuer signs ID tokens. Defaults to a new one.
	GoogleIssuer *fakeissuer.Issuer
}

// API is the fake Google Chat. It is safe for concurrent use.
type API struct {
	fakeapi.Base
	opt    Options
	google *fakeissuer.Issuer
	mux    *http.ServeMux

	mu         sync.Mutex
	tokens     map[string]time.Time
	messages   map[string]string // name → text
	requests   map[string]string // space + requestId → message name
	gone       map[string]bool   // spaces the app was removed from
	tokenCalls atomic.Int64
	seq        atomic.Int64
	// files are the files people uploaded, by resource name (media.go).
	files fakefiles.Store
}

// NewChatIssuer is the fake Chat service account issuer, its first key a
// fixed test key, so that a process other than the fake (make post) signs
// what the running fake's keys verify.
func NewChatIssuer() *fakeissuer.Issuer {
	return fakeissuer.New(fakeissuer.Options{Issuer: ChatIssuer, Key: chatKey(), KeyID: ChatKeyID})
}

// New returns an API.
func New(opt Options) *API {
	if opt.ProjectNumber == "" {
		opt.ProjectNumber = ProjectNumber
	}
	if opt.Recorder == nil {
		opt.Recorder = fakeapi.New(fakeapi.Options{})
	}
	if opt.ChatIssuer == nil {
		opt.ChatIssuer = NewChatIssuer()
	}
	if opt.GoogleIssuer == nil {
		opt.GoogleIssuer = fakeissuer.New(fakeissuer.Options{Issuer: GoogleIssuer})
	}
	a := &API{
		opt: opt, google: opt.GoogleIssuer, mux: http.NewServeMux(),
		tokens: map[string]time.Time{}, messages: map[string]string{}, requests: map[string]string{}, gone: map[string]bool{},
	}
	a.Base = fakeapi.NewBase(fakeapi.Config{Token: "unused", Recorder: opt.Recorder}, nil)
	a.mux.HandleFunc("POST /v1/spaces/{space}/messages", a.create)
	a.mux.HandleFunc("PATCH /v1/spaces/{space}/messages/{msg}", a.patch)
	a.mux.HandleFunc("POST "+TokenPath, a.token)
	a.mux.HandleFunc("GET /v1/media/{resource...}", a.media)
	a.mux.Handle("/chatkeys/", http.StripPrefix("/chatkeys", opt.ChatIssuer))
	a.mux.Handle("/googlekeys/", http.StripPrefix("/googlekeys", a.google))
	return a
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// ChatIssuer signs project-number tokens (rotate its keys, take it down).
func (a *API) ChatIssuer() *fakeissuer.Issuer { return a.opt.ChatIssuer }

// GoogleIssuer signs ID tokens.
func (a *API) GoogleIssuer() *fakeissuer.Issuer { return a.google }

// TokenCalls is how many tokens the service account was given.
func (a *API) TokenCalls() int64 { return a.tokenCalls.Load() }

// Remove makes space one the app is no member of: sends there are refused
// 403 PERMISSION_DENIED.
func (a *API) Remove(space string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gone[space] = true
}

// Sign returns the headers Chat sends the app with an event when its
// authentication audience is the project number.
func (a *API) Sign(at time.Time) http.Header {
	return SignFor(a.opt.ChatIssuer, a.opt.ProjectNumber, at)
}

// SignFor is a project-number token of iss for project, issued at at.
func SignFor(iss *fakeissuer.Issuer, project string, at time.Time) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "Google-Dynamite")
	h.Set("Authorization", "Bearer "+iss.Sign(iss.Claims(project, at, TokenLife)))
	return h
}

// SignIDToken returns the headers Chat sends when the app's audience is
// its endpoint URL: a Google ID token for url, of the Chat service account.
func (a *API) SignIDToken(url string, at time.Time) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Authorization", "Bearer "+a.google.Sign(struct {
		jwt.RegisteredClaims
		Email         string `json:"email"`
		EmailVerified bool   `json:"email_verified"`
	}{a.google.Claims(url, at, TokenLife), ChatIssuer, true}))
	return h
}

// token is Google's OAuth endpoint for a service account's assertion.
func (a *API) token(w http.ResponseWriter, r *http.Request) {
	a.tokenCalls.Add(1)
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type.")
		return
	}
	var c struct {
		jwt.RegisteredClaims
		Scope string `json:"scope"`
	}
	_, err := jwt.ParseWithClaims(r.PostForm.Get("assertion"), &c, func(*jwt.Token) (any, error) {
		return &ServiceAccountKey().PublicKey, nil
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired())
	switch {
	case err != nil || c.Issuer != ClientEmail:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "Invalid JWT Signature.")
	case !strings.Contains(" "+c.Scope+" ", " "+scope+" "):
		oauthError(w, http.StatusBadRequest, "invalid_scope", "Invalid OAuth scope or ID token audience provided.")
	default:
		var b [16]byte
		_, _ = rand.Read(b[:])
		tok := "ya29.fake-googlechat-" + hex.EncodeToString(b[:])
		a.mu.Lock()
		a.tokens[tok] = a.Recorder().Now().Add(TokenLife)
		a.mu.Unlock()
		fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"access_token": tok, "expires_in": int(TokenLife / time.Second), "token_type": "Bearer"})
	}
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	fakeapi.WriteJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// authorized checks the app's token, answering Google's 401.
func (a *API) authorized(w http.ResponseWriter, r *http.Request) bool {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	a.mu.Lock()
	exp, ok := a.tokens[tok]
	a.mu.Unlock()
	if !strings.EqualFold(scheme, "Bearer") || !ok || !a.Recorder().Now().Before(exp) {
		googleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
		a.Recorder().Refused()
		return false
	}
	return true
}

// chatMessage is what the fake reads of a message.
type chatMessage struct {
	Text   string `json:"text"`
	Thread *struct {
		Name string `json:"name"`
	} `json:"thread"`
	CardsV2              json.RawMessage `json:"cardsV2"`
	PrivateMessageViewer *struct {
		Name string `json:"name"`
	} `json:"privateMessageViewer"`
}

// fixed issues one id chosen beforehand.
type fixed struct{ id *string }

func (f fixed) Next(string, time.Time) string { return *f.id }

// create is spaces.messages.create.
func (a *API) create(w http.ResponseWriter, r *http.Request) {
	if !a.authorized(w, r) {
		return
	}
	space := "spaces/" + r.PathValue("space")
	body, msg, ok := readMessage(w, r)
	if !ok {
		a.Recorder().Refused()
		return
	}
	q := r.URL.Query()
	requestID := q.Get("requestId")
	var name string
	a.Recorder().Handle(w, fakeapi.Send{
		Platform: message.GoogleChat,
		Chat:     space,
		IDs:      fixed{&name},
		Fail:     failWith,
		Accept: func(w http.ResponseWriter) (fakeapi.Delivery, bool) {
			if a.refusedSpace(w, space) || !validMessage(w, msg) {
				return fakeapi.Delivery{}, false
			}
			thread := ""
			if msg.Thread != nil && msg.Thread.Name != "" {
				t, ok := strings.CutPrefix(msg.Thread.Name, space+"/threads/")
				if !ok || t == "" {
					googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid thread name.")
					return fakeapi.Delivery{}, false
				}
				thread = t
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			if prev, seen := a.requests[space+"\x00"+requestID]; requestID != "" && seen {
				// Chat returns the message this requestId created.
				fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"name": prev, "text": a.messages[prev], "space": map[string]string{"name": space}})
				return fakeapi.Delivery{}, false
			}
			n := a.seq.Add(1)
			id := strconv.FormatInt(n, 36)
			name = space + "/messages/" + id + "." + id
			a.messages[name] = msg.Text
			if requestID != "" {
				a.requests[space+"\x00"+requestID] = name
			}
			d := fakeapi.Delivery{Chat: space, Thread: thread, Text: msg.Text, Args: argsOf(body), Controls: controlsOf(msg.CardsV2)}
			if msg.PrivateMessageViewer != nil {
				a.Recorder().Notified(fakeapi.Notice{Platform: message.GoogleChat, Chat: space, User: msg.PrivateMessageViewer.Name, Text: msg.Text})
				fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"name": name, "text": msg.Text})
				return fakeapi.Delivery{}, false
			}
			return d, true
		},
		Answer: func(w http.ResponseWriter, d fakeapi.Delivery) {
			out := map[string]any{"name": d.MessageID, "text": d.Text, "space": map[string]string{"name": space}}
			if d.Thread != "" {
				out["thread"] = map[string]string{"name": space + "/threads/" + d.Thread}
			}
			fakeapi.WriteJSON(w, http.StatusOK, out)
		},
	})
}

// patch is spaces.messages.patch.
func (a *API) patch(w http.ResponseWriter, r *http.Request) {
	if !a.authorized(w, r) {
		return
	}
	space := "spaces/" + r.PathValue("space")
	name := space + "/messages/" + r.PathValue("msg")
	_, msg, ok := readMessage(w, r)
	if !ok || a.refusedSpace(w, space) || !validMessage(w, msg) {
		a.Recorder().Refused()
		return
	}
	if mask := r.URL.Query().Get("updateMask"); mask == "" {
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "updateMask is required.")
		a.Recorder().Refused()
		return
	}
	a.mu.Lock()
	_, known := a.messages[name]
	if known {
		a.messages[name] = msg.Text
	}
	a.mu.Unlock()
	if !known {
		googleError(w, http.StatusNotFound, "NOT_FOUND", "Message not found.")
		a.Recorder().Refused()
		return
	}
	a.Recorder().Edited(fakeapi.Edit{Platform: message.GoogleChat, Chat: space, MessageID: name, Text: msg.Text, Controls: controlsOf(msg.CardsV2)})
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{"name": name, "text": msg.Text})
}

func readMessage(w http.ResponseWriter, r *http.Request) ([]byte, chatMessage, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4*MaxMessage))
	var msg chatMessage
	if err != nil || json.Unmarshal(body, &msg) != nil {
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received.")
		return nil, msg, false
	}
	return body, msg, true
}

func (a *API) refusedSpace(w http.ResponseWriter, space string) bool {
	a.mu.Lock()
	gone := a.gone[space]
	a.mu.Unlock()
	if gone {
		googleError(w, http.StatusForbidden, "PERMISSION_DENIED", "The caller does not have permission.")
		return true
	}
	return false
}

// validMessage answers 400 for what Chat refuses.
func validMessage(w http.ResponseWriter, msg chatMessage) bool {
	cards := len(msg.CardsV2)
	if string(msg.CardsV2) == "null" || string(msg.CardsV2) == "[]" {
		cards = 0
	}
	switch {
	case msg.Text == "" && cards == 0:
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Message cannot be empty.")
	case len(msg.Text)+cards > MaxMessage:
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Message exceeds the maximum size of 32000 bytes.")
	default:
		return true
	}
	return false
}

// controlsOf are a card's buttons and selection items, each with the data
// a click of it carries (a selection item's with ChoicePrefix).
func controlsOf(raw json.RawMessage) []fakeapi.Control {
	var cards []struct {
		Card struct {
			Sections []struct {
				Widgets []struct {
					SelectionInput *struct {
						Items []struct {
							Text, Value string
						} `json:"items"`
					} `json:"selectionInput"`
					ButtonList *struct {
						Buttons []struct {
							Text    string `json:"text"`
							OnClick struct {
								Action struct {
									Parameters []struct{ Key, Value string } `json:"parameters"`
								} `json:"action"`
							} `json:"onClick"`
						} `json:"buttons"`
					} `json:"buttonList"`
				} `json:"widgets"`
			} `json:"sections"`
		} `json:"card"`
	}
	_ = json.Unmarshal(raw, &cards)
	var out []fakeapi.Control
	for _, c := range cards {
		for _, s := range c.Card.Sections {
			for _, wd := range s.Widgets {
				if wd.SelectionInput != nil {
					for _, it := range wd.SelectionInput.Items {
						out = append(out, fakeapi.Control{Label: it.Text, Data: ChoicePrefix + it.Value})
					}
				}
				if wd.ButtonList != nil {
					for _, b := range wd.ButtonList.Buttons {
						data := ""
						for _, p := range b.OnClick.Action.Parameters {
							if p.Key == "data" {
								data = p.Value
							}
						}
						out = append(out, fakeapi.Control{Label: b.Text, Data: data})
					}
				}
			}
		}
	}
	return out
}

// ChoicePrefix marks a recorded control that is an item of a card's
// selection input (submitted with its Send button), not a button.
const ChoicePrefix = "choice:"

func argsOf(body []byte) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	_ = json.Unmarshal(body, &out)
	return out
}

// statusNames are Google's canonical statuses of the HTTP codes a fault
// sets; a fault's Error names a status itself.
var statusNames = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	409: "ALREADY_EXISTS", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}

var statusCodes = map[string]int{
	"INVALID_ARGUMENT": 400, "FAILED_PRECONDITION": 400, "UNAUTHENTICATED": 401, "PERMISSION_DENIED": 403,
	"NOT_FOUND": 404, "ALREADY_EXISTS": 409, "ABORTED": 409, "RESOURCE_EXHAUSTED": 429, "INTERNAL": 500,
	"UNAVAILABLE": 503, "DEADLINE_EXCEEDED": 504,
}

// failWith answers a fault in Google's error format.
func failWith(w http.ResponseWriter, f fakeapi.Fault) {
	status := f.Status
	if status == 0 {
		status = statusCodes[f.Error]
	}
	if status == 0 {
		status = http.StatusBadRequest
	}
	name := f.Error
	if name == "" {
		name = statusNames[status]
	}
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(f.RetryAfterSeconds(), 10))
	}
	if name == "" {
		http.Error(w, http.StatusText(status), status)
		return
	}
	googleError(w, status, name, http.StatusText(status))
}

func googleError(w http.ResponseWriter, status int, name, msg string) {
	fakeapi.WriteJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": name}})
}
