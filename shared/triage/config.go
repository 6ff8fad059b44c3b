package triage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// QuietMode says what quiet hours do to a proactive event.
type QuietMode string

const (
	// QuietSuppress drops the event (reason quiet_hours). The default.
	QuietSuppress QuietMode = "suppress"
	// QuietDefer accepts the event for delivery when quiet hours end: it
	// waits on inbound.fifo (through the message's visibility) and counts
	// against the cooldown and the daily cap as if it arrived then.
	QuietDefer QuietMode = "defer"
)

// Policy is the triage of one conversation's proactive events.
type Policy struct {
	// TimeZone is the IANA time zone ("Europe/Berlin") in which quiet hours
	// and the daily cap's day are read. Defaults to UTC.
	TimeZone string
	// QuietHours is "HH:MM-HH:MM" in TimeZone, start included, end
	// excluded; it may wrap midnight ("22:00-07:00"). Empty, or equal start
	// and end, means never quiet. Defaults to never quiet.
	QuietHours string
	// QuietMode is QuietSuppress or QuietDefer. Defaults to QuietSuppress.
	QuietMode QuietMode
	// Cooldown is the least time between two accepted proactive events of
	// one conversation. Defaults to 0: no cooldown.
	Cooldown time.Duration
	// DailyCap is the most proactive events accepted per conversation per
	// local day (the day starts at midnight in TimeZone). Defaults to 0: no
	// cap.
	DailyCap int
}

// Override replaces the fields of the default Policy it sets (nil fields
// inherit). Setting a field to its zero value turns the rule off.
type Override struct {
	TimeZone   *string
	QuietHours *string
	QuietMode  *QuietMode
	Cooldown   *time.Duration
	DailyCap   *int
}

// Apply returns p with o's fields set.
func (o Override) Apply(p Policy) Policy {
	if o.TimeZone != nil {
		p.TimeZone = *o.TimeZone
	}
	if o.QuietHours != nil {
		p.QuietHours = *o.QuietHours
	}
	if o.QuietMode != nil {
		p.QuietMode = *o.QuietMode
	}
	if o.Cooldown != nil {
		p.Cooldown = *o.Cooldown
	}
	if o.DailyCap != nil {
		p.DailyCap = *o.DailyCap
	}
	return p
}

// Config is the triage of every conversation.
type Config struct {
	// Default applies to every conversation without an override.
	Default Policy
	// Conversations overrides the default per conversation. Keys are
	// thread keys ("telegram:7000000001:-1001000000002:77") or chat keys,
	// which are thread keys without the thread part
	// ("telegram:7000000001:-1001000000002") and apply to every thread of
	// the chat; a thread key wins over its chat key. Defaults to none.
	Conversations map[string]Override
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	c.Default = c.Default.withDefaults()
	return c
}

func (p Policy) withDefaults() Policy {
	if p.TimeZone == "" {
		p.TimeZone = "UTC"
	}
	if p.QuietMode == "" {
		p.QuietMode = QuietSuppress
	}
	return p
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if _, err := compile(c.Default); err != nil {
		errs = append(errs, fmt.Errorf("triage default: %w", err))
	}
	for key, o := range c.Conversations {
		if !validKey(key) {
			errs = append(errs, fmt.Errorf("triage conversation %q: want a thread key platform:account:chat[:thread]", key))
			continue
		}
		if _, err := compile(o.Apply(c.Default)); err != nil {
			errs = append(errs, fmt.Errorf("triage conversation %q: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

// Policy returns the policy of the conversation t, with defaults.
func (c Config) Policy(t message.Thread) Policy {
	p := c.Default
	if o, ok := c.override(t); ok {
		p = o.Apply(p)
	}
	return p.withDefaults()
}

func (c Config) override(t message.Thread) (Override, bool) {
	if o, ok := c.Conversations[t.Key()]; ok {
		return o, true
	}
	chat := t
	chat.Thread = ""
	o, ok := c.Conversations[chat.Key()]
	return o, ok
}

// validKey accepts platform:account:chat[:thread] with no empty part.
func validKey(k string) bool {
	parts := strings.Split(k, ":")
	if len(parts) < 3 || len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
	}
	return true
}

// policyJSON is a Policy or an Override as written in PARLEY_TRIAGE.
type policyJSON struct {
	TimeZone   *string `json:"time_zone,omitempty"`
	QuietHours *string `json:"quiet_hours,omitempty"`
	QuietMode  *string `json:"quiet_mode,omitempty"`
	Cooldown   *string `json:"cooldown,omitempty"`
	DailyCap   *int    `json:"daily_cap,omitempty"`
}

type configJSON struct {
	policyJSON
	Conversations map[string]policyJSON `json:"conversations,omitempty"`
}

// ParseConfig reads a Config from JSON (PARLEY_TRIAGE): the default policy's
// fields at the top level, and per-conversation overrides under
// "conversations", keyed by thread or chat key. Durations are Go durations
// ("90s", "15m"). Unknown fields are refused. Empty input is the zero Config.
//
//	{"time_zone": "Europe/Berlin", "quiet_hours": "22:00-07:00", "quiet_mode": "suppress",
//	 "cooldown": "10m", "daily_cap": 20,
//	 "conversations": {"telegram:7000000001:42": {"quiet_hours": "", "daily_cap": 50}}}
//
// The result is not validated: call Validate.
func ParseConfig(data []byte) (Config, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Config{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w configJSON
	if err := dec.Decode(&w); err != nil {
		return Config{}, fmt.Errorf("triage config: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Config{}, errors.New("triage config: trailing data after the JSON object")
	}
	var errs []error
	o, err := w.policyJSON.override()
	if err != nil {
		errs = append(errs, fmt.Errorf("triage config: %w", err))
	}
	c := Config{Default: o.Apply(Policy{})}
	for key, pj := range w.Conversations {
		o, err := pj.override()
		if err != nil {
			errs = append(errs, fmt.Errorf("triage config conversation %q: %w", key, err))
			continue
		}
		if c.Conversations == nil {
			c.Conversations = map[string]Override{}
		}
		c.Conversations[key] = o
	}
	return c, errors.Join(errs...)
}

func (p policyJSON) override() (Override, error) {
	o := Override{TimeZone: p.TimeZone, QuietHours: p.QuietHours, DailyCap: p.DailyCap}
	if p.QuietMode != nil {
		m := QuietMode(*p.QuietMode)
		o.QuietMode = &m
	}
	if p.Cooldown != nil {
		d, err := time.ParseDuration(*p.Cooldown)
		if err != nil {
			return Override{}, fmt.Errorf("cooldown: want a duration like 90s or 15m, got %q", *p.Cooldown)
		}
		o.Cooldown = &d
	}
	return o, nil
}

// compiled is a validated Policy, ready to apply.
type compiled struct {
	loc      *time.Location
	quiet    Window
	mode     QuietMode
	cooldown time.Duration
	cap      int
}

func compile(p Policy) (compiled, error) {
	p = p.withDefaults()
	var errs []error
	loc, err := time.LoadLocation(p.TimeZone)
	if err != nil || p.TimeZone == "Local" {
		// "Local" is the machine's zone: in Lambda, UTC by accident.
		errs = append(errs, fmt.Errorf("time zone %q is not an IANA time zone name", p.TimeZone))
	}
	w, err := ParseWindow(p.QuietHours)
	if err != nil {
		errs = append(errs, err)
	}
	if p.QuietMode != QuietSuppress && p.QuietMode != QuietDefer {
		errs = append(errs, fmt.Errorf("quiet mode must be %s or %s, got %q", QuietSuppress, QuietDefer, p.QuietMode))
	}
	if p.Cooldown < 0 {
		errs = append(errs, fmt.Errorf("cooldown must not be negative, got %s", p.Cooldown))
	}
	if p.DailyCap < 0 {
		errs = append(errs, fmt.Errorf("daily cap must not be negative, got %d", p.DailyCap))
	}
	if err := errors.Join(errs...); err != nil {
		return compiled{}, err
	}
	return compiled{loc: loc, quiet: w, mode: p.QuietMode, cooldown: p.Cooldown, cap: p.DailyCap}, nil
}
