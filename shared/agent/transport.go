package agent

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// handlerTransport is an http.RoundTripper that serves requests with a
// handler in process, so the built-in echo agent goes through the same
// signing, verification and reply classification as a remote one, without a
// network.
type handlerTransport struct {
	h http.Handler
}

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		// RoundTrip owns the request body and must close it.
		defer req.Body.Close()
	}
	rec := &recorder{header: http.Header{}}
	t.h.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	return &http.Response{
		Status:        strconv.Itoa(rec.status) + " " + http.StatusText(rec.status),
		StatusCode:    rec.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.sent,
		Body:          io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		ContentLength: int64(rec.body.Len()),
		Request:       req,
	}, nil
}

// recorder is a minimal http.ResponseWriter. Like a server, it freezes the
// headers at WriteHeader.
type recorder struct {
	header http.Header
	sent   http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status != 0 {
		return
	}
	r.status = status
	r.sent = r.header.Clone()
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	return r.body.Write(p)
}
