package googlechat

import (
	"testing"

	"github.com/parleyhq/parley/shared/platform"
)

// TestNoNativeMedia: Chat's media.upload needs user authentication, which
// an app's service account is not, so the client declares no native media
// at all and delivery links every kind. An upload path added later must
// come with a way to authenticate it, and this test changed on purpose.
func TestNoNativeMedia(t *testing.T) {
	t.Parallel()
	if _, ok := any(newClientRig(t).c).(platform.MediaSender); ok {
		t.Fatal("the Google Chat client claims to send media natively")
	}
}
