package discord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakeapi"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
	"github.com/parleyhq/parley/shared/split"
)

var pictureBytes = append([]byte("\x89PNG\r\n\x1a\n"), strings.Repeat("p", 300)...)

func mediaFile(kind message.MediaKind, name, caption, mime string, b []byte) platform.MediaFile {
	return platform.MediaFile{Kind: kind, Name: name, Caption: caption, URL: "https://example.com/",
		Fetch: func(_ context.Context, max int64) (platform.Fetched, error) {
			if int64(len(b)) > max {
				return platform.Fetched{}, &message.SendError{Class: message.FailInvalidPayload, Reason: "too_large"}
			}
			return platform.Fetched{Bytes: b, MIME: mime}, nil
		},
		Split: func(s string) []string { return split.Text(s, Adapter.Capabilities()) }}
}

func mediaBubble(seq int, rc *message.ReplyContext) message.Outgoing {
	return message.Outgoing{Thread: guild, IdempotencyKey: "intent0#m" + string(rune('0'+seq)), Sequence: seq, ReplyContext: rc}
}

func recordedFile(d fakeapi.Delivery) (sha, name string) {
	return fakeapi.Str(d.Args, fakeapi.ArgSHA256), fakeapi.Str(d.Args, fakeapi.ArgFileName)
}

func shaHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestSendMediaGoesWhereTextGoes: a file is the attachment of a message
// routed as a bubble's text: the deferred response, a follow-up, a channel
// message with its nonce; its caption is the content, inert, notifying no
// one.
func TestSendMediaGoesWhereTextGoes(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	rc, tok := command()
	for seq, out := range []message.Outgoing{mediaBubble(0, rc), mediaBubble(1, rc), mediaBubble(2, nil)} {
		if _, err := e.c.SendMedia(t.Context(), out, mediaFile(message.MediaImage, "chart.png", "the *chart* @everyone", "image/png", pictureBytes)); err != nil {
			t.Fatalf("bubble %d: %v", seq, err)
		}
	}
	calls := e.all()
	paths := []string{calls[0].method + " " + calls[0].path, calls[1].method + " " + calls[1].path, calls[2].method + " " + calls[2].path}
	want := []string{"PATCH /webhooks/" + testApp + "/" + tok + "/messages/@original", "POST /webhooks/" + testApp + "/" + tok, "POST /channels/" + guildChannel + "/messages"}
	if !slices.Equal(paths, want) {
		t.Fatalf("calls %q, want %q", paths, want)
	}
	ds := e.rec.Delivered()
	if len(ds) != 3 {
		t.Fatalf("%d deliveries", len(ds))
	}
	for i, d := range ds {
		sha, name := recordedFile(d)
		var am DiscordAllowedMentions
		_ = json.Unmarshal(d.Args["allowed_mentions"], &am)
		if sha != shaHex(pictureBytes) || name != "chart.png" || d.Text != Inert("the *chart* @everyone") || am.Parse == nil || len(am.Parse) != 0 {
			t.Errorf("delivery %d: file %s %q, content %q, mentions %s", i, sha, name, d.Text, d.Args["allowed_mentions"])
		}
	}
	if fakeapi.Str(ds[2].Args, "nonce") != Nonce("intent0#m2") {
		t.Errorf("the channel message's nonce = %s", ds[2].Args["nonce"])
	}
}

// TestSendMediaResendIsOneMessage: a channel file whose answer was lost,
// sent again under its key within Discord's nonce window, is the same
// message.
func TestSendMediaResendIsOneMessage(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	e.rec.Inject(fakeapi.Fault{DropResponseAfterCommit: true})
	f := mediaFile(message.MediaFile, "report.pdf", "", "application/pdf", []byte("%PDF-1.7"))
	_, err := e.c.SendMedia(t.Context(), mediaBubble(0, nil), f)
	sendErr(t, err, message.FailUnknown)
	rc, err := e.c.SendMedia(t.Context(), mediaBubble(0, nil), f)
	if d := e.rec.Delivered(); err != nil || len(d) != 1 || rc.MessageIDs[0] != d[0].MessageID {
		t.Fatalf("resend = %v, %v; %d deliveries: want the one message", rc, err, len(d))
	}
}

// TestSendMediaLongCaptionFollowsTheFile: a caption over PlatformLimit
// once escaped leaves the file's message without content and follows it,
// split, each part under its own key: its own nonce, never the file's.
func TestSendMediaLongCaptionFollowsTheFile(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	caption := strings.Repeat("*bold* ", 250) // 1750 code points, 2250 once escaped
	rc, err := e.c.SendMedia(t.Context(), mediaBubble(0, nil), mediaFile(message.MediaFile, "a.pdf", caption, "application/pdf", []byte("%PDF")))
	if err != nil {
		t.Fatal(err)
	}
	ds := e.rec.Delivered()
	if len(ds) != 3 || ds[0].Text != "" || len(rc.MessageIDs) != 3 {
		t.Fatalf("%d deliveries (first %q), receipt %v: want the file, then two caption parts", len(ds), ds[0].Text, rc.MessageIDs)
	}
	nonces := []string{fakeapi.Str(ds[0].Args, "nonce"), fakeapi.Str(ds[1].Args, "nonce"), fakeapi.Str(ds[2].Args, "nonce")}
	if want := []string{Nonce("intent0#m0"), Nonce("intent0#m0#1"), Nonce("intent0#m0#2")}; !slices.Equal(nonces, want) {
		t.Fatalf("nonces %q, want each message its own", nonces)
	}
}

// TestSendMediaVoiceIsAnAudioAttachment: a voice note goes as an audio
// file; bytes that are not audio are refused before any call.
func TestSendMediaVoiceIsAnAudioAttachment(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	if _, err := e.c.SendMedia(t.Context(), mediaBubble(0, nil), mediaFile(message.MediaVoice, "", "", "audio/ogg", []byte("OggS\x00\x02"))); err != nil {
		t.Fatal(err)
	}
	if _, name := recordedFile(e.rec.Delivered()[0]); name != "voice.ogg" {
		t.Fatalf("the voice note went as %q", name)
	}
	_, err := e.c.SendMedia(t.Context(), mediaBubble(1, nil), mediaFile(message.MediaVoice, "", "", "text/html", []byte("<html>")))
	if se := sendErr(t, err, message.FailInvalidPayload); !strings.Contains(se.Reason, "voice_not_audio") || len(e.all()) != 1 {
		t.Fatalf("an HTML page as a voice note: %v after %d calls", err, len(e.all()))
	}
}

// TestSendMediaFailures: over the upload limit, a thread of another
// application and a bad reply are refused without a call; Discord's 413
// is invalid_payload, its 5xx unknown.
func TestSendMediaFailures(t *testing.T) {
	t.Parallel()
	e := setup(t, fakediscord.Options{})
	big := make([]byte, MaxUpload+1)
	_, err := e.c.SendMedia(t.Context(), mediaBubble(0, nil), mediaFile(message.MediaFile, "big", "", "", big))
	sendErr(t, err, message.FailInvalidPayload)
	other := mediaBubble(0, nil)
	other.Thread.Account = "1309000000000000002"
	_, err = e.c.SendMedia(t.Context(), other, mediaFile(message.MediaFile, "a", "", "", []byte("a")))
	sendErr(t, err, message.FailInvalidPayload)
	if len(e.all()) != 0 {
		t.Fatal("a refused file reached Discord")
	}
	e.rec.Inject(fakeapi.Fault{Error: "40005"})
	_, err = e.c.SendMedia(t.Context(), mediaBubble(0, nil), mediaFile(message.MediaFile, "a", "", "", []byte("a")))
	sendErr(t, err, message.FailInvalidPayload)
	e.rec.Inject(fakeapi.Fault{Status: 502})
	_, err = e.c.SendMedia(t.Context(), mediaBubble(1, nil), mediaFile(message.MediaFile, "a", "", "", []byte("a")))
	sendErr(t, err, message.FailUnknown)
}
