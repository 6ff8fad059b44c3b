package runner_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/urlfetch"
)

// upload asks POST /media for a place and PUTs b there, as an agent does;
// it returns the upload_id.
func (h *harness) upload(id, typ string, b []byte) string {
	h.t.Helper()
	req, _ := json.Marshal(map[string]any{"type": typ, "size": len(b)})
	code, body := h.post("/media", h.agentSigned(id, req), req)
	if code != http.StatusCreated {
		h.t.Fatalf("POST /media: %d %s", code, body)
	}
	var up struct {
		ID      string            `json:"upload_id"`
		URL     string            `json:"url"`
		Method  string            `json:"method"`
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal([]byte(body), &up); err != nil || !message.ValidUploadID(up.ID) || up.Method != http.MethodPut {
		h.t.Fatalf("POST /media answered %s (%v)", body, err)
	}
	put, _ := http.NewRequest(http.MethodPut, up.URL, bytes.NewReader(b))
	for k, v := range up.Headers {
		put.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(put)
	if err != nil {
		h.t.Fatalf("PUT the upload: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("PUT the upload: %s", resp.Status)
	}
	return up.ID
}

func arg(d fakeplatform.Delivery, k string) string {
	var s string
	if json.Unmarshal(d.Args[k], &s) != nil {
		var n json.Number
		_ = json.Unmarshal(d.Args[k], &n)
		return n.String()
	}
	return s
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

var (
	oggVoice = append([]byte("OggS\x00\x02\x00\x00"), bytes.Repeat([]byte{3}, 2000)...)
	pdfFile  = []byte("%PDF-1.7\n% the quarterly report\n%%EOF\n")
)

// TestMediaBubblesReachTelegramNatively: an image by the agent's URL, a file
// and a voice note uploaded through POST /media, between text bubbles, reach
// Telegram natively (sendPhoto by URL; sendDocument and sendVoice with the
// exact bytes), in order, once; a caption over Telegram's 1024 follows its
// file as a message, and the unit's receipt keeps both ids. A redelivered
// webhook sends nothing twice.
func TestMediaBubblesReachTelegramNatively(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	doc := h.upload("up-doc", "application/pdf", pdfFile)
	voice := h.upload("up-voice", "audio/ogg", oggVoice)
	long := strings.Repeat("a long caption ", 80) // 1200 characters
	h.agent.answer = func(req agent.TurnRequest) (string, bool) {
		return `{"schema":"openab.turn.v1","messages":[` +
			`{"id":"b1","text":"here you go"},` +
			`{"id":"chart","media":{"kind":"image","url":"https://example.com/chart.png","caption":"the chart"}},` +
			`{"id":"doc","media":{"kind":"file","upload_id":"` + doc + `","name":"report.pdf","caption":"` + long + `"}},` +
			`{"id":"note","media":{"kind":"voice","upload_id":"` + voice + `"}}]}`, true
	}
	update := telegramUpdate(8801, 4242, "send me the report")
	if code, body := h.postTelegram(update); code != http.StatusOK {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitDelivered(5, 60*time.Second)
	if code, _ := h.postTelegram(update); code != http.StatusOK {
		t.Fatalf("redelivered webhook: %d", code)
	}
	h.quiesce(30 * time.Second)
	got := h.fake.Delivered()
	if len(got) != 5 {
		t.Fatalf("%d deliveries, want 5: %q", len(got), texts(got))
	}
	methods := []string{arg(got[0], faketelegram.ArgMethod), arg(got[1], faketelegram.ArgMethod), arg(got[2], faketelegram.ArgMethod), arg(got[3], faketelegram.ArgMethod), arg(got[4], faketelegram.ArgMethod)}
	if want := []string{"", "sendPhoto", "sendDocument", "", "sendVoice"}; !slices.Equal(methods, want) {
		t.Fatalf("methods %q, want %q", methods, want)
	}
	if got[0].Text != "here you go" || got[1].Text != "the chart" || arg(got[1], faketelegram.ArgURL) != "https://example.com/chart.png" {
		t.Errorf("text, then the photo by URL with its caption: %q %q %q", got[0].Text, got[1].Text, arg(got[1], faketelegram.ArgURL))
	}
	if arg(got[2], faketelegram.ArgSHA256) != sha(pdfFile) || arg(got[2], faketelegram.ArgFileName) != "report.pdf" || got[2].Text != "" || got[3].Text != long {
		t.Errorf("the document: sha %s name %q caption %q, then %q", arg(got[2], faketelegram.ArgSHA256), arg(got[2], faketelegram.ArgFileName), got[2].Text, got[3].Text)
	}
	if arg(got[4], faketelegram.ArgSHA256) != sha(oggVoice) {
		t.Errorf("the voice note's bytes: %s, want %s", arg(got[4], faketelegram.ArgSHA256), sha(oggVoice))
	}
	in := h.intentFor("evt#telegram#" + tgBotID + "#8801")
	docUnit := in.Units[in.Index("doc#1")]
	if docUnit.State != message.UnitSent || !slices.Equal(docUnit.Receipt, []string{got[2].MessageID, got[3].MessageID}) {
		t.Errorf("document unit = %s %v, want sent with both ids", docUnit.State, docUnit.Receipt)
	}
	if u := in.Units[in.Index("note#1")]; u.Content.Media == nil || u.Content.Media.UploadID != voice {
		t.Errorf("the stored voice unit lost its upload: %+v", u.Content)
	}
}

// TestMediaCrashBetweenSendAndReceiptIsHeld: the file reached Telegram but
// its answer was lost (a crash between the media send and its receipt):
// Telegram has no idempotency, so the unit is held in unknown_after_send
// for an operator, never sent twice, and the next bubble still goes.
func TestMediaCrashBetweenSendAndReceiptIsHeld(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.fake.Inject(fakeplatform.Fault{Platform: message.Telegram, Chat: "4343", DropResponseAfterCommit: true, Times: 1})
	h.agent.answer = func(req agent.TurnRequest) (string, bool) {
		return `{"schema":"openab.turn.v1","messages":[` +
			`{"id":"pic","media":{"kind":"image","url":"https://example.com/a.png"}},{"id":"after","text":"and that's it"}]}`, true
	}
	if code, body := h.postTelegram(telegramUpdate(8802, 4343, "a picture please")); code != http.StatusOK {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitDelivered(2, 60*time.Second)
	h.quiesce(30 * time.Second)
	got := h.fake.Delivered()
	if len(got) != 2 || arg(got[0], faketelegram.ArgMethod) != "sendPhoto" || got[1].Text != "and that's it" {
		t.Fatalf("deliveries %q, want the photo once, then the text", texts(got))
	}
	in := h.intentFor("evt#telegram#" + tgBotID + "#8802")
	if u := in.Units[0]; u.State != message.UnitUnknown {
		t.Fatalf("media unit = %s (%s), want unknown_after_send (held)", u.State, u.FailureReason)
	}
	if in.Units[1].State != message.UnitSent {
		t.Fatalf("next unit = %s, want sent", in.Units[1].State)
	}
}

// TestMediaURLsParleyFetchesFollowTheRules: a voice note by the agent's URL
// is the one case Telegram needs bytes Parley reads itself; each SSRF rule
// refuses it, with the rule as the unit's failure, and the thread goes on.
// The allowed server (the test's own, opted in as a local stack would be)
// serves the bytes; its redirect to a private address, and a body over the
// bound, are refused too.
func TestMediaURLsParleyFetchesFollowTheRules(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/note.ogg":
			_, _ = w.Write(oggVoice)
		case "/redirect":
			http.Redirect(w, r, "https://10.0.0.7/note.ogg", http.StatusFound)
		case "/big.ogg":
			_, _ = w.Write(bytes.Repeat([]byte("OggS"), 100_000))
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html><body>not audio</body></html>"))
		}
	}))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	h := start(t, options{env: map[string]string{"PARLEY_MAX_BUBBLES": "12"}, fetch: fetchFrom(t, srv, 100_000)})
	cases := []struct{ url, reason string }{
		{srv.URL + "/note.ogg", ""},
		{"https://10.1.2.3/note.ogg", "address_refused"},
		{"https://169.254.169.254/latest/meta-data", "address_refused"},
		{"https://[::1]/note.ogg", "address_refused"},
		{"https://example.com:8443/note.ogg", "port_refused"},
		{srv.URL + "/redirect", "address_refused"},
		{srv.URL + "/big.ogg", "too_large"},
		{"https://localhost:" + port + "/note.ogg", "network"}, // opted in, but the certificate names example.com: refused for good
	}
	var msgs []string
	for i, c := range cases {
		msgs = append(msgs, `{"id":"v`+string(rune('a'+i))+`","media":{"kind":"voice","url":"`+c.url+`"}}`)
	}
	msgs = append(msgs, `{"id":"page","media":{"kind":"voice","url":"`+srv.URL+`/page"}}`, `{"id":"end","text":"done"}`)
	h.agent.answer = func(req agent.TurnRequest) (string, bool) {
		return `{"schema":"openab.turn.v1","messages":[` + strings.Join(msgs, ",") + `]}`, true
	}
	if code, body := h.postTelegram(telegramUpdate(8803, 4444, "voice notes")); code != http.StatusOK {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitDelivered(2, 90*time.Second)
	h.quiesce(30 * time.Second)
	got := h.fake.Delivered()
	if len(got) != 2 || arg(got[0], faketelegram.ArgSHA256) != sha(oggVoice) || got[1].Text != "done" {
		t.Fatalf("deliveries %q, want the allowed note, then the text", texts(got))
	}
	in := h.intentFor("evt#telegram#" + tgBotID + "#8803")
	for i, c := range cases {
		u := in.Units[i]
		switch {
		case c.reason == "" && u.State != message.UnitSent:
			t.Errorf("%s: %s %s, want sent", c.url, u.State, u.FailureReason)
		case c.reason != "" && (u.State != message.UnitFailed || !strings.Contains(u.FailureReason, "media url refused: "+c.reason)):
			t.Errorf("%s: %s %q, want failed with %s", c.url, u.State, u.FailureReason, c.reason)
		}
	}
	if u := in.Units[len(cases)]; u.State != message.UnitFailed || !strings.Contains(u.FailureReason, "voice_not_audio") {
		t.Errorf("an HTML page as a voice note: %s %q, want failed voice_not_audio", u.State, u.FailureReason)
	}
}

// TestMediaURLToLoopbackIsRefused: without an operator's opt-in, a name
// that resolves to loopback, and loopback itself, are refused at the
// connection: nothing is fetched, the unit fails saying why.
func TestMediaURLToLoopbackIsRefused(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1); _, _ = w.Write(oggVoice) }))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	h := start(t, options{fetch: urlfetch.Options{AllowPorts: []uint16{443, mustPort(t, port)}}})
	h.agent.answer = func(req agent.TurnRequest) (string, bool) {
		return `{"schema":"openab.turn.v1","messages":[` +
			`{"id":"name","media":{"kind":"voice","url":"https://localhost:` + port + `/n.ogg"}},` +
			`{"id":"addr","media":{"kind":"voice","url":"` + srv.URL + `/n.ogg"}},{"id":"end","text":"done"}]}`, true
	}
	if code, body := h.postTelegram(telegramUpdate(8805, 4646, "voice")); code != http.StatusOK {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitDelivered(1, 60*time.Second)
	h.quiesce(30 * time.Second)
	in := h.intentFor("evt#telegram#" + tgBotID + "#8805")
	for _, u := range in.Units[:2] {
		if u.State != message.UnitFailed || !strings.Contains(u.FailureReason, "media url refused: address_refused") {
			t.Errorf("%s: %s %q, want failed address_refused", u.ID, u.State, u.FailureReason)
		}
	}
	if n := hits.Load(); n != 0 || len(h.fake.Delivered()) != 1 {
		t.Fatalf("the server was reached %d times; deliveries %q", n, texts(h.fake.Delivered()))
	}
}

// fetchFrom lets delivery fetch agents' URLs on srv, the test's own TLS
// server on loopback, opted in as a local stack would be, at most max
// bytes.
func fetchFrom(t *testing.T, srv *httptest.Server, max int64) urlfetch.Options {
	t.Helper()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	return urlfetch.Options{
		AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, AllowPorts: []uint16{443, mustPort(t, port)},
		RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, MaxBytes: max,
	}
}

func mustPort(t *testing.T, s string) uint16 {
	t.Helper()
	var n uint16
	for _, c := range s {
		n = n*10 + uint16(c-'0')
	}
	return n
}

// TestMediaEndpointRefusesBadRequests: POST /media is signed like /reply,
// bounded in type and size, strict in its body; a refusal writes nothing.
func TestMediaEndpointRefusesBadRequests(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	body := func(v string) []byte { return []byte(v) }
	cases := []struct {
		name string
		hdr  http.Header
		body []byte
		code int
		want string
	}{
		{"unsigned", http.Header{"Content-Type": {"application/json"}}, body(`{"type":"image/png","size":10}`), 401, "unauthorized"},
		{"type", nil, body(`{"type":"application/x-msdownload","size":10}`), 422, "upload_refused"},
		{"params", nil, body(`{"type":"image/png; x=1","size":10}`), 400, "malformed"},
		{"size", nil, body(`{"type":"image/png","size":99999999999}`), 422, "upload_refused"},
		{"empty", nil, body(`{"type":"image/png","size":0}`), 400, "malformed"},
		{"unknown", nil, body(`{"type":"image/png","size":10,"public":true}`), 400, "malformed"},
		{"notjson", nil, body(`type=image/png`), 400, "malformed"},
	}
	for i, c := range cases {
		hdr := c.hdr
		if hdr == nil {
			hdr = h.agentSigned("media-"+string(rune('a'+i)), c.body)
		}
		code, resp := h.post("/media", hdr, c.body)
		if code != c.code || !strings.Contains(resp, c.want) {
			t.Errorf("%s: %d %s, want %d %s", c.name, code, resp, c.code, c.want)
		}
	}
	// An upload_id nobody PUT fails its unit with the reason.
	h.agent.answer = func(req agent.TurnRequest) (string, bool) {
		return `{"schema":"openab.turn.v1","messages":[{"id":"f","media":{"kind":"file","upload_id":"00000000000000000000000000000000"}},{"id":"t","text":"ok"}]}`, true
	}
	if code, b := h.postTelegram(telegramUpdate(8804, 4545, "file")); code != http.StatusOK {
		t.Fatalf("webhook: %d %s", code, b)
	}
	h.waitDelivered(1, 60*time.Second)
	h.quiesce(30 * time.Second)
	in := h.intentFor("evt#telegram#" + tgBotID + "#8804")
	if u := in.Units[0]; u.State != message.UnitFailed || !strings.Contains(u.FailureReason, "upload_not_found") {
		t.Fatalf("unit = %s %q, want failed upload_not_found", u.State, u.FailureReason)
	}

}

// TestEchoImageIsAnUploadedImageBubble: the echo agent's /image uploads its
// picture through POST /media and answers an image bubble; Telegram gets
// the exact bytes, with the caption.
func TestEchoImageIsAnUploadedImageBubble(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.mu.Lock() // the agent's handler reads echo after taking mu
	h.agent.echo.Media = h.url + "/media"
	h.agent.mu.Unlock()
	if code, body := h.postTelegram(telegramUpdate(8806, 4747, "/image a test card")); code != http.StatusOK {
		t.Fatalf("webhook: %d %s", code, body)
	}
	got := h.waitDelivered(1, 60*time.Second)
	if arg(got[0], faketelegram.ArgMethod) != "sendPhoto" || arg(got[0], faketelegram.ArgSHA256) != sha(agent.EchoImage()) || got[0].Text != "a test card" {
		t.Fatalf("delivered %s %s %q, want the echo image's bytes by sendPhoto, captioned", arg(got[0], faketelegram.ArgMethod), arg(got[0], faketelegram.ArgSHA256), got[0].Text)
	}
}

// TestMediaOnLINE: an image goes as LINE's image message with its caption
// in the same push (two ids, one unit); a video, which LINE cannot take
// without a preview image, goes as a link; a file is never part of the
// free reply group, which the first text bubble takes alone; every unit is
// sent once, in order.
func TestMediaOnLINE(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.answer = func(req agent.TurnRequest) (string, bool) {
		return `{"schema":"openab.turn.v1","messages":[{"id":"a","text":"look"},` +
			`{"id":"pic","media":{"kind":"image","url":"https://example.com/a.png","caption":"the picture"}},` +
			`{"id":"clip","media":{"kind":"video","url":"https://example.com/clip.mp4","caption":"the clip"}},{"id":"b","text":"nice?"}]}`, true
	}
	h.postLineFresh(t, "01KR0000000000000000MEDIA1", "media please")
	h.waitDelivered(4, 60*time.Second)
	h.quiesce(30 * time.Second)
	got := h.fake.Delivered()
	want := []string{"look", fakeline.ImageText("https://example.com/a.png") + "\n\nthe picture", "the clip\nhttps://example.com/clip.mp4", "nice?"}
	if !slices.Equal(texts(got), want) {
		t.Fatalf("delivered %q, want %q", texts(got), want)
	}
	if replies, _, pushes := lineCalls(got); replies != 1 || pushes != 3 {
		t.Errorf("%d replies and %d pushes, want the first bubble replied and the rest pushed", replies, pushes)
	}
	in := h.intentFor("evt#line#" + lineBot + "#01KR0000000000000000MEDIA1")
	for i, u := range in.Units {
		if n := map[int]int{1: 2}[i]; u.State != message.UnitSent || len(u.Receipt) != max(n, 1) {
			t.Errorf("unit %s = %s %v, want sent once with %d ids", u.ID, u.State, u.Receipt, max(n, 1))
		}
	}
}

// TestMediaBubblesReachWhatsAppByLink: WhatsApp takes files by link: an
// image with its caption, a document with its name (an upload, by its
// presigned URL), and a voice note as audio, whose caption follows as text;
// in order, once, each unit's receipt holding every wamid it made.
func TestMediaBubblesReachWhatsAppByLink(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	doc := h.upload("up-wa-doc", "application/pdf", pdfFile)
	h.agent.answer = func(req agent.TurnRequest) (string, bool) {
		return `{"schema":"openab.turn.v1","messages":[` +
			`{"id":"pic","media":{"kind":"image","url":"https://example.com/a.png","caption":"*the* chart"}},` +
			`{"id":"doc","media":{"kind":"file","upload_id":"` + doc + `","name":"report.pdf"}},` +
			`{"id":"note","media":{"kind":"voice","url":"https://example.com/n.ogg","caption":"listen"}}]}`, true
	}
	if code, body := h.postWhatsApp(waText("wamid.MEDIA1", waAda, "files please", h.clock.Now())); code != http.StatusOK {
		t.Fatalf("webhook: %d %s", code, body)
	}
	h.waitDelivered(4, 60*time.Second)
	h.quiesce(30 * time.Second)
	got := h.fake.Delivered()
	if len(got) != 4 {
		t.Fatalf("%d deliveries, want 4: %q", len(got), texts(got))
	}
	types := []string{arg(got[0], "type"), arg(got[1], "type"), arg(got[2], "type"), arg(got[3], "type")}
	if want := []string{"image", "document", "audio", "text"}; !slices.Equal(types, want) {
		t.Fatalf("types %q, want %q", types, want)
	}
	if got[0].Text == "*the* chart" || !strings.Contains(got[0].Text, "the") {
		t.Errorf("the caption %q: want it inert (no bold)", got[0].Text)
	}
	var docObj struct{ Link, Filename string }
	_ = json.Unmarshal(got[1].Args["document"], &docObj)
	if docObj.Filename != "report.pdf" || !strings.Contains(docObj.Link, "/out/"+doc) {
		t.Errorf("document %+v, want the upload's presigned link and its name", docObj)
	}
	if got[3].Text != "listen" {
		t.Errorf("the voice note's caption = %q, want it as text after the audio", got[3].Text)
	}
	in := h.intentFor("evt#whatsapp#" + waPhone + "#wamid.MEDIA1")
	if u := in.Units[2]; u.State != message.UnitSent || !slices.Equal(u.Receipt, []string{got[2].MessageID, got[3].MessageID}) {
		t.Errorf("voice unit = %s %v, want sent with both wamids", u.State, u.Receipt)
	}
}

// TestMediaThroughSend: /send takes a media bubble like a turn's
// reply, and refuses an invalid one with the member's path, enqueuing
// nothing.
func TestMediaThroughSend(t *testing.T) {
	t.Parallel()
	h := start(t, options{env: map[string]string{"PARLEY_SEND_TARGETS": `["telegram:` + tgBotID + `:*"]`}})
	thread := "telegram:" + tgBotID + ":4848"
	body := func(key, env string) []byte {
		b, _ := json.Marshal(map[string]any{"thread_key": thread, "idempotency_key": key, "envelope": json.RawMessage(env)})
		return b
	}
	good := body("media-1", `{"schema":"openab.turn.v1","messages":[{"id":"pic","media":{"kind":"image","url":"https://example.com/p.png","caption":"from cron"}}]}`)
	if code, body := h.postSend("send-media-1", good); code != http.StatusAccepted {
		t.Fatalf("/send: %d %s", code, body)
	}
	bad := body("media-2", `{"schema":"openab.turn.v1","messages":[{"id":"pic","media":{"kind":"image","url":"http://example.com/p.png"}}]}`)
	code, resp := h.postSend("send-media-2", bad)
	if code != http.StatusUnprocessableEntity || !strings.Contains(resp, "invalid_envelope") || !strings.Contains(resp, "messages[0].media.url") {
		t.Fatalf("/send with an http media url: %d %s, want 422 invalid_envelope naming the member", code, resp)
	}
	got := h.waitDelivered(1, 60*time.Second)
	h.quiesce(30 * time.Second)
	if len(h.fake.Delivered()) != 1 || arg(got[0], faketelegram.ArgMethod) != "sendPhoto" || got[0].Text != "from cron" {
		t.Fatalf("delivered %q, want the one photo", texts(h.fake.Delivered()))
	}
}

// TestMediaThroughReply: an async agent's POST /reply takes a media bubble
// as a synchronous reply's: it is refused 422 with the member's path when
// invalid, changing nothing, and delivered natively, once, in its place
// among the posted reply's bubbles when valid.
func TestMediaThroughReply(t *testing.T) {
	t.Parallel()
	h := start(t, options{})
	h.agent.fail = later
	turnID := intent.IDFor("evt#telegram#" + tgBotID + "#5301")
	if code, _ := h.postTelegram(telegramUpdate(5301, 53, "later, a picture")); code != http.StatusOK {
		t.Fatalf("webhook: %d", code)
	}
	h.waitAwait(turnID)
	post := func(env string) []byte {
		b, _ := json.Marshal(map[string]any{"turn_id": turnID, "envelope": json.RawMessage(env)})
		return b
	}
	bad := post(`{"schema":"openab.turn.v1","messages":[{"id":"pic","media":{"kind":"image","url":"http://example.com/p.png"}}]}`)
	if code, resp := h.postReply("msg_media_bad", bad); code != http.StatusUnprocessableEntity || !strings.Contains(resp, "messages[0].media.url") {
		t.Fatalf("/reply with an http media url: %d %s, want 422 naming the member", code, resp)
	}
	good := post(`{"schema":"openab.turn.v1","messages":[{"id":"a","text":"here it is"},{"id":"pic","media":{"kind":"image","url":"https://example.com/p.png","caption":"the chart"}},{"id":"b","text":"anything else?"}]}`)
	for range 2 { // the agent's retry of the same post, same webhook-id
		if code, resp := h.postReply("msg_media_good", good); code != http.StatusOK {
			t.Fatalf("/reply: %d %s", code, resp)
		}
	}
	got := h.waitDelivered(3, 60*time.Second)
	h.quiesce(30 * time.Second)
	if n := len(h.fake.Delivered()); n != 3 {
		t.Fatalf("%d delivered (%q), want 3", n, texts(h.fake.Delivered()))
	}
	if got[0].Text != "here it is" || arg(got[1], faketelegram.ArgMethod) != "sendPhoto" || got[1].Text != "the chart" || got[2].Text != "anything else?" {
		t.Fatalf("delivered %q (second by %s), want the text, the photo with its caption, the text", texts(got), arg(got[1], faketelegram.ArgMethod))
	}
}
