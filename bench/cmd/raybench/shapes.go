package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/bench"
)

// shapes is part 7: apply, steady plan and destroy of many clusters by
// shape against each shape's single cluster, on the shapes node table's
// cluster scripts/bench.sh starts for it; what Ray holds after any pair
// fails the run.
func (l *live) shapes() int {
	shapes, err := bench.ShapesNamed(l.o.shapes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "raybench:", err)
		return 2
	}
	if shapes = bench.ShapesOn(shapes, l.o.shapesTable); len(shapes) == 0 {
		logf(">> shapes: none of %q on the %s node table", l.o.shapes, l.o.shapesTable)
		return 0
	}
	logf(">> shapes: %s apply + plan + destroy of %d shapes against their single cluster, x %d", l.o.terraform, len(shapes), l.o.shapesReps)
	start := time.Now()
	rows, err := bench.RunShapes(l.ctx, bench.ShapesConfig{CLI: l.o.terraform, Dir: l.abs, Address: l.o.address,
		Client: l.client.Client, Floor: l.base, Shapes: shapes, Parallelism: l.o.shapesParallelism, DefaultRows: l.o.shapesDefault, Reps: l.o.shapesReps,
		Prefix: l.prefix, Log: os.Stderr})
	table := l.o.shapesTable
	if table == "" {
		table = strings.Join(bench.ShapesTables(shapes), ", ")
	}
	fmt.Printf("## 7. Many clusters by shape, against one (node table %s, %s)\n\n", table, time.Since(start).Round(time.Second))
	if err != nil {
		l.fail("shapes", err)
	}
	bench.PrintShapes(os.Stdout, rows, filepath.Base(l.o.terraform))
	for _, r := range rows {
		for _, s := range r.Samples {
			if !s.Left.Clean() {
				logf("!! shapes: Ray still holds what %s made (see the left column)", r.Name())
				l.status = 1
				break
			}
		}
	}
	return 0
}
