package main

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"
)

// The zip's bytes depend on the files' contents, their executable bit and the given time only:
// not on the order of the names, the files' own times or the umask's group/other bits.
func TestPackIsReproducible(t *testing.T) {
	stamp := time.Unix(1796471595, 0)
	a := fstest.MapFS{
		"terraform-provider-ray_v1": {Data: []byte("binary"), Mode: 0o755, ModTime: time.Unix(1, 0)},
		"README.md":                 {Data: []byte("readme"), Mode: 0o644, ModTime: time.Unix(2, 0)},
		"LICENSE":                   {Data: []byte("license"), Mode: 0o600, ModTime: time.Unix(3, 0)},
	}
	b := fstest.MapFS{
		"terraform-provider-ray_v1": {Data: []byte("binary"), Mode: 0o775, ModTime: time.Now()},
		"README.md":                 {Data: []byte("readme"), Mode: 0o664, ModTime: time.Now()},
		"LICENSE":                   {Data: []byte("license"), Mode: 0o666, ModTime: time.Now()},
	}
	var za, zb bytes.Buffer
	if err := pack(&za, a, []string{"terraform-provider-ray_v1", "README.md", "LICENSE"}, stamp); err != nil {
		t.Fatal(err)
	}
	if err := pack(&zb, b, []string{"LICENSE", "README.md", "terraform-provider-ray_v1"}, stamp.In(time.FixedZone("X", 3600))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(za.Bytes(), zb.Bytes()) {
		t.Fatal("the same files packed twice gave different zips")
	}
	r, err := zip.NewReader(bytes.NewReader(za.Bytes()), int64(za.Len()))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name string
		mode fs.FileMode
	}{{"LICENSE", 0o644}, {"README.md", 0o644}, {"terraform-provider-ray_v1", 0o755}}
	if len(r.File) != len(want) {
		t.Fatalf("%d entries, want %d", len(r.File), len(want))
	}
	for i, f := range r.File {
		if f.Name != want[i].name || f.Mode() != want[i].mode || !f.Modified.Equal(stamp) || f.Method != zip.Deflate {
			t.Errorf("entry %d: %s %v %v method %d, want %s %v %v deflate", i, f.Name, f.Mode(), f.Modified, f.Method, want[i].name, want[i].mode, stamp)
		}
	}
}

// A time before 1980 (no commit time) becomes the zip format's earliest; names with a directory,
// directories and a name given twice are refused.
func TestPackRefuses(t *testing.T) {
	files := fstest.MapFS{"a": {Data: []byte("a")}, "d/b": {Data: []byte("b")}}
	var z bytes.Buffer
	if err := pack(&z, files, []string{"a"}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	r, err := zip.NewReader(bytes.NewReader(z.Bytes()), int64(z.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.File[0].Modified; !got.Equal(minTime) {
		t.Errorf("time %v, want %v", got, minTime)
	}
	for _, names := range [][]string{{"d/b"}, {"d"}, {"a", "a"}, {"missing"}} {
		if err := pack(&bytes.Buffer{}, files, names, time.Now()); err == nil {
			t.Errorf("%q: packed, want an error", names)
		}
	}
}

// writeZip writes the file and leaves none behind when packing fails.
func TestWriteZip(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.zip")
	if err := writeZip(out, os.DirFS(dir), []string{"a"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	_ = zr.Close()
	bad := filepath.Join(dir, "bad.zip")
	if err := writeZip(bad, os.DirFS(dir), []string{"missing"}, time.Now()); err == nil {
		t.Fatal("packed a missing file")
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a failed pack left %s behind (%v)", bad, err)
	}
}
