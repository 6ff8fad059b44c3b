package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform"
	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/platform/telegram"
)

// loadReport is what a load run measured.
type loadReport struct {
	Threads, Messages, Redeliveries int
	Elapsed                         time.Duration
	P50, P99                        time.Duration
	// Problems lists every order or exactly-once violation; empty is a pass.
	Problems []string
}

// load runs a bounded load on the local stack: threads conversations, each
// sending messages one after another (with a share of them redelivered, as
// a platform retrying would), through the real functions on the emulators
// with the echo agent. It prints the throughput and the end-to-end
// latencies (webhook to the bubble's delivery), and checks that every
// conversation got each reply exactly once, in order.
func load(ctx context.Context, out io.Writer, getenv config.Getenv, args []string) error {
	fs := flags("load", out)
	threads := fs.Int("threads", 20, "conversations, each sending in order")
	messages := fs.Int("messages", 10, "messages per conversation")
	redeliver := fs.Float64("redeliver", 0.2, "share of messages posted twice, as a platform retry")
	timeout := fs.Duration("timeout", 3*time.Minute, "give up after")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *threads < 1 || *messages < 1 || *redeliver < 0 || *redeliver > 1 {
		return fmt.Errorf("load: want -threads and -messages of at least 1, -redeliver between 0 and 1")
	}
	r, err := runLoad(ctx, getenv, *threads, *messages, *redeliver, *timeout)
	if err != nil {
		return err
	}
	secs := r.Elapsed.Seconds()
	fmt.Fprintf(out, "load: %d conversations × %d messages (%d redelivered) in %s: %.1f messages/s\n",
		r.Threads, r.Messages, r.Redeliveries, r.Elapsed.Round(time.Millisecond), float64(r.Threads*r.Messages)/secs)
	fmt.Fprintf(out, "end to end (webhook → bubble delivered): p50 %s, p99 %s\n", r.P50.Round(time.Millisecond), r.P99.Round(time.Millisecond))
	if len(r.Problems) > 0 {
		for _, p := range r.Problems {
			fmt.Fprintln(out, "FAIL:", p)
		}
		return fmt.Errorf("load: %d order or exactly-once violations", len(r.Problems))
	}
	fmt.Fprintln(out, "every conversation got every reply exactly once, in order")
	return nil
}

func runLoad(ctx context.Context, getenv config.Getenv, threads, messages int, redeliver float64, timeout time.Duration) (loadReport, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Bubbles as fast as the stack goes, on a port of its own.
	env := func(k string) string {
		switch k {
		case "PARLEY_BUBBLE_DELAY":
			return cmp.Or(getenv(k), "1ms")
		case "PARLEY_LISTEN":
			return cmp.Or(getenv(k), "127.0.0.1:0")
		}
		return getenv(k)
	}
	up := make(chan started, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, io.Discard, env, func(s started) { up <- s }) }()
	var s started
	select {
	case s = <-up:
	case err := <-done:
		return loadReport{}, fmt.Errorf("load: the local stack did not start: %w", err)
	case <-ctx.Done():
		return loadReport{}, fmt.Errorf("load: the local stack did not start in time")
	}
	defer func() {
		cancel()
		<-done
	}()

	secret := cmp.Or(getenv(telegram.SettingWebhookSecret), demo[telegram.SettingWebhookSecret])
	url := "http://" + s.addr + "/telegram"
	var mu sync.Mutex
	sentAt := map[string]time.Time{}
	redelivered := 0
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, threads)
	for t := range threads {
		wg.Go(func() {
			chat := int64(5_000_000 + t)
			for m := range messages {
				text := fmt.Sprintf("/one t%d m%d", t, m)
				body := loadUpdate(int64(t*messages+m+1), chat, fmt.Sprintf("/one t%d m%d", t, m))
				mu.Lock()
				sentAt[text[len("/one "):]] = time.Now()
				mu.Unlock()
				times := 1
				if rand.Float64() < redeliver {
					times = 2
					mu.Lock()
					redelivered++
					mu.Unlock()
				}
				for range times {
					if err := postLoad(ctx, url, secret, body); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return loadReport{}, err
	}

	want := threads * messages
	for len(s.fake.Delivered()) < want {
		if ctx.Err() != nil {
			return loadReport{}, fmt.Errorf("load: %d of %d replies delivered before the timeout", len(s.fake.Delivered()), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(start)
	time.Sleep(2 * time.Second) // a late duplicate would show up now
	return report(s.fake.Delivered(), sentAt, threads, messages, redelivered, elapsed), nil
}

// report checks deliveries: per conversation, every message's reply once,
// in the order sent; and measures each one's latency from its webhook.
func report(ds []fakeplatform.Delivery, sentAt map[string]time.Time, threads, messages, redelivered int, elapsed time.Duration) loadReport {
	r := loadReport{Threads: threads, Messages: messages, Redeliveries: redelivered, Elapsed: elapsed}
	byChat := map[string][]string{}
	var lat []time.Duration
	for _, d := range ds {
		byChat[d.Chat] = append(byChat[d.Chat], d.Text)
		if at, ok := sentAt[d.Text]; ok {
			lat = append(lat, d.At.Sub(at))
		}
	}
	for t := range threads {
		chat := fmt.Sprint(5_000_000 + t)
		var want []string
		for m := range messages {
			want = append(want, fmt.Sprintf("t%d m%d", t, m))
		}
		if got := byChat[chat]; !slices.Equal(got, want) {
			r.Problems = append(r.Problems, fmt.Sprintf("conversation %s got %q, want %q", chat, got, want))
		}
	}
	if n := len(ds); n != threads*messages {
		r.Problems = append(r.Problems, fmt.Sprintf("%d replies delivered, want %d", n, threads*messages))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		r.P50, r.P99 = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	}
	return r
}

// loadUpdate is a Telegram private-chat text message update.
func loadUpdate(updateID, chat int64, text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"update_id": updateID,
		"message": map[string]any{
			"message_id": updateID, "date": time.Now().Unix(), "text": text,
			"from": map[string]any{"id": chat, "is_bot": false, "first_name": "Load"},
			"chat": map[string]any{"id": chat, "type": "private", "first_name": "Load"},
		},
	})
	return b
}

// postLoad posts a webhook as Telegram does, retrying while the stack
// answers 5xx (a claim in progress elsewhere), as Telegram would.
func postLoad(ctx context.Context, url, secret string, body []byte) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		for k, v := range fakeplatform.TelegramHeaders(secret) {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("load: post: %w", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			return nil
		case resp.StatusCode >= 500:
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		default:
			return fmt.Errorf("load: the webhook answered %s", resp.Status)
		}
	}
}
