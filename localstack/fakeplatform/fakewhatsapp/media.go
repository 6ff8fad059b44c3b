package fakewhatsapp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
)

// MediaURLLife is how long a media URL (GET /<media id>'s answer) serves
// the file: Graph's last five minutes.
const MediaURLLife = 5 * time.Minute

// mediaKey signs the fake's media URLs, as Meta's lookaside URLs carry a
// hash the server checks.
var mediaKey = []byte("parley-fakewhatsapp-media-urls")

// AddMedia makes f the media mediaID a person sent: GET /<media id>
// describes it (its type, size, SHA-256 and a URL that lasts
// MediaURLLife), and the URL serves it to the access token.
func (a *API) AddMedia(mediaID string, f fakefiles.File) { a.files.Add(mediaID, f) }

// MediaDownloads is how many times the media mediaID was served.
func (a *API) MediaDownloads(mediaID string) int { return a.files.Downloads(mediaID) }

// ServeSamples serves the media the samples of events/whatsapp send.
func (a *API) ServeSamples() {
	a.files.Add("1003383421387256", fakefiles.SamplePhoto)
	a.files.Add("1003383421387301", fakefiles.SampleVoice)
	a.files.Add("1003383421387302", fakefiles.SampleDocument)
}

// bearer checks the access token of a GET, answering Graph's errors.
func (a *API) bearer(w http.ResponseWriter, r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !ok || token == "":
		fail(w, 400, 104, 0, "An access token is required to request this resource.", "")
		return false
	case !a.Authorized(token):
		invalid(w, 190, "")
		return false
	}
	return true
}

// mediaInfo answers GET /<media id>: where the file is and what it is, or
// Graph's 400 for an id it does not hold.
func (a *API) mediaInfo(w http.ResponseWriter, r *http.Request, id string) {
	if !a.bearer(w, r) {
		return
	}
	f, ok := a.files.Get(id)
	if !ok {
		fail(w, 400, 100, 33, "Unsupported get request. Object with ID '"+id+"' does not exist, cannot be loaded due to missing permissions, or does not support this operation.", "")
		return
	}
	if p := r.URL.Query().Get("phone_number_id"); p != "" && a.phone != "" && p != a.phone {
		fail(w, 400, 100, 33, "Unsupported get request. Object with ID '"+id+"' does not exist, cannot be loaded due to missing permissions, or does not support this operation.", "")
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	// Below the root the fake is mounted at, as the request reached it.
	orig, _, _ := strings.Cut(r.RequestURI, "?")
	prefix := strings.TrimSuffix(orig, r.URL.Path)
	exp := strconv.FormatInt(a.Recorder().Now().Add(MediaURLLife).Unix(), 10)
	sum := sha256.Sum256(f.Body)
	fakeapi.WriteJSON(w, http.StatusOK, map[string]any{
		"messaging_product": "whatsapp", "id": id, "mime_type": f.Type(), "file_size": len(f.Body),
		"sha256": base64.StdEncoding.EncodeToString(sum[:]),
		"url":    scheme + "://" + r.Host + prefix + "/whatsapp_business/attachments/?mid=" + id + "&ext=" + exp + "&hash=" + mediaMAC(id, exp),
	})
}

// mediaFile serves the URL mediaInfo gave, to the access token, until it
// expires: 404 after, as Meta's lookaside host answers.
func (a *API) mediaFile(w http.ResponseWriter, r *http.Request) {
	if !a.bearer(w, r) {
		return
	}
	q := r.URL.Query()
	id, exp := q.Get("mid"), q.Get("ext")
	until, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !hmac.Equal([]byte(q.Get("hash")), []byte(mediaMAC(id, exp))) || a.Recorder().Now().Unix() > until || !a.files.Serve(w, id) {
		http.Error(w, "Not Found", http.StatusNotFound)
	}
}

func mediaMAC(id, exp string) string {
	m := hmac.New(sha256.New, mediaKey)
	m.Write([]byte(url.PathEscape(id) + "/" + exp))
	return hex.EncodeToString(m.Sum(nil))[:32]
}
