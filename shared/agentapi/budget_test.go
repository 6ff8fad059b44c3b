package agentapi

import (
	"testing"
	"time"

	"github.com/parleyhq/parley/shared/resources"
)

// TestPostSettlesWithinTheReplyFunction: a sequential post's settle, each
// step at its bound (the wait for an update in flight, the status call, the
// clear), leaves the reply function a second of its timeout for its reads
// and writes and its answer: past the timeout Lambda cuts the post off
// before its 503 or its 200.
func TestPostSettlesWithinTheReplyFunction(t *testing.T) {
	t.Parallel()
	if worst := postSettleWait + statusCall + maxPreviewCall + time.Second; worst > resources.Reply.Timeout {
		t.Fatalf("a post's settle may take %v; the reply function has %v", worst, resources.Reply.Timeout)
	}
}
