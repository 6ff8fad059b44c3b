package runner_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/faketelegram"
)

// TestReferenceAgents runs the reference agents of docs/examples, each in
// its own language's runtime, as Parley's agent through the local runner: a
// message, a question answered with its button, a reply posted later to
// /reply (previewed first with /reply/preview, drafts while it is written),
// a message sent first with /send, and a streamed reply (drafts while it
// comes): each delivered once, in order.
func TestReferenceAgents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, runtime, file string }{
		{"python", "python3", "../../docs/examples/python/agent.py"},
		{"node", "node", "../../docs/examples/node/agent.js"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runtime, err := exec.LookPath(tc.runtime)
			if err != nil {
				t.Fatalf("the %s reference agent needs %s on PATH: %v", tc.name, tc.runtime, err)
			}
			// The runner needs the agent's URL before it starts, the agent
			// the runner's: a proxy in front of the agent breaks the knot.
			var target atomic.Pointer[httputil.ReverseProxy]
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if p := target.Load(); p != nil {
					p.ServeHTTP(w, r)
					return
				}
				http.Error(w, "agent not started yet", http.StatusServiceUnavailable)
			}))
			t.Cleanup(proxy.Close)
			h := start(t, options{env: map[string]string{
				"PARLEY_AGENT_URL":    proxy.URL,
				"PARLEY_SEND_TARGETS": `["telegram:` + tgBotID + `:*"]`,
			}})

			cmd := exec.Command(runtime, tc.file)
			cmd.Env = append(cmd.Environ(), "PARLEY_AGENT_SECRET="+agentSecret, "PARLEY_URL="+h.url, "PORT=0")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var output strings.Builder
			cmd.Stderr = &output
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				if t.Failed() {
					t.Logf("%s agent output:\n%s", tc.name, output.String())
				}
			})
			lines := bufio.NewScanner(stdout)
			if !lines.Scan() || !strings.HasPrefix(lines.Text(), "listening on ") {
				t.Fatalf("the agent did not start: %q", lines.Text())
			}
			agentURL, _ := url.Parse("http://127.0.0.1:" + strings.TrimPrefix(lines.Text(), "listening on "))
			target.Store(httputil.NewSingleHostReverseProxy(agentURL))
			go func() {
				for lines.Scan() {
					output.WriteString(lines.Text() + "\n")
				}
			}()

			chat := int64(60)
			if tc.name == "node" {
				chat = 61
			}
			say := func(text string) {
				t.Helper()
				if code, body := h.postTelegram(telegramUpdate(int(updateIDs.Add(1)), chat, text)); code != http.StatusOK {
					t.Fatalf("%s: %d %s", text, code, body)
				}
			}
			say("hello")
			want := []string{"you said: hello", "(" + tc.name + " agent)"}
			if got := texts(h.waitDelivered(2, 30*time.Second)); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("delivered %q, want %q", got, want)
			}

			say("/seat")
			d := h.waitDelivered(4, 30*time.Second)
			if d[2].Text != "let's pick your seat" || len(d[3].Controls) != 2 {
				t.Fatalf("the question: %+v", d[2:])
			}
			h.pressTelegram(d[3], "Aisle", chat)
			if got := texts(h.waitDelivered(5, 30*time.Second))[4]; got != "booked: aisle seat ("+tc.name+" agent)" {
				t.Fatalf("after the press: %q", got)
			}

			say("/slow the itinerary")
			say("after slow")
			d = h.waitDelivered(9, 30*time.Second)
			name := "(" + tc.name + " agent)"
			if got := texts(d[5:9]); strings.Join(got, "|") != "done thinking about the itinerary|"+name+"|you said: after slow|"+name {
				t.Fatalf("the posted pair was not delivered in its turn's place: %q", got)
			}
			// Its previews (POST /reply/preview) were shown while it was
			// written: drafts in a private chat, which go on their own.
			want = []string{"… on it", "done thinking\n\n… on it", "done thinking about the itinerary"}
			if got := chatDrafts(h, chat); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("the posted reply's previews: %q, want %q", got, want)
			}

			say("/remind stretch")
			if got := texts(h.waitDelivered(10, 30*time.Second))[9]; got != "reminder: stretch "+name {
				t.Fatalf("the send: %q", got)
			}
			// A private chat takes a draft a second: the stream's first
			// would be refused for the /slow previews' last, and the stream
			// is over before the retry.
			time.Sleep(faketelegram.DraftEvery)
			say("/stream your gate moved")
			if got := texts(h.waitDelivered(12, 30*time.Second)[10:]); strings.Join(got, "|") != "your gate moved|"+name {
				t.Fatalf("the streamed reply: %q", got)
			}
			drafts := chatDrafts(h, chat)[len(want):]
			if len(drafts) == 0 || !strings.HasPrefix(drafts[0], "… looking it up") && !strings.HasPrefix(drafts[0], "your") {
				t.Fatalf("drafts %q: want the stream previewed while it came", drafts)
			}
			h.quiesce(30 * time.Second)
			if n := len(h.fake.Delivered()); n != 12 {
				t.Fatalf("%d delivered, want 12: %q", n, texts(h.fake.Delivered()))
			}
		})
	}
}

// chatDrafts are the drafts shown in a Telegram private chat, in order.
func chatDrafts(h *harness, chat int64) []string {
	var drafts []string
	for _, d := range h.fake.Recorder().Drafts() {
		if d.Chat == strconv.FormatInt(chat, 10) {
			drafts = append(drafts, d.Text)
		}
	}
	return drafts
}
