package faketeams

import (
	"net/url"
	"strings"
)

// ImageText is how a delivery records a picture attachment among its
// texts.
func ImageText(contentURL string) string { return "[image " + contentURL + "]" }

func picture(contentType string) bool { return strings.HasPrefix(contentType, "image/") }

// validPictures: every picture attachment has a contentUrl Teams can show,
// https (or a data: URI). The local stack's presigned URLs are plain HTTP
// on a loopback address, which the fake takes too (Teams would not).
func validPictures(act activity) bool {
	for _, at := range act.Attachments {
		if !picture(at.ContentType) {
			continue
		}
		u, err := url.Parse(at.ContentURL)
		if err != nil || !(u.Scheme == "https" && u.Host != "" || u.Scheme == "data" || u.Scheme == "http" && u.Hostname() == "127.0.0.1") {
			return false
		}
	}
	return true
}
