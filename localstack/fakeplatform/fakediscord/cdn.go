package fakediscord

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
)

// CDNHost is the host Discord names attachments' bytes by.
const CDNHost = "cdn.discordapp.com"

// cdnExpiry is the ex (expiry, hex unix seconds) and is (issued) of every
// URL the fake signs: the fake checks the signature, not the time, so that
// the fixed URLs of events/ stay served.
const cdnExpiry, cdnIssued = "692b1f00", "6929cd80"

// AddAttachment makes f a file a person attached in channel, with the
// attachment id and filename given, and returns its URL as Discord gives
// it: on its CDN, signed (ex, is, hm). The fake serves the URL's path and
// query at its own root (where DISCORD_CDN_BASE_URL points), and answers a
// path it does not hold, or a signature that does not match, as Discord's
// CDN does: 404 "This content is no longer available."
func (a *API) AddAttachment(channel, id, filename string, f fakefiles.File) string {
	path := "/attachments/" + channel + "/" + id + "/" + filename
	a.files.Add(path, f)
	return AttachmentURL(path)
}

// AttachmentURL is the signed CDN URL of an attachment's path.
func AttachmentURL(path string) string {
	return "https://" + CDNHost + path + "?ex=" + cdnExpiry + "&is=" + cdnIssued + "&hm=" + cdnMAC(path)
}

// AttachmentDownloads is how many times the attachment at url (as
// AddAttachment returned it) was served.
func (a *API) AttachmentDownloads(url string) int {
	path, _, _ := strings.Cut(strings.TrimPrefix(url, "https://"+CDNHost), "?")
	return a.files.Downloads(path)
}

func cdnMAC(path string) string {
	m := hmac.New(sha256.New, tokenKey)
	m.Write([]byte("cdn" + path + "/" + cdnExpiry + "/" + cdnIssued))
	return hex.EncodeToString(m.Sum(nil))
}

// cdn serves GET /attachments/… and /ephemeral-attachments/…: an
// attachment's bytes, to anyone holding its signed URL.
func (a *API) cdn(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	path := r.URL.Path
	ok := q.Get("ex") == cdnExpiry && q.Get("is") == cdnIssued && hmac.Equal([]byte(q.Get("hm")), []byte(cdnMAC(path)))
	if !ok || !a.files.Serve(w, path) {
		http.Error(w, "This content is no longer available.", http.StatusNotFound)
	}
}

// ServeSamples serves the files the samples of events/discord attach.
func (a *API) ServeSamples() {
	a.files.Add("/attachments/1309000000000000300/1444358300000000077/boarding-pass.pdf", fakefiles.SampleDocument)
	a.files.Add("/attachments/1309000000000000200/1444358400000000078/voice-message.ogg", fakefiles.SampleVoice)
}
