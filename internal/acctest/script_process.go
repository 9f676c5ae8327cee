package acctest

import (
	"bufio"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
)

// scriptProcess is a plain-Ray python script that runs until its stdin
// closes (HoldResources, StartBundleWorker): the lines it prints after a
// marker, its stdin, and a stop that closes it (also when the test ends).
type scriptProcess struct {
	lines  chan string // what follows the marker on each marked line; closed at exit
	stdin  io.WriteCloser
	stderr *strings.Builder
	stop   func() error
}

// startScript starts script with input and collects its lines that begin
// with marker.
func startScript(t testing.TB, what, script string, input any, marker string) *scriptProcess {
	t.Helper()
	cmd := plainray.Command(context.Background(), t, script, input)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &scriptProcess{lines: make(chan string, 4), stdin: stdin, stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", what, err)
	}
	var once sync.Once
	var exit error
	p.stop = func() error {
		once.Do(func() {
			_ = stdin.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case exit = <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				exit = <-done
			}
		})
		return exit
	}
	t.Cleanup(func() { _ = p.stop() })
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), marker); ok {
				p.lines <- rest
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		close(p.lines)
	}()
	return p
}
