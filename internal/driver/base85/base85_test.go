package base85

import (
	"bytes"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// Encode and Decode round-trip every length of a chunk's padding, and no
// encoding holds a character the entrypoint's quoting would read.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // test data
	for n := range 64 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		enc := Encode(b)
		if strings.ContainsAny(enc, `'"\`) {
			t.Fatalf("%d bytes: %q holds a quote or backslash", n, enc)
		}
		got, err := Decode(enc)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%d bytes: %x -> %q -> %x, %v", n, b, enc, got, err)
		}
	}
	if _, err := Decode("ab'cd"); err == nil {
		t.Error("a quote decoded")
	}
}

// The driver decodes with Python's base64.b85decode: the encodings of
// every length of padding agree.
func TestMatchesPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	input := []byte("terraform-provider-ray \x00\x01\xfe\xff driver request")
	cmd := exec.Command(python, "-c", "import base64,sys;b=sys.stdin.buffer.read();"+
		"sys.stdout.write(chr(10).join(base64.b85encode(b[:len(b)-n]).decode() for n in range(8)))")
	cmd.Stdin = bytes.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range strings.Split(string(out), "\n") {
		if got := Encode(input[:len(input)-n]); got != want {
			t.Errorf("%d bytes: Go %q, Python %q", len(input)-n, got, want)
		}
	}
}
