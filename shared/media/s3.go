package media

import (
	"bytes"
	"context"
	"errors"
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
