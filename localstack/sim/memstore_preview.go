package sim

import (
	"context"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// RecordPreview keeps p under its key until now+ttl (seconds, as
// DynamoDB's TTL attribute), replacing any record before it.
func (s *MemStore) RecordPreview(ctx context.Context, p message.Preview, now time.Time, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.previews == nil {
		s.previews = map[string]previewItem{}
	}
	s.previews[store.PreviewKey(p.Key)] = previewItem{p: p, expires: sec(now.Add(ttl))}
	return nil
}

// GetPreview reads the preview under key: ErrNotFound when there is none
// or it expired.
func (s *MemStore) GetPreview(ctx context.Context, key string, now time.Time) (message.Preview, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.previews[store.PreviewKey(key)]
	if !ok || !now.Before(it.expires) {
		return message.Preview{}, store.ErrNotFound
	}
	return it.p, nil
}

// DropPreview forgets the preview under key; dropping one that is gone
// succeeds.
func (s *MemStore) DropPreview(ctx context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.previews, store.PreviewKey(key))
	return nil
}

type previewItem struct {
	p       message.Preview
	expires time.Time
}
