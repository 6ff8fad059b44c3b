package googlechat

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeissuer"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/platform/jwks"
)

// The test identities of events/googlechat (see its README).
const (
	testProject = fakegooglechat.ProjectNumber
	eventsDir   = "../../../events/googlechat"
	dmSpace     = "spaces/dmAda0000001"
	room        = "spaces/AAQAparley01"
	ada         = "users/100000000000000000042"
	grace       = "users/100000000000000000043"
)

// sampleNow is when the samples are signed and received.
var sampleNow = time.Date(2025, 11, 29, 16, 5, 0, 0, time.UTC)

var (
	dm     = message.Thread{Platform: message.GoogleChat, Account: testProject, Chat: dmSpace}
	thread = message.Thread{Platform: message.GoogleChat, Account: testProject, Chat: room, Thread: "Thr00000002"}
)

// issuers are the fake Chat and Google issuers every test shares, served
// once: the chat keys URL and the Google keys URL.
var issuers = sync.OnceValues(func() (*fakegooglechat.API, string) {
	api := fakegooglechat.New(fakegooglechat.Options{})
	srv := httptest.NewServer(api)
	return api, srv.URL
})

func chatKeysURL() string   { _, u := issuers(); return u + fakegooglechat.ChatKeysPath }
func googleKeysURL() string { _, u := issuers(); return u + fakegooglechat.GoogleKeysPath }

// signed is body as Chat sends it at at (project-number audience),
// received at now.
func signed(body []byte, at, now time.Time) *platform.Request {
	api, _ := issuers()
	return &platform.Request{Method: http.MethodPost, Header: api.Sign(at), Body: body, Now: now}
}

func testReceiver(t testing.TB) *Receiver {
	t.Helper()
	return &Receiver{ProjectNumber: testProject, Keys: jwks.New(jwks.Source{KeysURL: chatKeysURL()})}
}

// otherAccount is the test service account key with another private key:
// a key Google never issued.
func otherAccount(key string) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(key), &m)
	m["private_key"] = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: mustPKCS8(fakeissuer.NewKey())}))
	b, _ := json.Marshal(m)
	return string(b)
}

func mustPKCS8(k *rsa.PrivateKey) []byte {
	b, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		panic(err)
	}
	return b
}
