package faketeams

import (
	"net/http"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
)

// AddAttachment makes f an inline image a person sent, at
// {service URL}/v3/attachments/{id}/views/original, served to the app
// token as the connector serves it.
func (a *API) AddAttachment(id string, f fakefiles.File) { a.files.Add(id, f) }

// AttachmentDownloads is how many times the attachment id was served.
func (a *API) AttachmentDownloads(id string) int { return a.files.Downloads(id) }

// ServeSamples serves the inline image the samples of events/teams carry.
func (a *API) ServeSamples() {
	a.files.Add("0-wus-d3-ada0000000000000000000000000001", fakefiles.SamplePhoto)
}

// attachment serves GET /v3/attachments/{id}/views/{view}: an inline
// image's bytes, or the connector's 404.
func (a *API) attachment(w http.ResponseWriter, r *http.Request) {
	if !a.authorized(w, r) {
		return
	}
	if !a.files.Serve(w, r.PathValue("id")) {
		connectorError(w, http.StatusNotFound, "NotFound", "The attachment was not found.")
	}
}
