package fakegooglechat

import (
	"net/http"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
)

// AddAttachment makes f the bytes of a file a person uploaded, under its
// attachmentDataRef.resourceName: media.download serves them to the app's
// token.
func (a *API) AddAttachment(resourceName string, f fakefiles.File) { a.files.Add(resourceName, f) }

// AttachmentDownloads is how many times the file resourceName was served.
func (a *API) AttachmentDownloads(resourceName string) int { return a.files.Downloads(resourceName) }

// ServeSamples serves the files the samples of events/googlechat carry.
func (a *API) ServeSamples() {
	a.files.Add("ClxzcGFjZXMvZG1BZGEwMDAwMDAxL21lc3NhZ2VzL1BkZjAwMDAwMDAwMS5QZGYwMDAwMDAwMDE", fakefiles.SampleDocument)
}

// media serves GET /v1/media/{resourceName}?alt=media: a file's bytes, or
// Google's 404 for a resource it does not hold.
func (a *API) media(w http.ResponseWriter, r *http.Request) {
	if !a.authorized(w, r) {
		return
	}
	if r.URL.Query().Get("alt") != "media" {
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid value at 'alt': the fake serves media only (alt=media).")
		return
	}
	if !a.files.Serve(w, r.PathValue("resource")) {
		googleError(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
	}
}
