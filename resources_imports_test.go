package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The framework layer reaches Ray only through the session package: a
// direct import of the client, the driver or the live view is how decisions
// and Ray I/O crept into framework code before. Tests may import them.
func TestResourcesReachRayOnlyThroughSession(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", "./internal/resources").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := strings.Fields(string(out))
	for _, banned := range []string{"rayclient", "driver", "liveview"} {
		if slices.Contains(imports, modulePath+"/internal/"+banned) {
			t.Errorf("internal/resources imports internal/%s: reach Ray through internal/session", banned)
		}
	}
}
