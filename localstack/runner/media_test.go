package runner_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakediscord"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakefiles"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeslack"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakewhatsapp"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
)

// telegramFile builds a private-chat update carrying one file under key
// (photo, voice, document), with caption.
func telegramFile(updateID int, chat int64, key string, file map[string]any, caption string) []byte {
	m := map[string]any{
		"message_id": updateID % 1_000_000, "date": time.Now().Unix(),
		"from": map[string]any{"id": chat, "is_bot": false, "first_name": "Ada"},
		"chat": map[string]any{"id": chat, "type": "private", "first_name": "Ada"},
		key:    file,
	}
	if key == "photo" {
		m[key] = []any{map[string]any{"file_id": "thumb", "file_unique_id": "t", "width": 90, "height": 90}, file}
	}
	if caption != "" {
		m["caption"] = caption
	}
	b, _ := json.Marshal(map[string]any{"update_id": updateID, "message": m})
	return b
}

// TestTelegramFilesReachTheAgentAsURLsOfTheirBytes: a photo, a document and a
// voice note sent on Telegram reach the agent as attachments whose URLs
// serve the exact bytes; a redelivered update and a retried turn download
// nothing twice.
func TestTelegramFilesReachTheAgentAsURLsOfTheirBytes(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	handler, _ := h.fake.For(message.Telegram)
	tg := handler.(*faketelegram.API)
	files := map[string][]byte{
		"photo-1": append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), bytes.Repeat([]byte{7}, 3000)...),
		"doc-1":   []byte("%PDF-1.7\n% boarding pass\n%%EOF\n"),
		"voice-1": append([]byte("OggS\x00\x02"), bytes.Repeat([]byte{1}, 900)...),
	}
	for id, b := range files {
		tg.AddFile(id, b)
	}
	// The document's first agent call fails: its turn is retried.
	var failed atomic.Bool
	h.agent.fail = func(req agent.TurnRequest) (int, bool) {
		if len(req.Event.Attachments) > 0 && req.Event.Attachments[0].PlatformID == "doc-1" && !failed.Swap(true) {
			return http.StatusServiceUnavailable, true
		}
		return 0, false
	}
	updates := [][]byte{
		telegramFile(7001, 42, "photo", map[string]any{"file_id": "photo-1", "file_unique_id": "p", "width": 800, "height": 600, "file_size": len(files["photo-1"])}, "what plant is this?"),
		telegramFile(7002, 42, "document", map[string]any{"file_id": "doc-1", "file_unique_id": "d", "file_name": "pass.pdf", "mime_type": "application/pdf"}, ""),
		telegramFile(7003, 42, "voice", map[string]any{"file_id": "voice-1", "file_unique_id": "v", "duration": 3, "mime_type": "audio/ogg"}, ""),
	}
	for _, u := range updates {
		if code, body := h.postTelegram(u); code != http.StatusOK {
			t.Fatalf("webhook: %d %s", code, body)
		}
	}
	got := h.waitDelivered(4, 60*time.Second)
	if code, _ := h.postTelegram(updates[0]); code != http.StatusOK { // Telegram redelivers
		t.Fatalf("redelivered webhook: %d", code)
	}
	h.quiesce(30 * time.Second)

	want := []string{"image 0: image/jpeg", "echo: what plant is this?", "file 0: application/pdf", "voice 0: audio/ogg"}
	if len(got) != len(want) {
		t.Fatalf("delivered %q", texts(got))
	}
	for i, d := range got {
		if !strings.HasPrefix(d.Text, want[i]) {
			t.Fatalf("bubble %d is %q, want it to start %q", i, d.Text, want[i])
		}
	}
	seen := map[string]bool{}
	for _, req := range h.agent.requests("telegram:" + tgBotID + ":42") {
		for _, a := range req.Event.Attachments {
			body := files[a.PlatformID]
			sum := sha256.Sum256(body)
			if a.URL == "" || a.SHA256 != hex.EncodeToString(sum[:]) || a.Size != int64(len(body)) {
				t.Fatalf("attachment %+v: want a URL of the %d bytes sent", a, len(body))
			}
			resp, err := http.Get(a.URL)
			if err != nil {
				t.Fatal(err)
			}
			served, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Equal(served, body) {
				t.Fatalf("%s: the URL serves %d other bytes", a.PlatformID, len(served))
			}
			seen[a.PlatformID] = true
		}
	}
	if len(seen) != 3 || !failed.Load() {
		t.Fatalf("the agent saw %v (the document's first call failed: %v)", seen, failed.Load())
	}
	for id := range files {
		if n := tg.Downloads(id); n != 1 {
			t.Errorf("%s downloaded %d times, want once", id, n)
		}
	}
}

// TestSlackFilesReachTheAgentAsURLsOfTheirBytes: a file shared in a Slack DM
// reaches the agent as a URL of its exact bytes, downloaded with the bot
// token through files.info.
func TestSlackFilesReachTheAgentAsURLsOfTheirBytes(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	handler, _ := h.fake.For(message.Slack)
	api := handler.(*fakeslack.API)
	pdf := []byte("%PDF-1.7\n% itinerary\n%%EOF\n")
	api.AddFile("F0PDF00001", pdf)
	var ev map[string]any
	_ = json.Unmarshal(slackDM("D0ADA00001", "1764432000.000100", ""), &ev)
	ev["event"].(map[string]any)["subtype"] = "file_share"
	ev["event"].(map[string]any)["files"] = []any{map[string]any{"id": "F0PDF00001", "name": "itinerary.pdf", "mimetype": "application/pdf", "mode": "hosted"}}
	body, _ := json.Marshal(ev)
	if code, resp := h.postSlack(body); code != http.StatusOK {
		t.Fatalf("webhook: %d %s", code, resp)
	}
	got := h.waitDelivered(1, 30*time.Second)
	if !strings.HasPrefix(got[0].Text, "file 0: application/pdf, "+strconv.Itoa(len(pdf))+" bytes") {
		t.Fatalf("delivered %q", got[0].Text)
	}
	reqs := h.agent.requests("slack:T0TEAM0001:D0ADA00001")
	if len(reqs) != 1 || len(reqs[0].Event.Attachments) != 1 {
		t.Fatalf("agent requests %+v", reqs)
	}
	resp, err := http.Get(reqs[0].Event.Attachments[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	served, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(served, pdf) || api.Downloads("F0PDF00001") != 1 {
		t.Fatalf("the URL serves %q (%d downloads)", served, api.Downloads("F0PDF00001"))
	}
}

// staged checks that every attachment the agent got on threadKey whose
// PlatformID is a key of files is a URL serving exactly those bytes, and
// returns the reason of every other one, by PlatformID.
func (h *harness) staged(threadKey string, files map[string][]byte) (reasons map[string]message.AttachmentReason) {
	h.t.Helper()
	reasons = map[string]message.AttachmentReason{}
	seen := map[string]bool{}
	for _, req := range h.agent.requests(threadKey) {
		for _, a := range req.Event.Attachments {
			body, ok := files[a.PlatformID]
			if !ok || a.URL == "" {
				if a.URL != "" || a.Reason == "" {
					h.t.Fatalf("attachment %+v: a URL of what was never sent, or no reason", a)
				}
				reasons[a.PlatformID] = a.Reason
				continue
			}
			sum := sha256.Sum256(body)
			if a.SHA256 != hex.EncodeToString(sum[:]) || a.Size != int64(len(body)) {
				h.t.Fatalf("attachment %+v: want a URL of the %d bytes sent", a, len(body))
			}
			resp, err := http.Get(a.URL)
			if err != nil {
				h.t.Fatal(err)
			}
			served, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Equal(served, body) {
				h.t.Fatalf("%s: the URL serves %d other bytes", a.PlatformID, len(served))
			}
			seen[a.PlatformID] = true
		}
	}
	if len(seen) != len(files) {
		h.t.Fatalf("the agent got URLs of %d files, want %d", len(seen), len(files))
	}
	return reasons
}

// bubblesStart checks each delivered bubble starts as want says, in order.
func bubblesStart(t *testing.T, got []fakeplatform.Delivery, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("delivered %q, want %d bubbles", texts(got), len(want))
	}
	for i, d := range got {
		if !strings.HasPrefix(d.Text, want[i]) {
			t.Fatalf("bubble %d is %q, want it to start %q", i, d.Text, want[i])
		}
	}
}

// discordAsk is Ada's /ask in her DM with the bot, made at at, with text
// (none when empty) and file, an attachment object, given as the file
// option.
func discordAsk(t *testing.T, at time.Time, text string, file map[string]any) []byte {
	t.Helper()
	ada := map[string]any{"id": "1309000000000000042", "username": "ada", "global_name": "Ada"}
	var opts []any
	if text != "" {
		opts = append(opts, map[string]any{"name": "text", "type": 3, "value": text})
	}
	opts = append(opts, map[string]any{"name": "file", "type": 11, "value": file["id"]})
	body, _ := json.Marshal(map[string]any{
		"application_id": fakediscord.ApplicationID, "type": 2, "version": 1, "token": "fake",
		"channel_id": fakeplatform.DiscordDM, "channel": map[string]any{"id": fakeplatform.DiscordDM, "type": 1}, "user": ada,
		"data": map[string]any{"id": "1309000000000000501", "name": "ask", "type": 1, "options": opts,
			"resolved": map[string]any{"attachments": map[string]any{file["id"].(string): file}}},
	})
	out, err := fakediscord.Interaction(body, at)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDiscordFilesReachTheAgentAsURLsOfTheirBytes: a photo and a document
// given to /ask, and a voice message asked about, reach the agent as URLs
// of their exact bytes, fetched from the CDN once each, also when a turn
// is retried and the interaction redelivered; a file the CDN no longer
// serves, one whose bytes lie about their type and one that breaks off
// reach it as reasons.
func TestDiscordFilesReachTheAgentAsURLsOfTheirBytes(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	handler, _ := h.fake.For(message.Discord)
	api := handler.(*fakediscord.API)
	dm := fakeplatform.DiscordDM
	photo, pdf, voice := fakefiles.SamplePhoto, fakefiles.SampleDocument, fakefiles.SampleVoice
	photoURL := api.AddAttachment(dm, "1444357000000000071", "plant.jpg", photo)
	pdfURL := api.AddAttachment(dm, "1444357000000000072", "pass.pdf", pdf)
	voiceURL := api.AddAttachment(dm, "1444357000000000073", "voice-message.ogg", voice)
	lieURL := api.AddAttachment(dm, "1444357000000000074", "photo.png", fakefiles.File{Body: pdf.Body, ContentType: "image/png"})
	cutURL := api.AddAttachment(dm, "1444357000000000075", "cut.pdf", fakefiles.File{Body: pdf.Body, Truncate: true})
	goneURL := fakediscord.AttachmentURL("/attachments/" + dm + "/1444357000000000076/gone.jpg")
	att := func(id, name, typ, u string, size int) map[string]any {
		return map[string]any{"id": id, "filename": name, "content_type": typ, "size": size, "url": u, "proxy_url": strings.Replace(u, "cdn.discordapp.com", "media.discordapp.net", 1)}
	}
	// The document's first agent call fails: its turn is retried.
	var failed atomic.Bool
	h.agent.fail = func(req agent.TurnRequest) (int, bool) {
		if len(req.Event.Attachments) > 0 && req.Event.Attachments[0].PlatformID == pdfURL && !failed.Swap(true) {
			return http.StatusServiceUnavailable, true
		}
		return 0, false
	}
	now := h.clock.Now()
	photoAsk := discordAsk(t, now, "what plant is this?", att("71", "plant.jpg", "image/jpeg", photoURL, len(photo.Body)))
	voiceMsg := map[string]any{"id": "1444357000000000009", "channel_id": dm, "content": "", "flags": 8192,
		"author": map[string]any{"id": "1309000000000000042", "username": "ada"},
		"attachments": []any{map[string]any{"id": "73", "filename": "voice-message.ogg", "content_type": "audio/ogg", "size": len(voice.Body),
			"url": voiceURL, "duration_secs": 2.4, "waveform": "AAAA"}}}
	askVoice, _ := json.Marshal(map[string]any{
		"application_id": fakediscord.ApplicationID, "type": 2, "token": "fake", "channel_id": dm, "channel": map[string]any{"id": dm, "type": 1},
		"user": map[string]any{"id": "1309000000000000042", "username": "ada"},
		"data": map[string]any{"id": "1309000000000000502", "name": "Ask the agent", "type": 3, "target_id": "1444357000000000009",
			"resolved": map[string]any{"messages": map[string]any{"1444357000000000009": voiceMsg}}},
	})
	voiceAsk, _ := fakediscord.Interaction(askVoice, now.Add(2*time.Millisecond))
	bodies := [][]byte{
		photoAsk,
		discordAsk(t, now.Add(time.Millisecond), "", att("72", "pass.pdf", "application/pdf", pdfURL, len(pdf.Body))),
		voiceAsk,
		discordAsk(t, now.Add(3*time.Millisecond), "", att("74", "photo.png", "image/png", lieURL, len(pdf.Body))),
		discordAsk(t, now.Add(4*time.Millisecond), "", att("75", "cut.pdf", "application/pdf", cutURL, len(pdf.Body))),
		discordAsk(t, now.Add(5*time.Millisecond), "", att("76", "gone.jpg", "image/jpeg", goneURL, 100)),
	}
	for i, b := range bodies {
		if code, answer := h.postDiscord(b); code != http.StatusOK || answer != `{"type":5}` {
			t.Fatalf("interaction %d: %d %s", i, code, answer)
		}
	}
	h.waitDelivered(7, 60*time.Second)
	if code, answer := h.postDiscord(photoAsk); code != http.StatusOK || answer != `{"type":5}` { // replayed
		t.Fatalf("replayed interaction: %d %s", code, answer)
	}
	h.quiesce(30 * time.Second)
	bubblesStart(t, h.fake.Delivered(), []string{"image 0: image/jpeg", "echo: what plant is this?", "file 0: application/pdf", "voice 0: audio/ogg",
		`image 0: not stored (type\_mismatch)`, "file 0: not stored (unavailable)", "image 0: not stored (unavailable)"}) // markdown escaped
	reasons := h.staged("discord:"+fakediscord.ApplicationID+":"+dm, map[string][]byte{photoURL: photo.Body, pdfURL: pdf.Body, voiceURL: voice.Body})
	if reasons[lieURL] != message.ReasonTypeMismatch || reasons[cutURL] != message.ReasonUnavailable || reasons[goneURL] != message.ReasonUnavailable || !failed.Load() {
		t.Fatalf("reasons %v (the document's first call failed: %v)", reasons, failed.Load())
	}
	for _, u := range []string{photoURL, pdfURL, voiceURL} {
		if n := api.AttachmentDownloads(u); n != 1 {
			t.Errorf("%s downloaded %d times, want once", u, n)
		}
	}
	for _, req := range h.agent.requests("discord:" + fakediscord.ApplicationID + ":" + dm) {
		if a := req.Event.Attachments; len(a) == 1 && a[0].PlatformID == voiceURL && (a[0].Kind != message.AttachVoice || a[0].Duration != 2) {
			t.Fatalf("the voice message reached the agent as %+v", a[0])
		}
	}
}

// lineFile is a one-to-one message webhook from Ada of a file message,
// msg (its type, id and what else LINE says of it).
func lineFile(eventID string, msg map[string]any, at time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"destination": lineBot, "events": []map[string]any{{
		"type": "message", "webhookEventId": eventID, "timestamp": at.UnixMilli(), "mode": "active",
		"deliveryContext": map[string]any{"isRedelivery": false}, "replyToken": "tok" + eventID,
		"source": map[string]any{"type": "user", "userId": lineAda}, "message": msg,
	}}})
	return b
}

// TestLINEFilesReachTheAgentAsURLsOfTheirBytes: a photo, a document and a
// voice note sent on LINE reach the agent as URLs of their exact bytes,
// fetched from the content API once each, also when a turn is retried and
// the webhook redelivered; content LINE no longer holds, content that
// lies about its type and content that breaks off reach it as reasons.
func TestLINEFilesReachTheAgentAsURLsOfTheirBytes(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	handler, _ := h.fake.For(message.LINE)
	api := handler.(*fakeline.API)
	photo, pdf, voice := fakefiles.SamplePhoto, fakefiles.SampleDocument, fakefiles.SampleVoiceM4A
	api.AddContent("700000000000000001", photo)
	api.AddContent("700000000000000002", pdf)
	api.AddContent("700000000000000003", voice)
	api.AddContent("700000000000000004", fakefiles.File{Body: pdf.Body, ContentType: "image/jpeg"})
	api.AddContent("700000000000000005", fakefiles.File{Body: voice.Body, Truncate: true})
	var failed atomic.Bool
	h.agent.fail = func(req agent.TurnRequest) (int, bool) {
		if len(req.Event.Attachments) > 0 && req.Event.Attachments[0].PlatformID == "700000000000000002" && !failed.Swap(true) {
			return http.StatusServiceUnavailable, true
		}
		return 0, false
	}
	now := h.clock.Now()
	hooks := [][]byte{
		lineFile("01KCMEDIA00000000000000001", map[string]any{"type": "image", "id": "700000000000000001", "quoteToken": "q1", "contentProvider": map[string]any{"type": "line"}}, now),
		lineFile("01KCMEDIA00000000000000002", map[string]any{"type": "file", "id": "700000000000000002", "fileName": "pass.pdf", "fileSize": len(pdf.Body)}, now),
		lineFile("01KCMEDIA00000000000000003", map[string]any{"type": "audio", "id": "700000000000000003", "duration": 2400, "contentProvider": map[string]any{"type": "line"}}, now),
		// A "photo" whose bytes are a PDF: LINE declares no type, so it is
		// stored as what it is.
		lineFile("01KCMEDIA00000000000000004", map[string]any{"type": "image", "id": "700000000000000004", "quoteToken": "q4", "contentProvider": map[string]any{"type": "line"}}, now),
		lineFile("01KCMEDIA00000000000000005", map[string]any{"type": "audio", "id": "700000000000000005", "duration": 1000, "contentProvider": map[string]any{"type": "line"}}, now),
		lineFile("01KCMEDIA00000000000000006", map[string]any{"type": "video", "id": "700000000000000006", "duration": 9000, "contentProvider": map[string]any{"type": "line"}}, now),
		// A sticker: described to the agent, never fetched.
		lineFile("01KCMEDIA00000000000000007", map[string]any{"type": "sticker", "id": "700000000000000007", "quoteToken": "q7", "packageId": "11537", "stickerId": "52002734",
			"stickerResourceType": "STATIC", "keywords": []string{"Hello"}}, now),
	}
	for i, b := range hooks {
		if code, body := h.postLine(b); code != http.StatusOK {
			t.Fatalf("webhook %d: %d %s", i, code, body)
		}
	}
	h.waitDelivered(7, 60*time.Second)
	if code, _ := h.postLine(hooks[0]); code != http.StatusOK { // LINE redelivers
		t.Fatalf("redelivery: %d", code)
	}
	h.quiesce(30 * time.Second)
	bubblesStart(t, h.fake.Delivered(), []string{"image 0: image/jpeg", "file 0: application/pdf", "voice 0: audio/mp4",
		"image 0: application/pdf", "voice 0: not stored (unavailable)", "video 0: not stored (unavailable)", "sticker 0: not stored (not_served)"})
	reasons := h.staged("line:"+lineBot+":"+lineAda, map[string][]byte{
		"700000000000000001": photo.Body, "700000000000000002": pdf.Body, "700000000000000003": voice.Body, "700000000000000004": pdf.Body,
	})
	if reasons["700000000000000005"] != message.ReasonUnavailable || reasons["700000000000000006"] != message.ReasonUnavailable ||
		reasons["11537/52002734"] != message.ReasonNotServed || !failed.Load() {
		t.Fatalf("reasons %v (the document's first call failed: %v)", reasons, failed.Load())
	}
	for _, id := range []string{"700000000000000001", "700000000000000002", "700000000000000003"} {
		if n := api.ContentDownloads(id); n != 1 {
			t.Errorf("%s downloaded %d times, want once", id, n)
		}
	}
	if n := api.ContentDownloads("700000000000000007"); n != 0 {
		t.Errorf("the sticker's content was asked for %d times", n)
	}
}

// waMedia is a webhook of Ada's media message id of type typ, whose media
// object is media.
func waMedia(id, typ string, media map[string]any, at time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"object": "whatsapp_business_account", "entry": []map[string]any{{
		"id": "102290129340398", "changes": []map[string]any{{"field": "messages", "value": map[string]any{
			"messaging_product": "whatsapp",
			"metadata":          map[string]string{"display_phone_number": "15550001234", "phone_number_id": waPhone},
			"contacts":          []map[string]any{{"profile": map[string]string{"name": "Ada Lovelace"}, "wa_id": waAda}},
			"messages":          []map[string]any{{"from": waAda, "id": id, "timestamp": strconv.FormatInt(at.Unix(), 10), "type": typ, typ: media}},
		}}},
	}}})
	return b
}

// TestWhatsAppFilesReachTheAgentAsURLsOfTheirBytes: a photo with a
// caption, a document and a voice note sent on WhatsApp reach the agent as
// URLs of their exact bytes — each media id's short-lived URL asked at the
// turn, the file fetched once, also when a turn is retried and the webhook
// redelivered; media Graph no longer holds, a type that lies and a
// download that breaks off reach it as reasons.
func TestWhatsAppFilesReachTheAgentAsURLsOfTheirBytes(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	handler, _ := h.fake.For(message.WhatsApp)
	api := handler.(*fakewhatsapp.API)
	photo, pdf, voice := fakefiles.SamplePhoto, fakefiles.SampleDocument, fakefiles.SampleVoice
	api.AddMedia("9001", photo)
	api.AddMedia("9002", pdf)
	api.AddMedia("9003", voice)
	api.AddMedia("9004", fakefiles.File{Body: pdf.Body, ContentType: "image/jpeg"})
	api.AddMedia("9005", fakefiles.File{Body: pdf.Body, Truncate: true})
	var failed atomic.Bool
	h.agent.fail = func(req agent.TurnRequest) (int, bool) {
		if len(req.Event.Attachments) > 0 && req.Event.Attachments[0].PlatformID == "9002" && !failed.Swap(true) {
			return http.StatusServiceUnavailable, true
		}
		return 0, false
	}
	now := h.clock.Now()
	hooks := [][]byte{
		waMedia("wamid.MEDIA1", "image", map[string]any{"id": "9001", "mime_type": "image/jpeg", "caption": "what plant is this?"}, now),
		waMedia("wamid.MEDIA2", "document", map[string]any{"id": "9002", "mime_type": "application/pdf", "filename": "pass.pdf"}, now),
		waMedia("wamid.MEDIA3", "audio", map[string]any{"id": "9003", "mime_type": "audio/ogg; codecs=opus", "voice": true}, now),
		// Declared a JPEG, and Graph says so too: the bytes are a PDF.
		waMedia("wamid.MEDIA4", "image", map[string]any{"id": "9004", "mime_type": "image/jpeg"}, now),
		waMedia("wamid.MEDIA5", "document", map[string]any{"id": "9005", "mime_type": "application/pdf", "filename": "cut.pdf"}, now),
		waMedia("wamid.MEDIA6", "video", map[string]any{"id": "9006", "mime_type": "video/mp4"}, now),
	}
	for i, b := range hooks {
		if code, body := h.postWhatsApp(b); code != http.StatusOK {
			t.Fatalf("webhook %d: %d %s", i, code, body)
		}
	}
	h.waitDelivered(7, 60*time.Second)
	if code, _ := h.postWhatsApp(hooks[0]); code != http.StatusOK { // Meta retries
		t.Fatalf("redelivery: %d", code)
	}
	h.quiesce(30 * time.Second)
	bubblesStart(t, h.fake.Delivered(), []string{"image 0: image/jpeg", "echo: what plant is this?", "file 0: application/pdf", "voice 0: audio/ogg",
		"image 0: not stored (type_mismatch)", "file 0: not stored (unavailable)", "video 0: not stored (unavailable)"})
	reasons := h.staged("whatsapp:"+waPhone+":"+waAda, map[string][]byte{"9001": photo.Body, "9002": pdf.Body, "9003": voice.Body})
	if reasons["9004"] != message.ReasonTypeMismatch || reasons["9005"] != message.ReasonUnavailable || reasons["9006"] != message.ReasonUnavailable || !failed.Load() {
		t.Fatalf("reasons %v (the document's first call failed: %v)", reasons, failed.Load())
	}
	for _, id := range []string{"9001", "9002", "9003"} {
		if n := api.MediaDownloads(id); n != 1 {
			t.Errorf("media %s downloaded %d times, want once", id, n)
		}
	}
}

// gcFile is Ada's message id in her DM with the Chat app, with text and one
// file uploaded to Chat (resource, its type and name).
func gcFile(id, text, resource, typ, name string, at time.Time) []byte {
	var ev map[string]any
	_ = json.Unmarshal(fakegooglechat.Message(gcDM, "", fakegooglechat.Ada, id, text, at), &ev)
	ev["message"].(map[string]any)["attachment"] = []any{map[string]any{
		"name": gcDM + "/messages/" + id + "/attachments/A1", "contentName": name, "contentType": typ,
		"attachmentDataRef": map[string]any{"resourceName": resource}, "source": "UPLOADED_CONTENT",
	}}
	b, _ := json.Marshal(ev)
	return b
}

// gcDriveFile is Ada's message id sharing the Drive file driveID, with no
// text.
func gcDriveFile(id, driveID, typ, name string, at time.Time) []byte {
	var ev map[string]any
	_ = json.Unmarshal(fakegooglechat.Message(gcDM, "", fakegooglechat.Ada, id, "", at), &ev)
	ev["message"].(map[string]any)["attachment"] = []any{map[string]any{
		"name": gcDM + "/messages/" + id + "/attachments/A1", "contentName": name, "contentType": typ,
		"driveDataRef": map[string]any{"driveFileId": driveID}, "source": "DRIVE_FILE",
	}}
	b, _ := json.Marshal(ev)
	return b
}

// TestGoogleChatFilesReachTheAgentAsURLsOfTheirBytes: a photo with a
// question, a document and a recording uploaded in Google Chat reach the
// agent as URLs of their exact bytes, fetched with media.download once
// each, also when a turn is retried and the event redelivered; a file Chat
// no longer serves, one whose bytes lie and a Drive file (which the app
// cannot read) reach it as reasons.
func TestGoogleChatFilesReachTheAgentAsURLsOfTheirBytes(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	api := h.googleChatAPI()
	photo, pdf, voice := fakefiles.SamplePhoto, fakefiles.SampleDocument, fakefiles.SampleVoice
	api.AddAttachment("Cgc1", photo)
	api.AddAttachment("Cgc2", pdf)
	api.AddAttachment("Cgc3", voice)
	api.AddAttachment("Cgc4", fakefiles.File{Body: pdf.Body, ContentType: "image/png"})
	var failed atomic.Bool
	h.agent.fail = func(req agent.TurnRequest) (int, bool) {
		if len(req.Event.Attachments) > 0 && req.Event.Attachments[0].PlatformID == "Cgc2" && !failed.Swap(true) {
			return http.StatusServiceUnavailable, true
		}
		return 0, false
	}
	now := h.clock.Now()
	events := [][]byte{
		gcFile("Med01.Med01", "what plant is this?", "Cgc1", "image/jpeg", "plant.jpg", now),
		gcFile("Med02.Med02", "", "Cgc2", "application/pdf", "pass.pdf", now.Add(time.Millisecond)),
		gcFile("Med03.Med03", "", "Cgc3", "audio/ogg", "note.ogg", now.Add(2*time.Millisecond)),
		gcFile("Med04.Med04", "", "Cgc4", "image/png", "photo.png", now.Add(3*time.Millisecond)),
		gcFile("Med05.Med05", "", "Cgc5", "image/jpeg", "gone.jpg", now.Add(4*time.Millisecond)),
		gcDriveFile("Med06.Med06", "1DriveFileOfAda", "application/vnd.google-apps.document", "itinerary", now.Add(5*time.Millisecond)),
	}
	for i, b := range events {
		if code, body := h.postGoogleChat(b); code != http.StatusOK {
			t.Fatalf("event %d: %d %s", i, code, body)
		}
	}
	h.waitDelivered(7, 60*time.Second)
	if code, _ := h.postGoogleChat(events[0]); code != http.StatusOK {
		t.Fatalf("redelivery: %d", code)
	}
	h.quiesce(30 * time.Second)
	bubblesStart(t, h.fake.Delivered(), []string{"image 0: image/jpeg", "echo: what plant is this?", "file 0: application/pdf", "audio 0: audio/ogg",
		"image 0: not stored (type_mismatch)", "image 0: not stored (unavailable)", "file 0: not stored (not_served)"})
	reasons := h.staged("googlechat:"+fakegooglechat.ProjectNumber+":"+gcDM, map[string][]byte{"Cgc1": photo.Body, "Cgc2": pdf.Body, "Cgc3": voice.Body})
	if reasons["Cgc4"] != message.ReasonTypeMismatch || reasons["Cgc5"] != message.ReasonUnavailable || reasons["1DriveFileOfAda"] != message.ReasonNotServed || !failed.Load() {
		t.Fatalf("reasons %v (the document's first call failed: %v)", reasons, failed.Load())
	}
	for _, id := range []string{"Cgc1", "Cgc2", "Cgc3"} {
		if n := api.AttachmentDownloads(id); n != 1 {
			t.Errorf("%s downloaded %d times, want once", id, n)
		}
	}
}

// teamsFile is Ada's message id in her personal chat with text and
// attachments.
func (h *harness) teamsFile(id, text string, atts []map[string]any, at time.Time) []byte {
	var act map[string]any
	_ = json.Unmarshal(faketeams.Message(h.teamsURL(), teamsPersonal, faketeams.Ada, id, text, at), &act)
	act["attachments"] = atts
	b, _ := json.Marshal(act)
	return b
}

// TestTeamsFilesReachTheAgentAsURLsOfTheirBytes: photos pasted in Teams
// reach the agent as URLs of their exact bytes, fetched from the connector
// with the app token once each, also when a turn is retried and the
// activity redelivered; an image the connector no longer holds, and a
// file upload whose downloadUrl is a loopback address (which
// shared/urlfetch refuses), reach it as reasons.
func TestTeamsFilesReachTheAgentAsURLsOfTheirBytes(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	api := h.teamsAPI()
	photo, png := fakefiles.SamplePhoto, fakefiles.File{Body: append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 600)...)}
	api.AddAttachment("0-wus-d3-1", photo)
	api.AddAttachment("0-wus-d3-2", png)
	img := func(id string) map[string]any {
		return map[string]any{"contentType": "image/*", "contentUrl": h.teamsURL() + "/v3/attachments/" + id + "/views/original"}
	}
	var failed atomic.Bool
	h.agent.fail = func(req agent.TurnRequest) (int, bool) {
		if len(req.Event.Attachments) > 0 && strings.Contains(req.Event.Attachments[0].PlatformID, "0-wus-d3-2") && !failed.Swap(true) {
			return http.StatusServiceUnavailable, true
		}
		return 0, false
	}
	now := h.clock.Now()
	// A SharePoint downloadUrl is on another host than the connector: here
	// a loopback one, over HTTPS.
	sharepoint := strings.Replace(strings.Replace(h.teamsURL(), "http://", "https://", 1), "127.0.0.1", "localhost", 1)
	upload := map[string]any{"contentType": "application/vnd.microsoft.teams.file.download.info", "name": "pass.pdf",
		"content": map[string]any{"downloadUrl": sharepoint + "/download.aspx?UniqueId=1&tempauth=x", "uniqueId": "1", "fileType": "pdf"}}
	acts := [][]byte{
		h.teamsFile("1764500000001", "what plant is this?", []map[string]any{img("0-wus-d3-1"), {"contentType": "text/html", "content": "<p>what plant is this?</p>"}}, now),
		h.teamsFile("1764500000002", "", []map[string]any{img("0-wus-d3-2")}, now),
		h.teamsFile("1764500000003", "", []map[string]any{upload}, now),
		h.teamsFile("1764500000004", "", []map[string]any{img("0-wus-d3-gone")}, now),
	}
	for i, b := range acts {
		if code, body := h.postTeams(b); code != http.StatusOK && code != http.StatusAccepted {
			t.Fatalf("activity %d: %d %s", i, code, body)
		}
	}
	h.waitDelivered(5, 60*time.Second)
	if code, _ := h.postTeams(acts[0]); code != http.StatusOK && code != http.StatusAccepted { // redelivered
		t.Fatalf("redelivery: %d", code)
	}
	h.quiesce(30 * time.Second)
	bubblesStart(t, h.fake.Delivered(), []string{"image 0: image/jpeg", "echo: what plant is this?", "image 0: image/png", "file 0: not stored (unavailable)", "image 0: not stored (unavailable)"})
	imgURL := func(id string) string { return h.teamsURL() + "/v3/attachments/" + id + "/views/original" }
	reasons := h.staged("teams:"+faketeams.AppID+":"+teamsPersonal, map[string][]byte{imgURL("0-wus-d3-1"): photo.Body, imgURL("0-wus-d3-2"): png.Body})
	if len(reasons) != 2 || !failed.Load() {
		t.Fatalf("reasons %v (the second photo's first call failed: %v)", reasons, failed.Load())
	}
	for _, id := range []string{"0-wus-d3-1", "0-wus-d3-2"} {
		if n := api.AttachmentDownloads(id); n != 1 {
			t.Errorf("%s downloaded %d times, want once", id, n)
		}
	}
	failures := h.logs.lines("msg", "attachment download failed")
	if len(failures) != 2 || !strings.Contains(fmt.Sprint(failures), "port_refused") && !strings.Contains(fmt.Sprint(failures), "address_refused") {
		t.Errorf("failed downloads logged: %v; want the upload refused by urlfetch, and the image gone", failures)
	}
}
