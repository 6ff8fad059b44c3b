package sim

import (
	"context"
	"time"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// RecordPreview writes a turn's preview record (dynamostore: one PutItem).
func (m *MemStore) RecordPreview(_ context.Context, p message.Preview, now time.Time, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	pv := p
	m.items[store.PreviewKey(p.Key)] = &item{kind: "preview", pv: &pv, expires: now.Add(ttl).Truncate(time.Second)}
	return nil
}

// GetPreview reads a turn's preview record; an expired one is absent.
func (m *MemStore) GetPreview(_ context.Context, key string, now time.Time) (message.Preview, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[store.PreviewKey(key)]
	if !ok || it.kind != "preview" || it.pv == nil || it.expires.Unix() < now.Unix() {
		return message.Preview{}, store.ErrNotFound
	}
	return *it.pv, nil
}

// DropPreview deletes a turn's preview record.
func (m *MemStore) DropPreview(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.items, store.PreviewKey(key))
	return nil
}
