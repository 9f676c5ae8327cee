package session

import (
	"errors"
	"strings"
	"testing"
)

// A dashboard address that is really the GCS port gets a hint naming both ports.
func TestUnreachableDetailNamesTheGCSPort(t *testing.T) {
	gcs := errors.New(`ray: GET /api/version: net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x00\x00\x18\x04"`)
	if d := UnreachableDetail("http://head:6379", gcs); !strings.Contains(d, "GCS port") || !strings.Contains(d, "8265") {
		t.Errorf("GCS port: %s", d)
	}
	if d := UnreachableDetail("http://head:8265", errors.New("connection refused")); strings.Contains(d, "GCS") {
		t.Errorf("refused: %s", d)
	}
}
