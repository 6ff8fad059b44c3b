package console

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/operator"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/platform/telegram"
)

//go:embed assets
var assets embed.FS

// Prefix is where the console is served.
const Prefix = "/console/"

// Options configure the console.
type Options struct {
	// Operator reads the records and the log, and decides (resend,
	// abandon, redrive).
	Operator *operator.Operator
	// Recorder is what the fake platforms accepted: what people see.
	Recorder *fakeapi.Recorder
	// Signer signs what the composer posts, as each platform does.
	Signer fakeplatform.Signer
	// Base is the runner's base URL, where webhooks are posted.
	Base string
	// Client posts them. Defaults to a client with a 30-second timeout.
	Client *http.Client
	// AllowRemote serves clients beyond loopback (PARLEY_CONSOLE_ALLOW_REMOTE):
	// off, the console answers loopback only, whatever PARLEY_LISTEN is.
	AllowRemote bool
	// Poll is how often the live stream looks for change. Defaults to 300 ms.
	Poll time.Duration
	Now  func() time.Time
}

// Console is make run's console: an http.Handler under Prefix.
type Console struct {
	opt    Options
	static http.Handler
	seq    atomic.Int64

	mu   sync.Mutex
	said map[string]said // what the composer posted, by event key
}

// said is a person's message or press the console posted: Parley keeps no
// text of what people write, the console remembers what it wrote.
type said struct {
	Thread, ChatType, Text, Sender string
	At                             time.Time
	Press                          bool
}

// New returns the console.
func New(opt Options) (*Console, error) {
	if opt.Operator == nil || opt.Recorder == nil || opt.Base == "" {
		return nil, errors.New("console: Operator, Recorder and Base are required")
	}
	if opt.Client == nil {
		opt.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if opt.Poll == 0 {
		opt.Poll = 300 * time.Millisecond
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	return &Console{opt: opt, static: http.StripPrefix(Prefix, http.FileServerFS(sub)), said: map[string]said{}}, nil
}

// csp allows the page its own script and style, and nothing else: no
// inline script, no other origin, no frame around it.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// ServeHTTP serves the console, to loopback clients only (unless
// AllowRemote), with the page's security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if !c.opt.AllowRemote && (!loopback(r.RemoteAddr) || !loopbackHost(r.Host)) {
		// A page elsewhere that points a browser here (DNS rebinding)
		// names another host.
		http.Error(w, "the console answers on loopback only (PARLEY_CONSOLE_ALLOW_REMOTE=1 serves others)", http.StatusForbidden)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(Prefix, "/"))
	if strings.HasPrefix(path, "/api/") {
		c.api(w, r, strings.TrimPrefix(path, "/api/"))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == strings.TrimSuffix(Prefix, "/") {
		http.Redirect(w, r, Prefix, http.StatusFound)
		return
	}
	c.static.ServeHTTP(w, r)
}

func loopback(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// api serves the console's JSON: reads by GET, decisions by POST, each a
// JSON body with the console's own header, which a page of another origin
// cannot send without a preflight the console never answers.
func (c *Console) api(w http.ResponseWriter, r *http.Request, route string) {
	if r.Method == http.MethodPost {
		if r.Header.Get("X-Parley-Console") != "1" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			problem(w, http.StatusForbidden, "a console request carries X-Parley-Console: 1 and a JSON body")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
			problem(w, http.StatusForbidden, "another origin")
			return
		}
	}
	ctx := r.Context()
	switch {
	case route == "state" && r.Method == http.MethodGet:
		st, err := c.state(ctx)
		reply(w, st, err)
	case route == "message" && r.Method == http.MethodGet:
		tl, err := c.opt.Operator.Message(ctx, r.URL.Query().Get("key"))
		reply(w, tl, err)
	case route == "events" && r.Method == http.MethodGet:
		c.events(w, r)
	case route == "say" && r.Method == http.MethodPost:
		var in struct {
			Platform message.Platform `json:"platform"`
			ChatType string           `json:"chat_type"`
			Text     string           `json:"text"`
		}
		if !decode(w, r, &in) {
			return
		}
		out, err := c.say(ctx, in.Platform, in.ChatType, in.Text)
		reply(w, out, err)
	case route == "press" && r.Method == http.MethodPost:
		var in struct {
			Platform  message.Platform `json:"platform"`
			Chat      string           `json:"chat"`
			MessageID string           `json:"message_id"`
			Control   int              `json:"control"`
		}
		if !decode(w, r, &in) {
			return
		}
		out, err := c.press(ctx, in.Platform, in.Chat, in.MessageID, in.Control)
		reply(w, out, err)
	case (route == "resend" || route == "abandon") && r.Method == http.MethodPost:
		var in struct {
			Unit string `json:"unit"`
			Yes  bool   `json:"yes"`
		}
		if !decode(w, r, &in) {
			return
		}
		var d operator.Decision
		var err error
		if route == "resend" {
			d, err = c.opt.Operator.Resend(ctx, in.Unit, in.Yes)
		} else {
			d, err = c.opt.Operator.Abandon(ctx, in.Unit)
		}
		reply(w, d, err)
	case route == "redrive" && r.Method == http.MethodPost:
		var in struct {
			Queue  string `json:"queue"`
			MaxAge string `json:"max_age"`
		}
		if !decode(w, r, &in) {
			return
		}
		age, err := time.ParseDuration(in.MaxAge)
		if err != nil {
			problem(w, http.StatusBadRequest, "max_age: want a duration like 1h")
			return
		}
		res, err := c.opt.Operator.Redrive(ctx, in.Queue, age)
		var refused *operator.RefusedError
		if errors.As(err, &refused) {
			writeJSON(w, http.StatusConflict, refused.Result)
			return
		}
		reply(w, res, err)
	default:
		problem(w, http.StatusNotFound, "no such console request")
	}
}

// maxRequest bounds a console request's body.
const maxRequest = 64 << 10

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		problem(w, http.StatusBadRequest, "the request's JSON: "+err.Error())
		return false
	}
	return true
}

func reply(w http.ResponseWriter, v any, err error) {
	var confirm *operator.ConfirmError
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, v)
	case errors.As(err, &confirm):
		writeJSON(w, http.StatusConflict, map[string]string{"confirm": confirm.Risk})
	case errors.Is(err, operator.ErrAmbiguous), errors.Is(err, errBadInput):
		problem(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, operator.ErrNotFound):
		problem(w, http.StatusNotFound, err.Error())
	default:
		problem(w, http.StatusBadGateway, err.Error())
	}
}

func problem(w http.ResponseWriter, status int, detail string) {
	writeJSON(w, status, map[string]string{"error": detail})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// encoding/json escapes <, > and &: a value is data, never markup.
	_ = json.NewEncoder(w).Encode(v)
}

var errBadInput = errors.New("bad input")

// maxText bounds what the composer posts: the largest text any platform
// takes in one message, and then some.
const maxText = 8 << 10

// Posted is what a post of the composer's did.
type Posted struct {
	CorrelationID string `json:"correlation_id"`
	Thread        string `json:"thread"`
	Status        int    `json:"status"`
	Ack           string `json:"ack"`
	Answer        string `json:"answer"`
}

// say posts a person's message, signed as its platform signs it, to the
// runner's webhook of the platform: the production path.
func (c *Console) say(ctx context.Context, p message.Platform, chatType, text string) (Posted, error) {
	if text == "" || len(text) > maxText {
		return Posted{}, fmt.Errorf("%w: want a text of 1 to %d bytes", errBadInput, maxText)
	}
	ok := false
	for _, ct := range fakeplatform.ChatTypes(p) {
		ok = ok || ct == chatType
	}
	if !ok {
		return Posted{}, fmt.Errorf("%w: %s has no %q chat here: want one of %v", errBadInput, p, chatType, fakeplatform.ChatTypes(p))
	}
	now := c.opt.Now()
	w, err := c.opt.Signer.Say(fakeplatform.Said{Platform: p, ChatType: chatType, Text: text, At: now, Seq: c.next(now)})
	if err != nil {
		return Posted{}, err
	}
	return c.post(ctx, w, now, said{ChatType: chatType, Text: text, Sender: "you", At: now})
}

// press presses control index of the message a fake platform delivered.
func (c *Console) press(ctx context.Context, p message.Platform, chat, messageID string, index int) (Posted, error) {
	d, ok := c.delivery(p, chat, messageID)
	if !ok || index < 0 || index >= len(d.Controls) {
		return Posted{}, fmt.Errorf("%w: no control %d on %s message %s in %s", errBadInput, index, p, messageID, chat)
	}
	now := c.opt.Now()
	w, err := c.opt.Signer.Press(fakeplatform.PressOf(d, d.Controls[index]), now, c.next(now))
	if err != nil {
		return Posted{}, err
	}
	return c.post(ctx, w, now, said{Text: d.Controls[index].Label, Sender: "you", At: now, Press: true})
}

// delivery is the message a fake accepted, as its last edit left it.
func (c *Console) delivery(p message.Platform, chat, id string) (fakeapi.Delivery, bool) {
	for _, d := range withEdits(c.opt.Recorder) {
		if d.Platform == p && d.Chat == chat && d.MessageID == id {
			return d.Delivery, true
		}
	}
	return fakeapi.Delivery{}, false
}

func (c *Console) next(now time.Time) int64 {
	return now.UnixMilli()%1_000_000_000*100 + c.seq.Add(1)%100
}

// post parses w with its platform's receiver, to learn the event's key and
// thread, and posts it to the runner; on Telegram it then does what the
// platform does with the webhook's answer (a press's
// answerCallbackQuery).
func (c *Console) post(ctx context.Context, w fakeplatform.Webhook, now time.Time, s said) (Posted, error) {
	ev, err := c.parse(ctx, w, now)
	if err != nil {
		return Posted{}, err
	}
	s.Thread = ev.Thread.Key()
	if s.ChatType == "" {
		s.ChatType = ev.ChatType
	}
	c.mu.Lock()
	c.said[ev.Key()] = s
	c.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.opt.Base+"/"+string(w.Platform), bytes.NewReader(w.Body))
	if err != nil {
		return Posted{}, err
	}
	req.Header = w.Header.Clone()
	resp, err := c.opt.Client.Do(req)
	if err != nil {
		return Posted{}, fmt.Errorf("post the webhook: %w", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	out := Posted{CorrelationID: ev.Key(), Thread: ev.Thread.Key(), Status: resp.StatusCode, Ack: resp.Header.Get("Parley-Ack"), Answer: string(answer)}
	if w.Platform == message.Telegram {
		_ = faketelegram.ActOnAnswer(ctx, c.opt.Client, c.opt.Signer.FakeRoot+"/telegram", c.opt.Signer.Env(telegram.SettingBotToken),
			resp.StatusCode, resp.Header.Get("Content-Type"), answer)
	}
	return out, nil
}

// parse reads the webhook as Parley's receiver will: the one event it
// carries, verified first where the receiver keeps what it verified.
func (c *Console) parse(ctx context.Context, w fakeplatform.Webhook, now time.Time) (message.Event, error) {
	a, ok := registry.Lookup(w.Platform)
	if !ok {
		return message.Event{}, fmt.Errorf("%w: no platform %q", errBadInput, w.Platform)
	}
	r, err := a.NewReceiver(platform.Env(c.opt.Signer.Env))
	if err != nil {
		return message.Event{}, err
	}
	req := &platform.Request{Method: http.MethodPost, Header: w.Header, Body: w.Body, Now: now}
	if cv, ok := r.(platform.ContextVerifier); ok {
		if err := cv.VerifyContext(ctx, req); err != nil {
			return message.Event{}, err
		}
	} else if err := r.Verify(req); err != nil {
		return message.Event{}, err
	}
	parsed, err := r.Parse(req)
	if err != nil {
		return message.Event{}, err
	}
	if len(parsed.Events) != 1 {
		return message.Event{}, fmt.Errorf("the webhook carries %d events, want 1", len(parsed.Events))
	}
	return parsed.Events[0], nil
}
