package fakewhatsapp

import (
	"strconv"
	"strings"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
)

// CaptionLimit is the most a media caption holds.
const CaptionLimit = 1024

// mediaLink is a media object by link, as Graph reads it.
type mediaLink struct {
	Link     string  `json:"link"`
	ID       string  `json:"id"`
	Caption  *string `json:"caption"`
	Filename string  `json:"filename"`
}

// validateMedia checks an image, document, audio or video message by link
// as Graph does: the object under the type's member, a link, a
// caption only where the type has one (an HTTP or HTTPS link, as Graph takes) and within CaptionLimit. The
// delivery's text is the caption.
func (s send) validateMedia() (string, []fakeapi.Control, int, string) {
	obj := map[string]*mediaLink{"image": s.Image, "document": s.Document, "audio": s.Audio, "video": s.Video}[s.Type]
	switch {
	case obj == nil:
		return "", nil, 131008, "The parameter " + s.Type + " is required."
	case obj.Link == "" && obj.ID == "":
		return "", nil, 131008, "The parameter " + s.Type + "['link'] is required."
	case obj.Link != "" && !strings.HasPrefix(obj.Link, "https://") && !strings.HasPrefix(obj.Link, "http://"):
		return "", nil, 131009, "Param " + s.Type + "['link'] must be an HTTP or HTTPS URL."
	case obj.Caption != nil && s.Type == "audio":
		return "", nil, 131009, "Param audio['caption'] is not a valid parameter."
	case obj.Filename != "" && s.Type != "document":
		return "", nil, 131009, "Param " + s.Type + "['filename'] is not a valid parameter."
	case obj.Caption != nil && units(*obj.Caption) > CaptionLimit:
		return "", nil, 131009, "Param " + s.Type + "['caption'] must be at most " + strconv.Itoa(CaptionLimit) + " characters long."
	}
	if obj.Caption != nil {
		return *obj.Caption, nil, 0, ""
	}
	return "", nil, 0, ""
}
