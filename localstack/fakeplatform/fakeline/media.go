package fakeline

import (
	"net/url"
	"strconv"
)

// MaxImageURL is the most characters an image message's URLs hold.
const MaxImageURL = 2000

// ImageText is how a delivery records an image message among its texts.
func ImageText(original string) string { return "[image " + original + "]" }

// validImage checks an image message as the Messaging API does: both URLs
// set, HTTPS, at most MaxImageURL characters, no text. The local stack's
// presigned URLs are plain HTTP on a loopback address, which the fake takes
// too (LINE itself would not).
func validImage(m textMessage, p string) []detail {
	var out []detail
	for _, f := range []struct{ v, name string }{{m.OriginalContentURL, "originalContentUrl"}, {m.PreviewImageURL, "previewImageUrl"}} {
		u, err := url.Parse(f.v)
		switch {
		case f.v == "":
			out = append(out, detail{"must be specified", p + "." + f.name})
		case len(f.v) > MaxImageURL:
			out = append(out, detail{"Length must be between 0 and " + strconv.Itoa(MaxImageURL), p + "." + f.name})
		case err != nil || !(u.Scheme == "https" || u.Scheme == "http" && u.Hostname() == "127.0.0.1"):
			out = append(out, detail{"must be a valid HTTPS URL", p + "." + f.name})
		}
	}
	if m.Text != "" {
		out = append(out, detail{"must not be specified", p + ".text"})
	}
	return out
}
