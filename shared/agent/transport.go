package agent

import (
	"io"
	"net/http"
	"strconv"
	"sync"
)

// handlerTransport is an http.RoundTripper that serves requests with a
// handler in process, so the built-in echo agent goes through the same
// signing, verification and reply classification as a remote one, without a
// network. The body streams: the response is returned at the handler's
// first write (or its return), and the rest is read as it is written, so a
// streamed reply previews in process as it would over a network.
type handlerTransport struct {
	h http.Handler
}

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	rec := &recorder{header: http.Header{}, w: pw, ready: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		// A reader waiting for the next write stops when the request
		// ends, as a network connection's would.
		select {
		case <-req.Context().Done():
			_ = pr.CloseWithError(req.Context().Err())
		case <-done:
		}
	}()
	go func() {
		defer close(done)
		if req.Body != nil {
			// RoundTrip owns the request body and must close it.
			defer req.Body.Close()
		}
		defer func() {
			rec.WriteHeader(http.StatusOK)
			_ = pw.Close()
		}()
		t.h.ServeHTTP(rec, req)
	}()
	select {
	case <-rec.ready:
	case <-req.Context().Done():
		_ = pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	return &http.Response{
		Status:        strconv.Itoa(rec.status) + " " + http.StatusText(rec.status),
		StatusCode:    rec.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.sent,
		Body:          pr,
		ContentLength: -1,
		Request:       req,
	}, nil
}

// recorder is a minimal streaming http.ResponseWriter. Like a server, it
// freezes the headers at WriteHeader.
type recorder struct {
	header http.Header
	w      *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
	sent   http.Header
	status int
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	r.once.Do(func() {
		r.status = status
		r.sent = r.header.Clone()
		close(r.ready)
	})
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.w.Write(p)
}

// Flush does nothing: every Write reaches the reader as it is made.
func (r *recorder) Flush() {}
