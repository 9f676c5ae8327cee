// Package drivertest reads driver entrypoints back, for tests and the
// benchmarks: the provider itself only writes them (driver.EncodeSpecArg).
package drivertest

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"io"
)

// DecodeSpecArg reverses driver.EncodeSpecArg: the request JSON of a spec
// argument.
func DecodeSpecArg(arg string) ([]byte, error) {
	packed, err := base64.StdEncoding.DecodeString(arg)
	if err != nil {
		return nil, err
	}
	r, err := zlib.NewReader(bytes.NewReader(packed))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
