package runner

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/parleyhq/parley/shared/app"
	"github.com/parleyhq/parley/shared/functionurl"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/sweeper"
)

// FunctionURL serves a Function URL Lambda handler over HTTP: each request
// becomes the event Lambda would deliver.
func FunctionURL(h func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error), maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, err := functionurl.ToEvent(r, maxBody)
		if err != nil {
			// Function URLs refuse payloads over their limit before Lambda.
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		resp, err := h(r.Context(), ev)
		if err != nil {
			http.Error(w, "Internal Server Error", http.StatusBadGateway)
			return
		}
		_ = functionurl.WriteResponse(w, resp)
	})
}

// Local is every Parley function, hosted in one process.
type Local struct {
	// Mux serves the ingress functions at /<function name>: one per chat
	// platform of the registry, and /events.
	Mux     *http.ServeMux
	Pollers []*Poller
	// Sweeper runs every SweepEvery (EventBridge runs it every minute in
	// AWS; locally every few seconds, so deferred events and stuck work
	// show up quickly).
	Sweeper    *sweeper.Processor
	SweepEvery time.Duration
}

// DefaultSweepEvery is the local sweeper's period.
const DefaultSweepEvery = 3 * time.Second

// New builds every function from d, as their main packages do.
func New(d app.Deps) (*Local, error) {
	l := &Local{Mux: http.NewServeMux()}
	// Function URLs cap payloads at 6 MB; the functions apply their own limit.
	const urlLimit = 6 << 20
	for _, a := range registry.Chat() {
		h, err := app.Ingress(d, a)
		if err != nil {
			return nil, err
		}
		l.Mux.Handle("/"+string(a.Platform()), FunctionURL(functionurl.Handler(h), urlLimit))
	}
	events, err := app.EventsIngress(d)
	if err != nil {
		return nil, err
	}
	l.Mux.Handle("/"+resources.Events.Name, FunctionURL(functionurl.Handler(events), urlLimit))
	reply, err := app.Reply(d)
	if err != nil {
		return nil, err
	}
	// One function serves both paths, as its Function URL does.
	replyURL := FunctionURL(functionurl.Handler(reply), urlLimit)
	l.Mux.Handle("/reply", replyURL)
	l.Mux.Handle("/reply/preview", replyURL)
	l.Mux.Handle("/send", replyURL)
	l.Mux.Handle("/media", replyURL)
	l.Mux.Handle("/history/erase", replyURL)

	turn, err := app.Turn(d)
	if err != nil {
		return nil, err
	}
	deliver, err := app.Delivery(d)
	if err != nil {
		return nil, err
	}
	if l.Sweeper, err = app.Sweeper(d); err != nil {
		return nil, err
	}
	l.SweepEvery = DefaultSweepEvery
	// Each invocation gets the deadline its function has in AWS: sized
	// from the same settings.
	timing := d.Config.Timing()
	l.Pollers = []*Poller{
		{SQS: d.SQS, QueueURL: d.Config.InboundQueueURL, Handler: turn.HandleSQS, Timeout: timing.TurnTimeout(),
			BatchSize: resources.Turn.BatchSize, Concurrency: 4, Log: d.Log.With("poller", resources.Turn.Name)},
		{SQS: d.SQS, QueueURL: d.Config.OutboundQueueURL, Handler: deliver.HandleSQS, Timeout: timing.DeliveryTimeout(),
			BatchSize: resources.Delivery.BatchSize, Concurrency: 4, Log: d.Log.With("poller", resources.Delivery.Name)},
	}
	return l, nil
}

// Run runs the pollers and the sweeper until ctx ends.
func (l *Local) Run(ctx context.Context, log *slog.Logger) {
	var wg sync.WaitGroup
	for _, p := range l.Pollers {
		wg.Go(func() {
			if err := p.Run(ctx); err != nil {
				log.Error("poller stopped", "error", err)
			}
		})
	}
	if l.Sweeper != nil {
		wg.Go(func() {
			t := time.NewTicker(cmp.Or(l.SweepEvery, DefaultSweepEvery))
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					// Each run has the scheduled function's deadline.
					rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resources.Sweeper.Timeout)
					if _, err := l.Sweeper.Run(rctx); err != nil {
						log.Warn("sweep failed", "error", err)
					}
					cancel()
				}
			}
		})
	}
	wg.Wait()
}
