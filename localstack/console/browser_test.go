package console_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/localstack/localtest"
	"github.com/parleyhq/parley/shared/message"
)

// ScreenshotsEnv, when set to a folder (docs/), has TestConsoleInTheBrowser
// write the console's screenshots there: the README's and
// docs/operations.md's pictures, never made by hand.
const ScreenshotsEnv = "PARLEY_CONSOLE_SCREENSHOTS"

// chromium is Debian's chromium, which make setup installs (PARLEY_CHROMIUM
// names another).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PARLEY_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("headless Chromium not found: make setup installs Debian's chromium (or set PARLEY_CHROMIUM)")
	return ""
}

// browser is a headless Chromium on a fresh profile.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1440, 900),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// Started on the tab's own context: a context of a bounded step that
	// started it would close it when the step ends.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// page drives the console as a person would.
type page struct {
	t   *testing.T
	ctx context.Context
}

func (p page) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// click clicks what sel finds in one of the page's lists, then waits for
// after: the page redraws its lists as it polls, so the node found may be
// gone before the click lands ("Could not find node with given id"); the
// click is tried again on a fresh lookup. A failed click dispatched no
// mouse event.
func click[S chromedp.Selectable](p page, what string, sel S, after ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	var err error
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
		err = chromedp.Do(ctx, chromedp.Click(sel))
		cancel()
		if err == nil {
			p.run(what, after...)
			return
		}
	}
	p.t.Fatalf("%s: %v", what, err)
}

// eval evaluates js in the page and decodes its value into T.
func eval[T any](p page, js string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// say writes text as a person on platform, in a chat of chatType, with the
// composer.
func (p page) say(platform message.Platform, chatType, text string) {
	p.t.Helper()
	p.run("pick "+string(platform), chromedp.SetValue(chromedp.ID("platform"), string(platform)))
	eval[bool](p, `document.getElementById("platform").dispatchEvent(new Event("change"))`)
	p.run("write on "+string(platform),
		chromedp.SetValue(chromedp.ID("chat-type"), chatType),
		chromedp.SendKeys(chromedp.ID("text"), text),
		chromedp.Click(chromedp.ID("send")),
	)
}

// texts are the texts of the items of kind in the conversation shown.
func (p page) texts(kind string) []string {
	p.t.Helper()
	return eval[[]string](p, fmt.Sprintf(
		`[...document.querySelectorAll("#bubbles .item.%s .msg")].map(e => e.firstChild ? e.firstChild.textContent : "")`, kind))
}

// until waits for cond, reading the page.
func (p page) until(what string, cond func() bool) {
	p.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if cond() {
			return
		}
	}
	p.t.Fatalf("timed out waiting for %s; the page shows %q, person %q, status %q %q", what, p.texts("bubble"), p.texts("person"),
		p.value(`document.getElementById("composer-status").textContent`), p.value(`document.getElementById("attention-status").textContent`))
}

func (p page) value(js string) string {
	p.t.Helper()
	return eval[string](p, js)
}

func (p page) screenshot(name string) {
	p.t.Helper()
	dir := os.Getenv(ScreenshotsEnv)
	if dir == "" {
		return
	}
	p.run("settle", chromedp.Sleep(300*time.Millisecond))
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// TestConsoleInTheBrowser is a person at make run's console in headless
// Chromium: they talk to the echo agent on Telegram, Slack and Discord and
// see each reply's bubbles in order, with the time between them; they open
// a bubble's timeline (its correlation id, the agent call read from the
// log, its units from the records); they press a question's button and see
// the answer's own turn; and they resend a unit held for an operator from
// the attention list, confirming what it risks.
func TestConsoleInTheBrowser(t *testing.T) {
	s := localtest.Start(t, localtest.Options{})
	newConsole(t, s)
	p := page{t: t, ctx: browser(t)}
	p.run("open the console", chromedp.Navigate(s.URL+"/console/"), chromedp.WaitVisible(chromedp.ID("composer")))
	p.until("the composer's platforms", func() bool {
		return p.value(`String(document.querySelectorAll("#platform option").length)`) == "7"
	})

	// Telegram: three bubbles, in order, each after the bubble delay.
	p.say(message.Telegram, fakeplatform.ChatPrivate, "/bubbles on it | your flight moved to 8pm | safe travels")
	want := []string{"on it", "your flight moved to 8pm", "safe travels"}
	p.until("Telegram's three bubbles", func() bool { return len(p.texts("bubble")) == 3 })
	if got := p.texts("bubble"); !slices.Equal(got, want) {
		t.Fatalf("Telegram bubbles %q, want %q", got, want)
	}
	if got := p.texts("person"); len(got) != 1 || !strings.HasPrefix(got[0], "/bubbles on it") {
		t.Fatalf("the person's message: %q", got)
	}
	since := eval[[]string](p, `[...document.querySelectorAll("#bubbles [data-testid=since]")].map(e => e.textContent)`)
	if len(since) != 2 {
		t.Fatalf("time between bubbles %q, want one per bubble after the first", since)
	}
	for _, d := range since {
		var secs float64
		if _, err := fmt.Sscanf(d, "+%fs", &secs); err != nil || secs < 0.29 {
			t.Errorf("bubble after %q, want at least the 300 ms bubble delay", d)
		}
	}

	// Its timeline, from the records and the log.
	click(p, "open the first bubble's timeline", chromedp.CSS(`#bubbles .item.bubble .msg`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=correlation-id]`)))
	p.until("the timeline's units", func() bool {
		return p.value(`String(document.querySelectorAll("[data-testid=unit][data-state=sent]").length)`) == "3"
	})
	corr := p.value(`document.querySelector("[data-testid=correlation-id]").textContent`)
	if !strings.HasPrefix(corr, "evt#telegram#7000000001#") {
		t.Fatalf("correlation id %q", corr)
	}
	steps := p.value(`[...document.querySelectorAll("[data-testid=step]")].map(e => e.dataset.step + "/" + e.className).join(" ")`)
	for _, want := range []string{"enqueued/step src-record", "turn_claimed/step src-record", "agent_called/step src-log", "planned/step src-record", "unit/step src-record"} {
		if !strings.Contains(steps, want) {
			t.Errorf("timeline steps %q lack %s", steps, want)
		}
	}
	p.screenshot("console.png")

	// Slack and Discord, each in a conversation of its own.
	for _, tc := range []struct {
		platform message.Platform
		chat     string
	}{{message.Slack, fakeplatform.ChatPrivate}, {message.Discord, fakeplatform.ChatGroup}} {
		p.say(tc.platform, tc.chat, "/one hello from "+string(tc.platform))
		p.until(string(tc.platform)+"'s bubble", func() bool {
			got := p.texts("bubble")
			return len(got) == 1 && got[0] == "hello from "+string(tc.platform)
		})
		if head := p.value(`document.getElementById("chat-head").textContent`); !strings.Contains(strings.ToLower(head), string(tc.platform)) {
			t.Errorf("conversation head %q, want %s's", head, tc.platform)
		}
	}

	// A question, answered with its button: the answer is a turn of its
	// own, with its own correlation id.
	p.say(message.Telegram, fakeplatform.ChatPrivate, "/ask seat")
	p.run("the question's buttons", chromedp.WaitVisible(chromedp.CSS(`[data-testid=control][data-label="Window"]`)))
	click(p, "press Window", chromedp.CSS(`[data-testid=control][data-label="Window"]`))
	p.until("the answer's turn", func() bool {
		for _, b := range p.texts("bubble") {
			if strings.HasPrefix(b, "answer accept to ") && strings.Contains(b, `"seat"`) {
				return true
			}
		}
		return false
	})
	if got := p.texts("person"); !slices.Contains(got, "Window") {
		t.Errorf("the press is not shown as the person's: %q", got)
	}
	click(p, "open the answer's timeline", `//div[contains(@class,"msg") and starts-with(., "answer accept to ")]`)
	p.until("the answer's correlation id", func() bool {
		return strings.Contains(p.value(`(document.querySelector("[data-testid=correlation-id]")||{}).textContent||""`), "#cb:")
	})

	// A unit held for an operator, resent from the attention list.
	s.Fake.Inject(fakeplatform.Fault{Platform: message.Telegram, DropResponseAfterCommit: true})
	p.say(message.Telegram, fakeplatform.ChatPrivate, "/one held for you")
	p.run("open the attention list", chromedp.Click(chromedp.ID("tab-attention")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=attention-item][data-kind=held_unit]`)))
	p.screenshot("console-attention.png")
	click(p, "resend it", chromedp.CSS(`[data-testid=attention-item][data-kind=held_unit] [data-testid=action-resend]`),
		chromedp.WaitVisible(chromedp.ID("dialog")))
	if risk := p.value(`document.getElementById("dialog-text").textContent`); !strings.Contains(risk, "twice") {
		t.Errorf("the resend's confirmation %q: want what it risks", risk)
	}
	p.run("confirm", chromedp.Click(chromedp.ID("dialog-yes")))
	p.until("the attention list empty", func() bool {
		return p.value(`String(document.querySelectorAll("[data-testid=attention-item]").length)`) == "0"
	})
	p.until("the resent bubble", func() bool {
		n := 0
		for _, d := range s.Fake.Delivered() {
			if d.Text == "held for you" {
				n++
			}
		}
		return n == 2
	})
	if status := p.value(`document.getElementById("attention-status").textContent`); !strings.HasPrefix(status, "resent") {
		t.Errorf("attention status %q", status)
	}
}
