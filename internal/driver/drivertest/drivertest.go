// Package drivertest reads driver entrypoints back, for tests and the
// benchmarks: the provider itself only writes them (driver.EncodeSpecArg).
package drivertest

import (
	"bytes"
	"compress/zlib"
	"io"
	"regexp"

	"github.com/ray-infra/terraform-provider-ray/internal/driver/base85"
)

// SpecArgChars is a regexp character class of the characters a spec
// argument (and the driver's payload) is written in: base85's.
var SpecArgChars = "[" + regexp.QuoteMeta(base85.Alphabet) + "]"

// DecodeSpecArg reverses driver.EncodeSpecArg: the request JSON of a spec
// argument.
func DecodeSpecArg(arg string) ([]byte, error) {
	packed, err := base85.Decode(arg)
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
