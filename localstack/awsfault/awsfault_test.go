package awsfault_test

import (
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/awsfault"
	"github.com/parleyhq/parley/localstack/callcount"
	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/media"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// TestS3CallsAreCutAndCountedPresignsAreNot: an S3 client built from an
// attached configuration has its calls failed and counted like DynamoDB's
// and SQS's, while its presigner (a stack with no retry step, which sends
// nothing) still signs URLs, untouched and uncounted. On fauxqs's S3.
func TestS3CallsAreCutAndCountedPresignsAreNot(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	faults := awsfault.New()
	cfg, calls := callcount.Attach(faults.Attach(env.AWS))
	objs := media.NewS3Objects(cfg, env.Resources.MediaBucket, true)
	ctx := t.Context()
	const key = "in/awsfault-test/0"

	if _, err := objs.PresignGet(ctx, key, time.Minute); err != nil {
		t.Fatalf("presign through the injector and the counter: %v", err)
	}
	if n := calls.Total(nil); n != 0 {
		t.Fatalf("a presign counted as %d calls: %v", n, calls)
	}

	fired := faults.Add(awsfault.Fault{Op: "S3.PutObject"})
	err := objs.Put(ctx, key, []byte("bytes"), media.Object{MIME: "text/plain", Size: 5})
	if !errors.Is(err, awsfault.ErrInjected) || fired() != 1 {
		t.Fatalf("Put with a fault before it = %v (fired %d), want the injected failure", err, fired())
	}
	if _, found, err := objs.Head(ctx, key); err != nil || found {
		t.Fatalf("after a put cut before it was sent: found %v, %v; want nothing stored", found, err)
	}
	if err := objs.Put(ctx, key, []byte("bytes"), media.Object{MIME: "text/plain", Size: 5}); err != nil {
		t.Fatal(err)
	}
	if got := calls.Snapshot(); got["S3.PutObject"] != 1 || got["S3.HeadObject"] != 1 {
		t.Fatalf("counted %v; want the put that was sent (not the one cut before it) and the head", got)
	}
}
