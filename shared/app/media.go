package app

import (
	"fmt"

	"github.com/parleyhq/parley/shared/media"
	"github.com/parleyhq/parley/shared/urlfetch"
)

// uploads is the media bucket as agents' uploads use it; nil where media
// is off.
func (d Deps) uploads() media.UploadObjects {
	u, _ := d.Objects.(media.UploadObjects)
	return u
}

// outboundFiles finds media units' files for delivery: uploads in the
// bucket, agents' URLs fetched under urlfetch's rules, bounded by
// PARLEY_MEDIA_MAX_BYTES.
func (d Deps) outboundFiles() (*media.Outbound, error) {
	o := d.Fetch
	if o.MaxBytes <= 0 {
		o.MaxBytes = d.Config.Media.WithDefaults().MaxBytes
	}
	f, err := urlfetch.New(o)
	if err != nil {
		return nil, fmt.Errorf("media fetcher: %w", err)
	}
	return &media.Outbound{Objects: d.uploads(), Config: d.Config.Media, Fetcher: f}, nil
}
