package store

import (
	"fmt"
	"time"

	"github.com/parleyhq/parley/shared/message"
)

// AwaitState is an async turn's state; its value is what the store persists.
//
//	open ──the agent's final post (before the deadline)──► final
//	  └──── the deadline passes ─────────────────────────► expired
//
// Both changes are conditional on the record being open, so exactly one
// wins: a post that arrives as the turn gives up is either delivered or
// refused, never both.
type AwaitState string

const (
	// AwaitOpen: the agent answered 202 and the turn waits for its post.
	AwaitOpen AwaitState = "open"
	// AwaitFinal: the post arrived; the turn plans it. Terminal.
	AwaitFinal AwaitState = "final"
	// AwaitExpired: the deadline passed first. Terminal.
	AwaitExpired AwaitState = "expired"
)

// Await is the record of a turn whose agent answered 202 and will post its
// reply later (POST /reply). Nothing waits in memory: the turn's inbound
// message stays on its queue, invisible, and the thread's later turns wait
// behind it until the record is final or expired.
type Await struct {
	// TurnID is the turn's id (its intent id), which the agent posts back.
	TurnID string
	// Thread is the turn's thread; EventKey its event's key.
	Thread   message.Thread
	EventKey string
	// ClaimKey and ClaimOwner are the turn claim the waiting turn holds,
	// so whichever invocation sees the outcome can settle it.
	ClaimKey, ClaimOwner string
	// Deadline is when the turn stops waiting (PARLEY_ASYNC_TIMEOUT).
	Deadline time.Time
	State    AwaitState
	// Handle is the receipt handle of the turn's inbound message as last
	// received, so a post can make it visible at once instead of at the
	// next poll.
	Handle string
	// Post is the final post: its webhook-id (a retried post is the same
	// post), and its reply as the agent would have answered it in the turn.
	Post AwaitPost
	// Posts are the turn's sequential posts ("final": false) so far, by
	// webhook-id, each with the bubbles it was allowed; Bubbles is their
	// sum, which the turn's bubble cap bounds.
	Posts   map[string]int
	Bubbles int
	// CreatedAt and ExpiresAt: when the wait began, and when the store may
	// forget it.
	CreatedAt, ExpiresAt time.Time
	// Preview is where the agent's previews (POST /reply/preview) show:
	// the turn's thread, key and the person's message, as the turn would
	// preview a streamed reply. Zero when the turn's platform shows none.
	Preview message.Preview
	// PreviewUpdates counts the preview updates taken (TakeAwaitPreview);
	// none starts before PreviewNext.
	PreviewUpdates int
	PreviewNext    time.Time
	// PreviewLease names the preview work in flight (an update's, or its
	// settler's: SettleAwaitPreview), over by PreviewBusy at the latest:
	// no update starts while another's lease holds, and a settler waits
	// for it, so that no update lands after the reply that settles it.
	PreviewLease string
	PreviewBusy  time.Time
	// PreviewSettled names who settled the preview (SettleAwaitPreview:
	// the turn's final, or the first sequential post); no update is taken
	// after it.
	PreviewSettled string
	// PreviewStatus is whether an update showed a status line of its own
	// (Slack's assistant thread status), which the settler clears.
	PreviewStatus bool
}

// PreviewTake is one preview update asked of an open await record: taken
// at Now when the record is open, its deadline after Now, PreviewNext not
// after Now and fewer than Max updates taken.
//
// The update holds the record's preview lease (Lease, until Busy) while
// it runs: no other update is taken meanwhile, whatever the interval, and
// the preview's record is written under it (RecordAwaitPreview). It is
// refused once the preview was settled.
type PreviewTake struct {
	Now time.Time
	// Next is when the update after it may start (Now + the interval); Busy
	// when this one is over at the latest.
	Next, Busy time.Time
	Max        int
	// Lease names this update (a token of its own).
	Lease string
	// Status records that the update shows a status line of its own.
	Status bool
}

// Settlers of a turn's preview (SettleAwaitPreview): the turn, for its
// final reply or its end, and a sequential post (SettledByPost).
const SettledByTurn = "turn"

// SettledByPost is the settler name of the sequential post postID.
func SettledByPost(postID string) string { return "post:" + postID }

// AwaitPost is an agent's post of a turn's reply.
type AwaitPost struct {
	// ID is the post's webhook-id.
	ID string
	// ContentType and Body are the reply: an openab.turn.v1 envelope
	// (application/json) or text (text/plain).
	ContentType string
	Body        []byte
	At          time.Time
	// Replaces is the unit key of the earlier bubble the post's bubble
	// replaces, when it names one.
	Replaces string
}

// AwaitKey is the key of a turn's await record.
func AwaitKey(turnID string) string { return "await#" + turnID }

// AwaitConflictError is returned when an await record is no longer open (or
// its deadline passed). Current is the record as it is. It wraps ErrConflict.
type AwaitConflictError struct{ Current Await }

func (e *AwaitConflictError) Error() string {
	return fmt.Sprintf("store: await %s is %s", e.Current.TurnID, e.Current.State)
}

func (e *AwaitConflictError) Unwrap() error { return ErrConflict }
