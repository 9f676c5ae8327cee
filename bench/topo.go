package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// BenchLine is one parsed `go test -bench` result line.
type BenchLine struct {
	Name    string // e.g. BenchmarkSortBundles
	Nodes   int    // from the nodes=N sub-benchmark
	N       int    // iterations
	Metrics map[string]float64
}

var benchLineRE = regexp.MustCompile(`^(Benchmark[^/\s]+)/nodes=(\d+)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// ParseBenchOutput reads `go test -bench` output and returns the lines of
// benchmarks with a nodes=N sub-benchmark; other lines are ignored.
func ParseBenchOutput(r io.Reader) ([]BenchLine, error) {
	var out []BenchLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := benchLineRE.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		nodes, _ := strconv.Atoi(m[2])
		iters, _ := strconv.Atoi(m[3])
		bl := BenchLine{Name: m[1], Nodes: nodes, N: iters, Metrics: map[string]float64{}}
		f := strings.Fields(m[4])
		for i := 0; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				bl.Metrics[f[i+1]] = v
			}
		}
		out = append(out, bl)
	}
	return out, sc.Err()
}

func medianFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

var topoLabels = map[string]string{
	"BenchmarkSortBundles":        "sort (SortBundleIndicesByTopology, 8 bundles/node)",
	"BenchmarkSelectSegmentNodes": "segment selection (SelectSegmentNodes, segments of 4, half the nodes)",
	"BenchmarkCheckPlacement":     "feasibility (CheckPlacement, PACK+STRICT_SPREAD+STRICT_PACK groups)",
}

// PrintTopology reads `go test -bench` output of the topology benchmarks
// and prints, per benchmark, ns/node at each size with the ratio to the
// smallest size and the growth exponent between sizes (log time ratio over
// log size ratio: 1.0 is linear, n log n shows as slightly above 1).
func PrintTopology(out io.Writer, r io.Reader) error {
	lines, err := ParseBenchOutput(r)
	if err != nil {
		return err
	}
	if len(lines) == 0 {
		return fmt.Errorf("no nodes=N benchmark lines in the input")
	}
	type key struct {
		name  string
		nodes int
	}
	vals := map[key]map[string][]float64{}
	var names []string
	sizes := map[string][]int{}
	for _, l := range lines {
		k := key{l.Name, l.Nodes}
		if vals[k] == nil {
			vals[k] = map[string][]float64{}
			if len(sizes[l.Name]) == 0 {
				names = append(names, l.Name)
			}
			sizes[l.Name] = append(sizes[l.Name], l.Nodes)
		}
		for m, v := range l.Metrics {
			vals[k][m] = append(vals[k][m], v)
		}
	}
	order := map[string]int{"BenchmarkSortBundles": 0, "BenchmarkSelectSegmentNodes": 1, "BenchmarkCheckPlacement": 2}
	sort.SliceStable(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
	for _, name := range names {
		ns := sizes[name]
		sort.Ints(ns)
		label := topoLabels[name]
		if label == "" {
			label = name
		}
		fmt.Fprintf(out, "%s — %s\n\n", name, label)
		t := NewTable(out, "nodes", "runs", "time/op", "ns/node", "ns/node vs 100", "growth exponent", "B/op", "allocs/op")
		var base, prevOp float64
		prevN := 0
		for _, n := range ns {
			m := vals[key{name, n}]
			op, per := medianFloat(m["ns/op"]), medianFloat(m["ns/node"])
			if per == 0 && n > 0 {
				per = op / float64(n)
			}
			if base == 0 {
				base = per
			}
			growth := "-"
			if prevN > 0 && prevOp > 0 {
				growth = fmt.Sprintf("%.2f", math.Log(op/prevOp)/math.Log(float64(n)/float64(prevN)))
			}
			t.Row(fmt.Sprint(n), fmt.Sprint(len(m["ns/op"])), fmtNs(op),
				fmt.Sprintf("%.0f", per), fmt.Sprintf("%.2fx", per/base), growth,
				fmt.Sprintf("%.0f", medianFloat(m["B/op"])), fmt.Sprintf("%.0f", medianFloat(m["allocs/op"])))
			prevN, prevOp = n, op
		}
		t.Flush()
		fmt.Fprintln(out)
	}
	return nil
}

func fmtNs(ns float64) string {
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%.0fns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.1fµs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.2fms", ns/1e6)
	default:
		return fmt.Sprintf("%.2fs", ns/1e9)
	}
}
