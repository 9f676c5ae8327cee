package bench

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Median returns the median of ds (the mean of the middle two for an even
// count), 0 for none.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// MinMax returns the smallest and largest of ds.
func MinMax(ds []time.Duration) (time.Duration, time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	lo, hi := ds[0], ds[0]
	for _, d := range ds[1:] {
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi
}

// MedianPhases returns the per-field median of ps (Launches: the largest).
func MedianPhases(ps []Phases) Phases {
	if len(ps) == 0 {
		return Phases{}
	}
	cols := make([][]time.Duration, len(PhaseNames)+1)
	split := true
	calls, polls, launches := make([]int, 0, len(ps)), make([]int, 0, len(ps)), 0
	for _, p := range ps {
		for i, v := range p.Values() {
			cols[i] = append(cols[i], v)
		}
		cols[len(PhaseNames)] = append(cols[len(PhaseNames)], p.Total)
		split = split && p.Split
		calls, polls = append(calls, p.Calls), append(polls, p.Polls)
		launches = max(launches, p.Launches)
	}
	m := make([]time.Duration, len(cols))
	for i := range cols {
		m[i] = Median(cols[i])
	}
	return Phases{LiveCheck: m[0], Submit: m[1], JobStart: m[2], Interpreter: m[3], RayInit: m[4], CreateCalls: m[5],
		PlacementWait: m[6], Probe: m[7], Remove: m[8], DriverExit: m[9], PollLag: m[10], ResultFetch: m[11],
		ResultParse: m[12], DeleteRecord: m[13], Other: m[14], Total: m[15], Split: split,
		Calls: medianInt(calls), Polls: medianInt(polls), Launches: launches}
}

// MinMedianMax formats ds as "min / median / max" seconds, "-" for none.
func MinMedianMax(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	lo, hi := MinMax(ds)
	return Sec(lo) + " / " + Sec(Median(ds)) + " / " + Sec(hi)
}

func medianInt(xs []int) int {
	s := append([]int(nil), xs...)
	sort.Ints(s)
	return s[len(s)/2]
}

// Sec formats a duration as seconds with millisecond precision.
func Sec(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// Ms formats a duration as milliseconds.
func Ms(d time.Duration) string {
	switch {
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond))
	}
}

// Ratio formats a/b, "-" when b is 0.
func Ratio(a, b time.Duration) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", float64(a)/float64(b))
}

// Pct formats part/whole as a percentage.
func Pct(part, whole time.Duration) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(part)/float64(whole))
}

// Table collects rows and prints them as an aligned Markdown table, so the
// output can be pasted into bench/README.md as it is.
type Table struct {
	out  io.Writer
	rows [][]string
}

// NewTable starts a table with a header row (nil out means stdout).
func NewTable(out io.Writer, header ...string) *Table {
	if out == nil {
		out = os.Stdout
	}
	return &Table{out: out, rows: [][]string{header}}
}

// Row adds a row.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Flush prints the table: first column left-aligned, the others right-aligned.
func (t *Table) Flush() {
	width := map[int]int{}
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c), 3)
		}
	}
	line := func(r []string) string {
		var b strings.Builder
		b.WriteString("|")
		for i := 0; i < len(width); i++ {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(" " + c + pad + " |")
			} else {
				b.WriteString(" " + pad + c + " |")
			}
		}
		return b.String()
	}
	fmt.Fprintln(t.out, line(t.rows[0]))
	sep := make([]string, len(width))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
		if i > 0 {
			sep[i] = sep[i][:len(sep[i])-1] + ":"
		}
	}
	fmt.Fprintln(t.out, "|"+" "+strings.Join(sep, " | ")+" |")
	for _, r := range t.rows[1:] {
		fmt.Fprintln(t.out, line(r))
	}
	t.rows = t.rows[:1]
}
