package sim

import (
	"context"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// memPreview is a preview record and when it expires.
type memPreview struct {
	p       message.Preview
	expires time.Time
}

// RecordPreview writes a turn's preview record (store.Previews), replacing
// one of the same key.
func (m *MemStore) RecordPreview(_ context.Context, p message.Preview, now time.Time, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.previews == nil {
		m.previews = map[string]memPreview{}
	}
	m.previews[p.Key] = memPreview{p: p, expires: now.Add(ttl)}
	return nil
}

// GetPreview reads a turn's preview record; an expired one is absent, as
// the DynamoDB store checks expiry itself.
func (m *MemStore) GetPreview(_ context.Context, key string, now time.Time) (message.Preview, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.previews[key]
	if !ok || r.expires.Before(now) {
		return message.Preview{}, store.ErrNotFound
	}
	return r.p, nil
}

// DropPreview deletes a turn's preview record; an absent one is no error.
func (m *MemStore) DropPreview(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.previews, key)
	return nil
}
