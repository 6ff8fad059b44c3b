package fakeline

import (
	"net/url"
	"strconv"
)

// MaxImageURL is the most characters an image's, an audio's or a video's
// URLs hold.
const MaxImageURL = 2000

// ImageText, AudioText and VideoText are how a delivery records an image,
// an audio or a video message among its texts.
func ImageText(original string) string { return mediaText("image", original) }

// AudioText: see ImageText.
func AudioText(original string) string { return mediaText("audio", original) }

// VideoText: see ImageText.
func VideoText(original string) string { return mediaText("video", original) }

func mediaText(kind, original string) string { return "[" + kind + " " + original + "]" }

// recorded is how m is recorded among a delivery's texts.
func recorded(m textMessage) string {
	switch m.Type {
	case "image", "audio", "video":
		return mediaText(m.Type, m.OriginalContentURL)
	}
	return m.Text
}

// validMedia checks an image, audio or video message as the Messaging API
// does: originalContentUrl set, HTTPS, at most MaxImageURL characters; an
// image and a video a previewImageUrl alike; an audio a duration (a
// positive number of milliseconds); no text. The local stack's presigned
// URLs are plain HTTP on a loopback address, which the fake takes too
// (LINE itself would not).
func validMedia(m textMessage, p string) []detail {
	var out []detail
	urls := []struct{ v, name string }{{m.OriginalContentURL, "originalContentUrl"}}
	if m.Type != "audio" {
		urls = append(urls, struct{ v, name string }{m.PreviewImageURL, "previewImageUrl"})
	}
	for _, f := range urls {
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
	if m.Type == "audio" && (m.Duration == nil || *m.Duration < 1) {
		out = append(out, detail{"must be specified", p + ".duration"})
	}
	if m.Text != "" {
		out = append(out, detail{"must not be specified", p + ".text"})
	}
	return out
}
