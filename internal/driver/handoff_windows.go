//go:build windows

package driver

import "syscall"

// Windows process creation flags (winbase.h) that detach the hand-off from
// the CLI's console and process group.
const (
	createNewProcessGroup = 0x00000200
	detachedProcessFlag   = 0x00000008
)

// detachedProcess starts the hand-off detached from the CLI's console.
func detachedProcess() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: createNewProcessGroup | detachedProcessFlag}
}
