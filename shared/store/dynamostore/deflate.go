package dynamostore

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"io"
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
	w, _ := flate.NewWriter(&z, flate.BestCompression)
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
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(z)), limit+1))
	if err != nil {
		return err
	}
	if int64(len(raw)) > limit {
		return fmt.Errorf("over %d bytes uncompressed", limit)
	}
	return json.Unmarshal(raw, v)
}
