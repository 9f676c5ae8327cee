// Command releasezip packs a release zip whose bytes depend on nothing but the files' contents,
// whether each is executable, and one timestamp (the commit's): entries sorted by name, mode
// 0755 or 0644 whatever the umask gave the file, every modification time the same, Unix
// attributes, Deflate from Go's compress/flate (not the host's zlib, whose output differs between
// versions). So the same commit gives the same zip, and the zh:/h1: hashes a lock file recorded
// for it, on every machine. scripts/release-archives.sh runs it.
//
//	releasezip -o OUT.zip -mtime UNIX_SECONDS -C DIR NAME...
package main

import (
	"archive/zip"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"slices"
	"strings"
	"time"
)

// minTime is the earliest time a zip's MS-DOS date holds (1980-01-01 UTC).
var minTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

func main() {
	out := flag.String("o", "", "the zip to write")
	mtime := flag.Int64("mtime", 0, "every entry's modification time, in Unix seconds (the commit's time)")
	dir := flag.String("C", ".", "the directory the names are relative to")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: releasezip -o OUT.zip -mtime UNIX_SECONDS -C DIR NAME...")
		os.Exit(2)
	}
	if err := writeZip(*out, os.DirFS(*dir), flag.Args(), time.Unix(*mtime, 0)); err != nil {
		log.Fatal(err)
	}
}

// writeZip packs names (files of dir, no directories) into the zip file out.
func writeZip(out string, dir fs.FS, names []string, mtime time.Time) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := pack(f, dir, names, mtime); err != nil {
		_ = f.Close()
		_ = os.Remove(out)
		return fmt.Errorf("%s: %w", out, err)
	}
	return f.Close()
}

// pack writes the zip of names to w, entries in byte order of their names.
func pack(w io.Writer, dir fs.FS, names []string, mtime time.Time) error {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	if len(slices.Compact(slices.Clone(sorted))) != len(sorted) {
		return errors.New("a name is given twice")
	}
	mtime = mtime.UTC()
	if mtime.Before(minTime) {
		mtime = minTime
	}
	zw := zip.NewWriter(w)
	for _, name := range sorted {
		if err := add(zw, dir, name, mtime); err != nil {
			return err
		}
	}
	return zw.Close()
}

// add writes one file's entry: 0755 when the file has any executable bit, else 0644.
func add(zw *zip.Writer, dir fs.FS, name string, mtime time.Time) error {
	if !fs.ValidPath(name) || strings.Contains(name, "/") {
		return fmt.Errorf("%q: only a file name, without a directory", name)
	}
	info, err := fs.Stat(dir, name)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", name)
	}
	mode := fs.FileMode(0o644)
	if info.Mode().Perm()&0o111 != 0 {
		mode = 0o755
	}
	hdr := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: mtime}
	hdr.SetMode(mode)
	dst, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	src, err := dir.Open(name)
	if err != nil {
		return err
	}
	defer func() { _ = src.Close() }()
	_, err = io.Copy(dst, src)
	return err
}
