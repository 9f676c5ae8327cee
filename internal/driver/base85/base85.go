// Package base85 is the base85 of Python's base64.b85encode and b85decode
// (RFC 1924's alphabet), which the driver's entrypoint carries its payloads
// in: a sixteenth smaller than base64, and, like it, free of the quotes and
// backslash the entrypoint's shell and Python string literals would read.
package base85

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Alphabet is RFC 1924's, in Python's order.
const Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// Encode is Python's base64.b85encode(b) (pad=False): each 4 bytes,
// big-endian, as 5 digits, most significant first; a short last chunk is
// padded with zero bytes and as many digits dropped.
func Encode(b []byte) string {
	padding := (4 - len(b)%4) % 4
	buf := make([]byte, len(b)+padding)
	copy(buf, b)
	var out strings.Builder
	out.Grow(len(buf) / 4 * 5)
	for i := 0; i < len(buf); i += 4 {
		v := binary.BigEndian.Uint32(buf[i:])
		var chunk [5]byte
		for j := 4; j >= 0; j-- {
			chunk[j] = Alphabet[v%85]
			v /= 85
		}
		out.Write(chunk[:])
	}
	return out.String()[:out.Len()-padding]
}

// Decode reverses Encode (Python's base64.b85decode): a short last chunk
// is padded with the highest digit and as many bytes dropped.
func Decode(s string) ([]byte, error) {
	padding := (5 - len(s)%5) % 5
	s += strings.Repeat(Alphabet[84:], padding)
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := 0; j < 5; j++ {
			d := strings.IndexByte(Alphabet, s[i+j])
			if d < 0 {
				return nil, fmt.Errorf("base85: invalid character %q at %d", s[i+j], i+j)
			}
			v = v*85 + uint64(d)
		}
		if v > 1<<32-1 {
			return nil, fmt.Errorf("base85: chunk at %d overflows", i)
		}
		out = binary.BigEndian.AppendUint32(out, uint32(v))
	}
	return out[:len(out)-padding], nil
}
