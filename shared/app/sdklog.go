package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/smithy-go/logging"
)

// sdkLogger writes the SDK's own log lines (a retry quota it ran out of, a
// response body it could not close) as JSON lines of the function's log,
// with source "aws-sdk", instead of plain text on stderr.
type sdkLogger struct{ log *slog.Logger }

func (l sdkLogger) Logf(c logging.Classification, format string, v ...any) {
	level := slog.LevelDebug
	if c == logging.Warn {
		level = slog.LevelWarn
	}
	l.log.Log(context.Background(), level, fmt.Sprintf(format, v...), "source", "aws-sdk")
}
