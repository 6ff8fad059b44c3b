package turn

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/shared/agent"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/preview"
	"github.com/parleyhq/parley/shared/store"
)

// Previewer shows a streamed reply while the agent writes it
// (platform.Previewer).
type Previewer interface {
	Preview(ctx context.Context, p message.Preview, text string) (message.Preview, error)
	ClearPreview(ctx context.Context, p message.Preview) error
	PreviewInterval(t message.Thread) time.Duration
}

// StatusPreviewer shows a stream's status line natively in some threads
// (platform.StatusPreviewer).
type StatusPreviewer interface {
	NativeStatus(t message.Thread) bool
	PreviewStatus(ctx context.Context, t message.Thread, status string) error
}

// Streamer is an Agent that hands a streamed reply's deltas and status
// lines over as they arrive (agent.Client).
type Streamer interface {
	Stream(ctx context.Context, req agent.TurnRequest, preview agent.PreviewFunc) (agent.Reply, error)
}

// liveKey carries a turn's live state in its context, from the claim to the
// commit, whichever way the turn goes.
type liveKey struct{}

// live is what one attempt of a turn knows of its preview.
type live struct {
	// retry: an earlier attempt of the turn ran, and may have left a
	// preview behind; it is read from the store before one is shown or
	// settled. A first attempt has none but its own.
	retry bool

	mu     sync.Mutex
	loaded bool
	shown  message.Preview // the recorded preview; MessageID "" when none
	broken bool            // a preview could not be recorded: none is shown again
}

func withLive(ctx context.Context, retry bool) context.Context {
	return context.WithValue(ctx, liveKey{}, &live{retry: retry})
}

func liveOf(ctx context.Context) *live {
	lv, _ := ctx.Value(liveKey{}).(*live)
	return lv
}

// current is the turn's recorded preview, read once from the store when an
// earlier attempt may have left one (a retried turn takes it over). The
// zero Preview when there is none.
func (lv *live) current(ctx context.Context, p *Processor, key string) (message.Preview, error) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if !lv.loaded && lv.retry {
		pv, err := p.Previews.GetPreview(ctx, key, p.now())
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return message.Preview{}, err
		default:
			lv.shown = pv
		}
	}
	lv.loaded = true
	return lv.shown, nil
}

func (lv *live) set(pv message.Preview) {
	lv.mu.Lock()
	lv.shown = pv
	lv.mu.Unlock()
}

// previewBase is where the turn of ev shows its preview: its thread, and in
// a group the person's message it quotes, as the reply's first bubble would.
func previewBase(ev message.Event, turnID string) message.Preview {
	base := message.Preview{Thread: ev.Thread, Key: turnID, ReplyContext: ev.ReplyContext, Recipient: ev.Sender.ID}
	if ev.ChatType == message.ChatGroup && ev.Kind != message.KindAnswer {
		base.ReplyTo = cmp.Or(ev.QuoteToken, ev.MessageID)
	}
	return base
}

// previews reports whether the turn can show previews on ch.
func (p *Processor) previews(ctx context.Context, ch Channel) (*live, bool) {
	lv := liveOf(ctx)
	return lv, lv != nil && ch.Previewer != nil && p.Previews != nil
}

// call asks the agent for the turn's reply: streamed, where the agent and
// the channel can, with its deltas shown as a preview meanwhile.
func (p *Processor) call(ctx context.Context, log *slog.Logger, cfg Config, ch Channel, ev message.Event, req agent.TurnRequest) (agent.Reply, error) {
	st, ok := p.Agent.(Streamer)
	lv, on := p.previews(ctx, ch)
	if !ok || !on {
		return p.Agent.Call(ctx, req)
	}
	base := previewBase(ev, req.TurnID)
	show := func(sctx context.Context, text string) error {
		cur, err := lv.current(sctx, p, base.Key)
		if err != nil {
			// Whether an earlier attempt left a preview is unknown: a
			// second one could be left beside the reply.
			return err
		}
		lv.mu.Lock()
		broken := lv.broken
		lv.mu.Unlock()
		if broken {
			return nil
		}
		next, err := preview.Show(sctx, ch.Previewer, p.Previews, base, cur, text, p.now(), cfg.IntentTTL)
		var unrec *preview.UnrecordedError
		if errors.As(err, &unrec) {
			lv.mu.Lock()
			lv.broken = true
			lv.mu.Unlock()
			if !unrec.Cleared {
				log.Error("a preview message could not be recorded nor cleared", "message_id", unrec.MessageID, "error", err)
			}
			return err
		}
		if next.MessageID != "" && next.MessageID != cur.MessageID {
			log.Info("preview shown", "message_id", next.MessageID)
		}
		lv.set(next)
		return err
	}
	var status preview.ShowFunc
	var statusShown atomic.Bool
	sp, native := ch.Previewer.(StatusPreviewer)
	if native && sp.NativeStatus(ev.Thread) {
		status = func(sctx context.Context, s string) error {
			statusShown.Store(true)
			return sp.PreviewStatus(sctx, ev.Thread, s)
		}
		defer func() {
			// The status ends with the call, whatever its outcome (a
			// reply, a failure, a stream broken off, the attempt cut off).
			if !statusShown.Load() {
				return
			}
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.TypingTimeout)
			defer cancel()
			if err := sp.PreviewStatus(sctx, ev.Thread, ""); err != nil {
				log.Warn("the thread's status could not be cleared", "error", err)
			}
		}()
	}
	pump := preview.StartWithStatus(ctx, cfg.Preview, ch.Previewer.PreviewInterval(ev.Thread), show, status, func(err error) {
		log.Debug("preview update failed", "error", err)
	})
	reply, err := st.Stream(ctx, req, pump.Add)
	pump.Stop()
	if n := pump.Updates(); n > 0 {
		log.Info("reply previewed", "updates", n)
	}
	return reply, err
}

// endPreview settles the turn's preview as its units are committed: the
// reply's first message, when it is text, finalizes it in place (its send
// is an edit of the preview's message), or, with no text bubble first to
// become it (a silent reply, a failure, a question or a file first), the
// preview is cleared now. A preview that cannot be cleared keeps its
// record, which the sweeper finds.
func (p *Processor) endPreview(ctx context.Context, log *slog.Logger, ch Channel, intentID string, units []intent.Unit) []intent.Unit {
	lv, on := p.previews(ctx, ch)
	if !on {
		return units
	}
	pv, err := lv.current(ctx, p, intentID)
	if err != nil {
		log.Warn("the turn's preview could not be read; a preview left by an earlier attempt may stay", "error", err)
		return units
	}
	if pv.MessageID == "" {
		return units
	}
	if pv.FinalizedBy != "" && pv.FinalizedBy != intentID {
		// A sequential post's first bubble finalized it: the message is
		// that bubble now, and the post's to keep (the sweeper drops its
		// record once the post's unit is sent).
		return units
	}
	if preview.FinalizeInto(units, intentID) {
		return units
	}
	cctx := context.WithoutCancel(ctx)
	if err := ch.Previewer.ClearPreview(cctx, pv); err != nil {
		log.Warn("the turn's preview could not be cleared; its record stays", "message_id", pv.MessageID, "error", err)
		return units
	}
	if err := p.Previews.DropPreview(cctx, intentID); err != nil {
		log.Warn("a cleared preview's record could not be dropped", "error", err)
	}
	lv.set(message.Preview{})
	log.Info("preview cleared", "message_id", pv.MessageID)
	return units
}
