package operator

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/shared/agentapi"
)

// Erased is what an erase of a conversation's history did.
type Erased struct {
	Thread string `json:"thread"`
	Erased bool   `json:"erased"`
}

// historyEraser is a store that keeps conversations' histories
// (PARLEY_HISTORY): the same erase the agent's POST /history/erase makes.
type historyEraser interface {
	EraseHistory(ctx context.Context, threadKey string) error
}

// EraseHistory forgets a conversation's history, and the turns it was still
// recording: thread is its thread key (platform:account:chat[:thread]).
// Erasing one with nothing kept is not an error; a malformed key is
// ErrAmbiguous, and nothing changes.
func (o *Operator) EraseHistory(ctx context.Context, thread string) (Erased, error) {
	body := fmt.Appendf(nil, `{"thread_key":%q}`, thread)
	if _, err := agentapi.ParseErase(body); err != nil {
		return Erased{}, fmt.Errorf("%w: %v", ErrAmbiguous, err)
	}
	er, ok := o.Store.(historyEraser)
	if !ok {
		return Erased{}, fmt.Errorf("this store keeps no history")
	}
	if err := er.EraseHistory(ctx, thread); err != nil {
		return Erased{}, err
	}
	return Erased{Thread: thread, Erased: true}, nil
}
