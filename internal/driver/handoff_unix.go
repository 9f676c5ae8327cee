//go:build !windows

package driver

import "syscall"

// detachedProcess starts the hand-off in a session of its own, so the
// CLI's end of the plugin's process group does not stop it.
func detachedProcess() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
