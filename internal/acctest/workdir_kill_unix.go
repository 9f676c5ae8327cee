//go:build unix

package acctest

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Started is a CLI command left running (WorkDir.Start).
type Started struct {
	cmd *exec.Cmd
	out *bytes.Buffer
}

// Start starts the CLI with args (-no-color added) in a process group of its
// own, for a test that kills it mid-command the way a CI runner's end does.
func (w *WorkDir) Start(args ...string) *Started {
	w.t.Helper()
	full := append([]string{args[0], "-no-color"}, args[1:]...)
	cmd := exec.Command(w.cli, full...)
	cmd.Dir, cmd.Env = w.Dir, w.env
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.t.Fatalf("starting %s %v: %v", filepath.Base(w.cli), args, err)
	}
	s := &Started{cmd: cmd, out: out}
	w.t.Cleanup(func() { s.Kill() })
	return s
}

// Kill SIGKILLs the command's process group, the CLI and its provider
// plugin alike, and waits for the CLI; it returns what the CLI printed.
func (s *Started) Kill() string {
	if s.cmd.ProcessState == nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		_ = s.cmd.Wait()
	}
	return s.out.String()
}
