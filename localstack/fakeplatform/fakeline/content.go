package fakeline

import (
	"net/http"
	"regexp"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
)

// contentPath is the content API's path: GET /v2/bot/message/{id}/content,
// served by LINE at api-data.line.me (LINE_DATA_API_BASE_URL).
var contentPath = regexp.MustCompile(`^/v2/bot/message/([0-9]+)/content$`)

// AddContent makes f the content of the message messageID a person sent
// (an image, a video, an audio, a file), which the content API serves to
// the channel access token.
func (a *API) AddContent(messageID string, f fakefiles.File) { a.files.Add(messageID, f) }

// ContentDownloads is how many times the content of messageID was served.
func (a *API) ContentDownloads(messageID string) int { return a.files.Downloads(messageID) }

// content serves GET /v2/bot/message/{id}/content: the bytes, or LINE's
// 404 for a message it holds no content of (expired, or never sent).
func (a *API) content(w http.ResponseWriter, r *http.Request, id string) {
	if !a.authorized(w, r) {
		return
	}
	if !a.files.Serve(w, id) {
		fail(w, http.StatusNotFound, "Not found", nil)
	}
}

// ServeSamples serves the content of the messages the samples of
// events/line send.
func (a *API) ServeSamples() {
	a.files.Add("583011267045678101", fakefiles.SamplePhoto)
	a.files.Add("583011267045678102", fakefiles.SampleDocument)
	a.files.Add("583011267045678103", fakefiles.SampleVoiceM4A)
}
