package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/bench"
)

// gpu64 is the 64-bundle part: apply + destroy of a segment_size = 2
// cluster in each layout against NeMo-RL's cold path, and the apply of 16
// bundles against its floor, on the 8 x 8 GPU cluster scripts/bench.sh
// starts for it.
func (l *live) gpu64() int {
	var layouts []bench.Layout
	for _, s := range strings.Split(l.o.refLayouts, ",") {
		if s = strings.TrimSpace(s); s != "" { // -layouts '' measures only the apply against its floor
			layouts = append(layouts, bench.Layout(s))
		}
	}
	logf(">> gpu64: %s apply + destroy of %d bundles (%v) beside NeMo-RL, and %d bundles against the floor, x %d",
		l.o.terraform, l.o.gpu64Bundles, layouts, bench.FloorBundles, l.o.gpu64Reps)
	start := time.Now()
	res, err := bench.RunGPU64(l.ctx, bench.GPU64Config{CLI: l.o.terraform, Dir: l.abs, Address: l.o.address,
		Client: l.client.Client, Floor: l.base, NeMo: l.nemo, Prefix: l.prefix, Layouts: layouts,
		Bundles: l.o.gpu64Bundles, Reps: l.o.gpu64Reps, Wait: l.o.wait, Log: os.Stderr})
	if err != nil {
		l.fail("gpu64", err)
	}
	fmt.Printf("## 1d. 64 bundles against NeMo-RL, and an apply against its floor (%s)\n\n", time.Since(start).Round(time.Second))
	bench.PrintGPU64(os.Stdout, res, filepath.Base(l.o.terraform), l.nemoSkipped)
	return 0
}
