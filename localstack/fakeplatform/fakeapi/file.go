package fakeapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Recorded arguments of a delivered file, in its Delivery's Args: the
// uploaded bytes' SHA-256, size, name and type, as the fake received them.
const (
	ArgSHA256   = "_sha256"
	ArgSize     = "_size"
	ArgFileName = "_filename"
	ArgFileType = "_filetype"
)

// RecordFile adds an uploaded file's Arg… entries to args.
func RecordFile(args map[string]json.RawMessage, body []byte, name, typ string) {
	sum := sha256.Sum256(body)
	set := func(k string, v any) { args[k], _ = json.Marshal(v) }
	set(ArgSHA256, hex.EncodeToString(sum[:]))
	set(ArgSize, len(body))
	set(ArgFileName, name)
	set(ArgFileType, typ)
}
