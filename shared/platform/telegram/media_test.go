package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

func voiceFile(mime string, b []byte) platform.MediaFile {
	return platform.MediaFile{Kind: message.MediaVoice, URL: "https://example.com/v", Fetch: func(context.Context, int64) (platform.Fetched, error) {
		return platform.Fetched{Bytes: b, MIME: mime}, nil
	}}
}

func recorded(t *testing.T, api *faketelegram.API, i int, key string) string {
	t.Helper()
	ds := api.Recorder().Delivered()
	if len(ds) <= i {
		t.Fatalf("%d deliveries, want more than %d", len(ds), i)
	}
	var s string
	_ = json.Unmarshal(ds[i].Args[key], &s)
	return s
}

// TestVoiceGoesByItsFormat: Parley converts nothing. A voice note sendVoice
// plays goes with it, other audio with sendAudio, and what is not audio is
// refused without a call.
func TestVoiceGoesByItsFormat(t *testing.T) {
	t.Parallel()
	c, api := downloadClient(t)
	m := message.Outgoing{Thread: message.Thread{Platform: message.Telegram, Account: "7000000001", Chat: "42"}}
	for i, tc := range []struct{ mime, method string }{
		{"audio/ogg", "sendVoice"}, {"application/ogg", "sendVoice"}, {"audio/mpeg", "sendVoice"}, {"audio/wave", "sendAudio"},
	} {
		if _, err := c.SendMedia(t.Context(), m, voiceFile(tc.mime, []byte("RIFF....WAVEfmt "))); err != nil {
			t.Fatalf("%s: %v", tc.mime, err)
		}
		if got := recorded(t, api, i, faketelegram.ArgMethod); got != tc.method {
			t.Errorf("%s went with %s, want %s", tc.mime, got, tc.method)
		}
	}
	_, err := c.SendMedia(t.Context(), m, voiceFile("image/png", []byte("\x89PNG")))
	var se *message.SendError
	if !errors.As(err, &se) || se.Class != message.FailInvalidPayload || !strings.Contains(se.Reason, "voice_not_audio") {
		t.Fatalf("a PNG as a voice note: %v, want invalid_payload voice_not_audio", err)
	}
	if n := len(api.Recorder().Delivered()); n != 4 {
		t.Fatalf("%d deliveries, want the refused one never sent", n)
	}
}

// TestMediaOfAnotherBotIsRefused: the sender is scoped to its bot.
func TestMediaOfAnotherBotIsRefused(t *testing.T) {
	t.Parallel()
	c, _ := downloadClient(t)
	m := message.Outgoing{Thread: message.Thread{Platform: message.Telegram, Account: "7000000002", Chat: "42"}}
	_, err := c.SendMedia(t.Context(), m, platform.MediaFile{Kind: message.MediaImage, URL: "https://example.com/a.png"})
	if message.ClassOf(err) != message.FailInvalidPayload {
		t.Fatalf("SendMedia into another bot's chat = %v, want invalid_payload", err)
	}
}
