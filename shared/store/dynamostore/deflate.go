package dynamostore

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// A DEFLATE writer holds about 800 KB of state and a reader about 40 KB:
// built for each intent they cost more than the rest of its encoding, so
// they are kept for reuse.
var (
	writers = sync.Pool{New: func() any {
		w, _ := flate.NewWriter(nil, flate.BestCompression)
		return w
	}}
	readers = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}
)

// deflateJSON is v as JSON, DEFLATE-compressed: DynamoDB bills a write by
// the item's size, and chat text compresses to about two thirds of its
// size, more the longer it is.
func deflateJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var z bytes.Buffer
	w := writers.Get().(*flate.Writer)
	defer writers.Put(w)
	w.Reset(&z)
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return z.Bytes(), nil
}

// inflateJSON decodes deflateJSON's z into v, refusing more than limit
// bytes of JSON.
func inflateJSON(z []byte, limit int64, v any) error {
	r := readers.Get().(io.ReadCloser)
	defer readers.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(z), nil); err != nil {
		return err
	}
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return err
	}
	if int64(len(raw)) > limit {
		return fmt.Errorf("over %d bytes uncompressed", limit)
	}
	return json.Unmarshal(raw, v)
}
