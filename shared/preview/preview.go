// Package preview shows a streamed reply while the agent writes it: a Pump
// takes the stream's deltas and status lines as they are read, and keeps
// one preview up to date through a ShowFunc (the platform's Previewer),
// throttled: at most one update per interval, at most MaxUpdates per turn,
// the newest text winning over any the throttle skipped. Nothing it does
// blocks the reading of the stream, and stopping it waits at most for the
// update in flight, which is bounded by the interval: a preview never
// delays the reply by more than one interval.
package preview

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/message"
)

// Config tunes previews.
type Config struct {
	// Interval is the least time between two updates of a preview
	// (PARLEY_PREVIEW_INTERVAL); a platform's own minimum wins where it is
	// longer. Defaults to 1 second.
	Interval time.Duration
	// MaxUpdates bounds the platform calls of one turn's preview
	// (PARLEY_PREVIEW_MAX_UPDATES): past it the preview stays as it is
	// until the reply. Defaults to 40.
	MaxUpdates int
}

// Bounds of Config.
const (
	MinInterval   = 250 * time.Millisecond
	MaxInterval   = time.Minute
	MaxMaxUpdates = 1000
)

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	c.Interval = cmp.Or(c.Interval, time.Second)
	c.MaxUpdates = cmp.Or(c.MaxUpdates, 40)
	return c
}

// Validate reports every problem (call it on WithDefaults' result).
func (c Config) Validate() error {
	var errs []error
	if c.Interval < MinInterval || c.Interval > MaxInterval {
		errs = append(errs, fmt.Errorf("preview interval %s: want %s to %s", c.Interval, MinInterval, MaxInterval))
	}
	if c.MaxUpdates < 1 || c.MaxUpdates > MaxMaxUpdates {
		errs = append(errs, fmt.Errorf("preview max updates %d: want 1 to %d", c.MaxUpdates, MaxMaxUpdates))
	}
	return errors.Join(errs...)
}

// ShowFunc shows text as the preview, within ctx. A *message.SendError of
// class rate_limit with a RetryAfter holds the next update back that long;
// any other error is logged by the caller, and the next update tried as
// usual.
type ShowFunc func(ctx context.Context, text string) error

// Pump keeps one preview up to date. Its methods are safe for concurrent
// use.
type Pump struct {
	show     ShowFunc
	showStat ShowFunc // nil: the status line is part of the text
	interval time.Duration
	max      int
	onErr    func(error)

	mu          sync.Mutex
	text        strings.Builder
	status      string
	changed     bool
	statChanged bool
	updates     int

	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

// Start starts a pump that shows through show, at most once per interval
// (the larger of cfg.Interval and the platform's minimum) and cfg.MaxUpdates
// times. onErr, when set, hears every failed update.
func Start(ctx context.Context, cfg Config, platformMin time.Duration, show ShowFunc, onErr func(error)) *Pump {
	return StartWithStatus(ctx, cfg, platformMin, show, nil, onErr)
}

// StartWithStatus is Start for a platform that shows the status line on
// its own (Slack's assistant status): status gets the newest status line
// ("" once cleared), show the text alone. Both are throttled together,
// each call counting as an update.
func StartWithStatus(ctx context.Context, cfg Config, platformMin time.Duration, show, status ShowFunc, onErr func(error)) *Pump {
	cfg = cfg.WithDefaults()
	p := &Pump{
		show: show, showStat: status, interval: max(cfg.Interval, platformMin), max: cfg.MaxUpdates, onErr: onErr,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go p.run(context.WithoutCancel(ctx))
	return p
}

// Add takes one stream event: a delta extends the text, a status replaces
// the status line. It never blocks.
func (p *Pump) Add(ev agent.StreamEvent) {
	if ev.Text == nil {
		return
	}
	p.mu.Lock()
	switch ev.Type {
	case agent.EventDelta:
		p.text.WriteString(*ev.Text)
	case agent.EventStatus:
		p.status = strings.TrimSpace(*ev.Text)
		if p.showStat != nil {
			p.statChanged = true
			p.mu.Unlock()
			p.poke()
			return
		}
	default:
		p.mu.Unlock()
		return
	}
	p.changed = true
	p.mu.Unlock()
	p.poke()
}

func (p *Pump) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Stop ends the pump: no update starts after it, and it returns once the
// update in flight, if any, is over.
func (p *Pump) Stop() {
	p.closed.Do(func() { close(p.stop) })
	<-p.done
}

// Updates is how many updates were shown.
func (p *Pump) Updates() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.updates
}

// render is the preview's text (Render), the status line left out where
// the platform shows it on its own.
func (p *Pump) render() string {
	if p.showStat != nil {
		return Render(p.text.String(), "")
	}
	return Render(p.text.String(), p.status)
}

// Render is a preview's text: the reply written so far, and the status line
// under it ("…" before it marks it as the agent's status, not the reply).
func Render(text, status string) string {
	text, status = strings.TrimSpace(text), strings.TrimSpace(status)
	switch {
	case status == "":
		return text
	case text == "":
		return "… " + status
	}
	return text + "\n\n… " + status
}

func (p *Pump) run(ctx context.Context) {
	defer close(p.done)
	var next time.Time // no update before it
	for {
		select {
		case <-p.stop:
			return
		case <-p.wake:
		}
		if wait := time.Until(next); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-p.stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
		p.mu.Lock()
		text, due := p.render(), p.changed && p.updates < p.max
		p.changed = false
		if due && text != "" {
			p.updates++
		}
		status, statDue := p.status, p.statChanged && p.updates < p.max
		p.statChanged = false
		if statDue {
			p.updates++
		}
		p.mu.Unlock()
		due = due && text != ""
		if !due && !statDue {
			continue
		}
		// An update is bounded by the interval, so Stop waits at most that.
		cctx, cancel := context.WithTimeout(ctx, p.interval)
		var err error
		if statDue {
			err = p.showStat(cctx, status)
		}
		if due {
			err = errors.Join(err, p.show(cctx, text))
		}
		cancel()
		// The interval runs from the platform's answer, not from the
		// call: the platform counts from when a request reached it, and
		// the next one, started an interval after the last one started,
		// can reach it sooner (Telegram refuses a second draft within a
		// second).
		next = time.Now().Add(p.interval)
		var se *message.SendError
		if errors.As(err, &se) && se.Class == message.FailRateLimit && se.RetryAfter > 0 {
			if later := time.Now().Add(se.RetryAfter); later.After(next) {
				next = later
			}
		}
		if err != nil && p.onErr != nil {
			p.onErr(err)
		}
	}
}
