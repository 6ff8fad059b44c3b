package teams

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

const (
	// DefaultLoginURL is Microsoft Entra's root.
	DefaultLoginURL = "https://login.microsoftonline.com"
	// Scope is what a bot's token is for: the Bot Connector.
	Scope = "https://api.botframework.com/.default"
	// TokenMargin is how long before its expiry a cached token is
	// replaced: a send never leaves with a token about to lapse.
	TokenMargin = 5 * time.Minute
)

// TokenURL is the client-credentials endpoint of tenant below login: a
// single-tenant bot's own tenant (Azure creates new bots single-tenant).
func TokenURL(login, tenant string) string {
	return strings.TrimRight(login, "/") + "/" + tenant + "/oauth2/v2.0/token"
}

// tokens is an app token cache: one token, fetched with the client
// credentials flow (golang.org/x/oauth2/clientcredentials) under the
// caller's context, kept until TokenMargin before it expires.
type tokens struct {
	cfg  clientcredentials.Config
	http *http.Client
	now  func() time.Time

	mu  sync.Mutex
	tok *oauth2.Token
}

func newTokens(appID, secret, tokenURL string, c *http.Client, now func() time.Time) *tokens {
	return &tokens{
		cfg: clientcredentials.Config{
			ClientID: appID, ClientSecret: secret, TokenURL: tokenURL,
			Scopes: []string{Scope}, AuthStyle: oauth2.AuthStyleInParams,
		},
		http: c, now: now,
	}
}

// get returns a token valid for TokenMargin at least. A failure is a
// *message.SendError: nothing was sent to Teams, so it is never unknown.
func (t *tokens) get(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok != nil && t.tok.AccessToken != "" && t.now().Add(TokenMargin).Before(t.tok.Expiry) {
		return t.tok.AccessToken, nil
	}
	if t.http != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, t.http)
	}
	tok, err := t.cfg.Token(ctx)
	if err != nil {
		return "", tokenFailure(ctx, err)
	}
	if tok.Expiry.IsZero() {
		// No expires_in: used for this send only.
		return tok.AccessToken, nil
	}
	t.tok = tok
	return tok.AccessToken, nil
}

// drop forgets the cached token (the connector refused it).
func (t *tokens) drop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tok = nil
}

// tokenFailure classifies a failed token request. Entra's 400 and 401
// (invalid_client: a wrong secret; unauthorized_client; invalid_scope) are
// the configuration: auth. A 429 is a rate limit, anything else (a 5xx, no
// answer) transient: the message itself was never sent.
func tokenFailure(ctx context.Context, err error) error {
	if re, ok := errors.AsType[*oauth2.RetrieveError](err); ok && re.Response != nil {
		st := re.Response.StatusCode
		se := &message.SendError{Class: message.FailTransient, Status: st, Reason: "Entra token: HTTP " + strconv.Itoa(st)}
		if re.ErrorCode != "" {
			se.Reason += " " + platform.Reason(re.ErrorCode)
		}
		switch {
		case st == http.StatusTooManyRequests:
			se.Class, se.RetryAfter = message.FailRateLimit, platform.RetryAfter(re.Response.Header, time.Now())
		case st >= 400 && st < 500:
			se.Class = message.FailAuth
		}
		return se
	}
	if ctx.Err() != nil {
		return &message.SendError{Class: message.FailCancelled, Reason: "Entra token: cancelled", Err: ctx.Err()}
	}
	return &message.SendError{Class: message.FailTransient, Reason: "Entra token: no answer", Err: scrubbed(err)}
}

// scrubbed stands for an oauth2 transport error, which may quote the
// request: nothing of it is kept.
func scrubbed(error) error { return errors.New("token request failed") }
