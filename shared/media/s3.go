package media

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// S3Objects is Objects on an S3 bucket, through the SDK's client and its
// presigner.
type S3Objects struct {
	client  *s3.Client
	presign *s3.PresignClient
	bucket  string
}

// NewS3Objects is S3Objects on bucket. pathStyle addresses the bucket in the
// path rather than the host name (PARLEY_MEDIA_PATH_STYLE), for an
// S3-compatible endpoint that serves no per-bucket host names.
func NewS3Objects(cfg aws.Config, bucket string, pathStyle bool) *S3Objects {
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = pathStyle })
	return &S3Objects{client: c, presign: s3.NewPresignClient(c), bucket: bucket}
}

// metaSHA256 is the user metadata that keeps an object's digest.
const metaSHA256 = "sha256"

func (o *S3Objects) Head(ctx context.Context, key string) (Object, bool, error) {
	out, err := o.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &o.bucket, Key: &key})
	var nf *types.NotFound
	if errors.As(err, &nf) {
		return Object{}, false, nil
	}
	if err != nil {
		return Object{}, false, err
	}
	return Object{MIME: aws.ToString(out.ContentType), Size: aws.ToInt64(out.ContentLength), SHA256: out.Metadata[metaSHA256]}, true, nil
}

func (o *S3Objects) Put(ctx context.Context, key string, body []byte, obj Object) error {
	_, err := o.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &o.bucket, Key: &key, Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
		ContentType: aws.String(obj.MIME), Metadata: map[string]string{metaSHA256: obj.SHA256},
	})
	return err
}

func (o *S3Objects) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	req, err := o.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &o.bucket, Key: &key}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", err
	}
	return req.URL, nil
}

// Get reads the object at key, at most max bytes (more is an error).
func (o *S3Objects) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	out, err := o.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &o.bucket, Key: &key})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(io.LimitReader(out.Body, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, errors.New("object over the size bound")
	}
	return b, nil
}

// PresignPut signs a PUT of key with its content type; the agent's
// upload must send that Content-Type header.
func (o *S3Objects) PresignPut(ctx context.Context, key, mime string, size int64, ttl time.Duration) (string, error) {
	req, err := o.presign.PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket: &o.bucket, Key: &key, ContentType: aws.String(mime), ContentLength: aws.Int64(size),
	}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", err
	}
	return req.URL, nil
}
