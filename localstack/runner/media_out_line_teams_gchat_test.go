package runner_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/fakeline"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
)

// The files of mixedMedia, by the agent's own URLs.
const (
	noteURL    = "https://example.com/note.m4a"
	chartURL   = "https://example.com/chart.png"
	clipURL    = "https://example.com/clip.mp4"
	previewURL = "https://example.com/clip.jpg"
)

// mixedMedia starts a harness whose agent answers every turn with a voice
// note (with its duration), a text, an image (captioned), a file uploaded
// through POST /media, a video (with its preview image) and a closing
// text: six bubbles, two over the default limit. It returns the upload's
// id.
func mixedMedia(t *testing.T) (*harness, string) {
	t.Helper()
	h := start(t, options{env: map[string]string{"PARLEY_MAX_BUBBLES": "6"}})
	doc := h.upload("up-"+strings.ReplaceAll(t.Name(), "/", "-"), "application/pdf", pdfFile)
	h.agent.answer = func(agent.TurnRequest) (string, bool) {
		return `{"schema":"openab.turn.v1","messages":[` +
			`{"id":"note","media":{"kind":"voice","url":"` + noteURL + `","duration_ms":4200,"caption":"listen"}},` +
			`{"id":"a","text":"here you go"},` +
			`{"id":"chart","media":{"kind":"image","url":"` + chartURL + `","caption":"the chart"}},` +
			`{"id":"doc","media":{"kind":"file","upload_id":"` + doc + `","name":"report.pdf","caption":"the report"}},` +
			`{"id":"clip","media":{"kind":"video","url":"` + clipURL + `","preview_url":"` + previewURL + `"}},` +
			`{"id":"z","text":"that's all"}]}`, true
	}
	return h, doc
}

// settled waits for want deliveries, posts the webhook again (a
// redelivery), waits for the system to go quiet, and checks that exactly
// want deliveries happened and every unit of the turn is sent with the
// ids of the messages it made, in order.
func (h *harness) settled(want []string, redeliver func(), eventKey string, idsPerUnit []int) []fakeplatform.Delivery {
	h.t.Helper()
	h.waitDelivered(len(want), 60*time.Second)
	redeliver()
	h.quiesce(30 * time.Second)
	got := h.fake.Delivered()
	if len(got) != len(want) {
		h.t.Fatalf("%d deliveries, want %d: %q", len(got), len(want), texts(got))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i].Text, w) {
			h.t.Errorf("delivery %d = %q, want it to start %q", i, got[i].Text, w)
		}
	}
	in := h.intentFor(eventKey)
	var ids []string
	for i, u := range in.Units {
		if u.State != message.UnitSent || len(u.Receipt) != idsPerUnit[i] {
			h.t.Errorf("unit %s = %s %v (%s), want sent with %d ids", u.ID, u.State, u.Receipt, u.FailureReason, idsPerUnit[i])
		}
		ids = append(ids, u.Receipt...)
	}
	// Each delivery is one call; a LINE call posts several messages (a
	// file and its caption), whose first id the fake records. So every
	// delivered id is in the receipts, in the same order, and none twice.
	next := 0
	for _, d := range got {
		i := slices.Index(ids[next:], d.MessageID)
		if i < 0 {
			h.t.Fatalf("receipts %v, want every delivered id in order; %s is not after %d", ids, d.MessageID, next)
		}
		next += i + 1
	}
	if len(slices.Compact(slices.Sorted(slices.Values(ids)))) != len(ids) {
		h.t.Errorf("receipts %v hold an id twice", ids)
	}
	if n := h.agent.calls(); n != 1 {
		h.t.Errorf("the agent was called %d times for a message and its redelivery", n)
	}
	return got
}

// TestMediaMixOnLINE: on LINE the voice note is an audio message (the
// agent gave its duration), the first bubble, riding the free reply call
// with its caption; the image and the video (with the agent's preview
// image) are native and pushed, each caption in the same call; the file,
// which a bot cannot send, is its caption and the upload's presigned link.
func TestMediaMixOnLINE(t *testing.T) {
	t.Parallel()
	h, doc := mixedMedia(t)
	const id = "01KR0000000000000000MEDIA7"
	h.postLineFresh(t, id, "everything please")
	got := h.settled([]string{
		fakeline.AudioText(noteURL) + "\n\nlisten", "here you go", fakeline.ImageText(chartURL) + "\n\nthe chart",
		"the report\nhttp", fakeline.VideoText(clipURL), "that's all",
	}, func() {
		if code, _ := h.postLine(lineText(id, lineAda, "everything please", h.clock.Now())); code != http.StatusOK {
			t.Fatal("redelivery")
		}
	}, "evt#line#"+lineBot+"#"+id, []int{2, 1, 2, 1, 1, 1})
	if replies, replied, pushes := lineCalls(got); replies != 1 || replied != 2 || pushes != 5 {
		t.Errorf("%d replies (%d messages) and %d pushes, want the voice note and its caption replied, the rest pushed", replies, replied, pushes)
	}
	if !strings.Contains(got[3].Text, "/out/"+doc) {
		t.Errorf("the file's link %q is not the upload's", got[3].Text)
	}
	var msgs []struct {
		Type     string `json:"type"`
		Duration int64  `json:"duration"`
		Preview  string `json:"previewImageUrl"`
	}
	for _, c := range []struct {
		d    fakeplatform.Delivery
		want string
	}{{got[0], "audio"}, {got[4], "video"}} {
		if err := json.Unmarshal(c.d.Args["messages"], &msgs); err != nil || msgs[0].Type != c.want {
			t.Fatalf("messages %s, want %s first", c.d.Args["messages"], c.want)
		}
		if c.want == "audio" && msgs[0].Duration != 4200 || c.want == "video" && msgs[0].Preview != previewURL {
			t.Errorf("%s message %+v: want the agent's duration and preview", c.want, msgs[0])
		}
	}
}

// TestMediaMixOnTeams: on Teams the image is a picture attachment by URL
// and its caption a text activity after it (two ids, one unit); the voice
// note, the file and the video are links in text, each with its caption.
func TestMediaMixOnTeams(t *testing.T) {
	t.Parallel()
	h, doc := mixedMedia(t)
	const id = "1764433000777"
	post := func() {
		if code, body := h.postTeams(faketeams.Message(h.teamsURL(), teamsPersonal, faketeams.Ada, id, "everything please", h.clock.Now())); code != http.StatusOK {
			t.Fatalf("webhook: %d %s", code, body)
		}
	}
	post()
	got := h.settled([]string{
		"listen\n" + noteURL, "here you go", faketeams.ImageText(chartURL), "the chart", "the report\nhttp", clipURL, "that's all",
	}, post, "evt#teams#"+faketeams.AppID+"#"+teamsPersonal+"|"+id, []int{1, 1, 2, 1, 1, 1})
	if !strings.Contains(got[4].Text, "/out/"+doc) || got[2].Args["attachments"] == nil {
		t.Errorf("deliveries %q: want the picture as an attachment and the upload's link", texts(got))
	}
}

// TestMediaMixOnGoogleChat: a Chat app cannot attach files (media.upload
// needs user authentication), so every media bubble is its caption and
// link in one message, created with the unit's requestId like any text.
func TestMediaMixOnGoogleChat(t *testing.T) {
	t.Parallel()
	h, doc := mixedMedia(t)
	const id = "Media7.Media7"
	post := func() {
		if code, body := h.postGoogleChat(fakegooglechat.Message(gcDM, "", fakegooglechat.Ada, id, "everything please", h.clock.Now())); code != http.StatusOK {
			t.Fatalf("webhook: %d %s", code, body)
		}
	}
	post()
	got := h.settled([]string{
		"listen\n" + noteURL, "here you go", "the chart\n" + chartURL, "the report\nhttp", clipURL, "that's all",
	}, post, "evt#googlechat#"+fakegooglechat.ProjectNumber+"#"+gcDM+"/messages/"+id, []int{1, 1, 1, 1, 1, 1})
	if !strings.Contains(got[3].Text, "/out/"+doc) {
		t.Errorf("the file's link %q is not the upload's", got[3].Text)
	}
}
