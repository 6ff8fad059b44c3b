package teams

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeissuer"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/jwks"
)

// The test identities of events/teams (see its README).
const (
	testApp      = faketeams.AppID
	testTenant   = faketeams.TenantID
	testPassword = faketeams.Password
	eventsDir    = "../../../events/teams"
	sampleSvc    = "https://smba.trafficmanager.net/amer/"
	personalConv = "a:1personal0ada00000000000000000000000000000000000000000000000000001"
	groupConv    = "19:group0000000000000000000000000001@thread.v2"
	channel      = "19:c0ffee00000000000000000000000001@thread.tacv2"
	ada          = "29:1ada00000000000000000000000000000000000000000000000000000000000042"
	grace        = "29:1grace000000000000000000000000000000000000000000000000000000000043"
)

// sampleNow is when the samples are signed and received: after the last
// of them.
var sampleNow = time.Date(2025, 11, 29, 16, 5, 0, 0, time.UTC)

var (
	personal = message.Thread{Platform: message.Teams, Account: testApp, Chat: personalConv}
	group    = message.Thread{Platform: message.Teams, Account: testApp, Chat: groupConv}
	thread   = message.Thread{Platform: message.Teams, Account: testApp, Chat: channel, Thread: "1764431000000"}
)

// issuer is the Bot Framework's fake issuer every test of the package
// shares, served once.
var issuer = sync.OnceValues(func() (*fakeissuer.Issuer, string) {
	iss := fakeissuer.New(fakeissuer.Options{Issuer: Issuer, Endorsements: []string{TeamsChannelID}})
	srv := httptest.NewServer(iss)
	return iss, srv.URL + fakeissuer.MetadataPath
})

// signed is body as the connector sends it at at, received at now.
func signed(body []byte, at, now time.Time) *platform.Request {
	iss, _ := issuer()
	return &platform.Request{Method: http.MethodPost, Header: faketeams.SignFor(iss, testApp, body, at), Body: body, Now: now}
}

func testReceiver(t testing.TB) *Receiver {
	t.Helper()
	_, meta := issuer()
	return &Receiver{AppID: testApp, TenantID: testTenant, Keys: jwks.New(jwks.Source{MetadataURL: meta})}
}
