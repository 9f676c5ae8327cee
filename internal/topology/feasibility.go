package topology

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unsafe"
)

// NodeCapacity is one live node's resources. Available is what is free now;
// when Available is nil, Total is used (an idle node).
type NodeCapacity struct {
	ID               string
	Total, Available Resources
}

// Feasibility is CheckPlacement's verdict. Errors are certain failures;
// Warnings mean a greedy packing failed but Ray may still succeed.
type Feasibility struct {
	Errors, Warnings []string
}

// ResourceUnit is the resolution of Ray's resource amounts: Ray keeps them
// as integers of 1e-4 (FixedPoint), so a declared 0.00015 comes back as
// 0.0001 or 0.0002 and is still the declared amount. The one definition:
// the driver gets it through the contract, drift and planning use it here.
const ResourceUnit = 1e-4

// Amounts are compared in Ray's fixed-point units (rounded to nearest); a
// positive amount below that resolution is no requirement.
const (
	unitScale = 1 / ResourceUnit
	fixedMax  = int64(1) << 60
)

func toFixed(v float64) int64 {
	if math.IsNaN(v) || v <= 0 {
		return 0
	}
	x := math.Round(v * unitScale)
	if x >= float64(fixedMax) {
		return fixedMax
	}
	return int64(x)
}

func satAdd(a, b int64) int64 { return min(a+b, fixedMax) }

func fmtAmount(x int64) string {
	return strconv.FormatFloat(float64(x)/unitScale, 'f', -1, 64)
}

type entry struct {
	r int
	a int64
}

// vec is a sparse resource vector sorted by resource index.
type vec []entry

func (v vec) get(r int) int64 {
	i := sort.Search(len(v), func(i int) bool { return v[i].r >= r })
	if i < len(v) && v[i].r == r {
		return v[i].a
	}
	return 0
}

func fits(need, have vec) bool {
	j := 0
	for _, e := range need {
		for j < len(have) && have[j].r < e.r {
			j++
		}
		if j == len(have) || have[j].r != e.r || have[j].a < e.a {
			return false
		}
	}
	return true
}

func take(need, have vec) {
	j := 0
	for _, e := range need {
		for have[j].r < e.r {
			j++
		}
		have[j].a -= e.a
	}
}

// addVec appends the sum of a and b to out (which must not overlap them).
func addVec(out, a, b vec) vec {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].r < b[j].r):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].r < a[i].r:
			out = append(out, b[j])
			j++
		default:
			out = append(out, entry{a[i].r, satAdd(a[i].a, b[j].a)})
			i++
			j++
		}
	}
	return out
}

type shape struct {
	need  vec
	cands []int // nodes holding the shape's rarest resource
	fit   int   // nodes that fit the shape now
	dom   float64
}

type groupState struct {
	req    GroupRequest
	ok     bool
	shapes []int // shape per bundle
	packed int   // STRICT_PACK aggregate shape, or -1
	failed bool  // a bundle fits no node
}

type checker struct {
	names    []string
	index    map[string]int
	nodes    []NodeCapacity
	avail    []vec
	nodesOf  [][]int // resource -> nodes with a positive amount
	allNodes []int
	shapes   []shape
	shapeIdx map[string]int
	keyBuf   []byte
	sumBuf   [2]vec
	recent   [64]recentName // indexed by the top 6 bits of a hash
	groups   []groupState
	f        Feasibility
}

type recentName struct {
	data *byte
	len  int
	r    int
}

func (c *checker) errf(format string, args ...any) {
	c.f.Errors = append(c.f.Errors, fmt.Sprintf(format, args...))
}

func (c *checker) intern(name string) int {
	if i, ok := c.index[name]; ok {
		return i
	}
	c.index[name] = len(c.names)
	c.names = append(c.names, name)
	return len(c.names) - 1
}

// shapeOf returns the index of the shape with vector v, adding a copy of v
// when it is new.
func (c *checker) shapeOf(v vec) int {
	k := c.keyBuf[:0]
	for _, e := range v {
		k = binary.AppendUvarint(k, uint64(e.r))
		k = binary.AppendUvarint(k, uint64(e.a))
	}
	c.keyBuf = k
	if i, ok := c.shapeIdx[string(k)]; ok { // no allocation for the lookup
		return i
	}
	c.shapeIdx[string(k)] = len(c.shapes)
	c.shapes = append(c.shapes, shape{need: slices.Clone(v)})
	return len(c.shapes) - 1
}

func (c *checker) fmtVec(v vec) string {
	parts := make([]string, len(v))
	for i, e := range v {
		parts[i] = fmt.Sprintf("%q:%s", c.names[e.r], fmtAmount(e.a))
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// CheckPlacement statically checks whether groups can be placed on nodes.
// Errors are only reported for necessary conditions that fail (invalid
// requests, per-resource totals, a bundle or STRICT_PACK group fitting no
// node, STRICT_SPREAD distinct-node matching, and per-resource node subsets);
// a failed greedy first-fit-decreasing packing is only a Warning.
func CheckPlacement(groups []GroupRequest, nodes []NodeCapacity) Feasibility {
	c := &checker{index: map[string]int{}, shapeIdx: map[string]int{}, nodes: nodes}
	c.parseGroups(groups)
	c.parseNodes()
	c.computeFits()
	totalsBad := c.checkTotals()
	c.checkBundles()
	c.checkStrictPack()
	c.checkStrictSpread()
	c.checkSubsets(totalsBad)
	if len(c.f.Errors) == 0 {
		c.greedy()
	}
	return c.f
}

func (c *checker) parseGroups(groups []GroupRequest) {
	c.groups = make([]groupState, 0, len(groups))
	n := 0
	for _, g := range groups {
		n += len(g.Bundles)
	}
	shapes := make([]int, n) // every group's bundle shapes, back to back
	var buf vec
	for _, g := range groups {
		st := groupState{req: g, ok: true, packed: -1}
		if err := CheckStrategy(g.Strategy); err != nil {
			c.errf("group %q: %v", g.Name, err)
			st.ok = false
		}
		if len(g.Bundles) == 0 {
			c.errf("group %q has no bundles; Ray rejects empty placement groups", g.Name)
			st.ok = false
		}
		st.shapes, shapes = shapes[:0:len(g.Bundles)], shapes[len(g.Bundles):]
		for bi, b := range g.Bundles {
			var ok bool
			if buf, ok = c.knownVec(b, buf[:0]); ok {
				// Bundles of a group usually repeat the previous one's vector.
				if n := len(st.shapes); n > 0 && slices.Equal(c.shapes[st.shapes[n-1]].need, buf) {
					st.shapes = append(st.shapes, st.shapes[n-1])
				} else {
					st.shapes = append(st.shapes, c.shapeOf(buf))
				}
				continue
			}
			var v vec
			positive, invalid := false, false
			for _, k := range sortedKeys(b) {
				a := b[k]
				if math.IsNaN(a) || math.IsInf(a, 0) || a < 0 {
					c.errf("bundle %d of group %q has invalid amount %v for %q (must be a finite number >= 0)", bi, g.Name, a, k)
					st.ok, invalid = false, true
					continue
				}
				positive = positive || a > 0
				if fx := toFixed(a); fx > 0 {
					v = append(v, entry{c.intern(k), fx})
				}
			}
			if !positive && !invalid {
				c.errf("bundle %d of group %q requests no resources; Ray rejects empty bundles", bi, g.Name)
				st.ok = false
			}
			sortVec(v)
			st.shapes = append(st.shapes, c.shapeOf(v))
		}
		if st.ok && g.Strategy == StrategyStrictPack {
			// Two scratch vectors, swapped: shapeOf copies the sum if new.
			sum, next := c.sumBuf[0][:0], c.sumBuf[1][:0]
			for _, s := range st.shapes {
				sum, next = addVec(next[:0], sum, c.shapes[s].need), sum
			}
			st.packed = c.shapeOf(sum)
			c.sumBuf = [2]vec{sum, next}
		}
		c.groups = append(c.groups, st)
	}
}

// knownVec appends b's vector to buf when b is valid, requests something and
// names only interned resources; otherwise the caller takes the slow path,
// which reports errors and interns new names in sorted order.
func (c *checker) knownVec(b Resources, buf vec) (vec, bool) {
	positive := false
	for k, a := range b {
		if math.IsNaN(a) || math.IsInf(a, 0) || a < 0 {
			return buf, false
		}
		positive = positive || a > 0
		if fx := toFixed(a); fx > 0 {
			r, ok := c.lookup(k)
			if !ok {
				return buf, false
			}
			buf = append(buf, entry{r, fx})
		}
	}
	sortVec(buf)
	return buf, positive
}

// lookup is index[name], remembering recent names by their bytes' address:
// bundles built from one spec share their key strings ("CPU", a node's
// domain constraint), so most lookups skip hashing the name.
func (c *checker) lookup(name string) (int, bool) {
	p := unsafe.StringData(name)
	// Fibonacci hashing of the address: literals like "CPU" and "GPU" sit
	// a few bytes apart.
	slot := &c.recent[uint64(uintptr(unsafe.Pointer(p)))*0x9E3779B97F4A7C15>>58]
	if slot.data == p && slot.len == len(name) && p != nil {
		return slot.r, true
	}
	r, ok := c.index[name]
	if ok {
		*slot = recentName{p, len(name), r}
	}
	return r, ok
}

// sortVec sorts a short vector by resource index (insertion sort: bundles
// and nodes name a handful of resources).
func sortVec(v vec) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j].r < v[j-1].r; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

func (c *checker) parseNodes() {
	c.avail = make([]vec, len(c.nodes))
	c.nodesOf = make([][]int, len(c.names))
	c.allNodes = make([]int, len(c.nodes))
	size := 0
	for _, n := range c.nodes {
		size += max(len(n.Available), len(n.Total))
	}
	all := make(vec, 0, size) // every node's vector, back to back
	ends := make([]int, len(c.nodes))
	for ni, n := range c.nodes {
		c.allNodes[ni] = ni
		src := n.Available
		if src == nil {
			src = n.Total
		}
		from := len(all)
		for k, a := range src {
			r, ok := c.index[k]
			if !ok || math.IsNaN(a) || a <= 0 {
				continue
			}
			all = append(all, entry{r, toFixed(a)})
		}
		sortVec(all[from:])
		ends[ni] = len(all)
	}
	holders := make([]int, len(c.names))
	from := 0
	for ni, end := range ends { // sliced once all has stopped growing
		c.avail[ni] = all[from:end:end]
		from = end
		for _, e := range c.avail[ni] {
			if e.a > 0 {
				holders[e.r]++
			}
		}
	}
	// nodesOf in one backing array, each list with its exact capacity.
	backing := make([]int, 0, len(all))
	for r, n := range holders {
		c.nodesOf[r] = backing[len(backing) : len(backing) : len(backing)+n]
		backing = backing[:len(backing)+n]
	}
	for ni, v := range c.avail {
		for _, e := range v {
			if e.a > 0 {
				c.nodesOf[e.r] = append(c.nodesOf[e.r], ni)
			}
		}
	}
}

func (c *checker) computeFits() {
	for si := range c.shapes {
		s := &c.shapes[si]
		if len(s.need) == 0 { // amounts below Ray's resolution: fits anywhere
			s.cands, s.fit = c.allNodes, len(c.nodes)
			continue
		}
		rare := s.need[0].r
		for _, e := range s.need {
			if len(c.nodesOf[e.r]) < len(c.nodesOf[rare]) {
				rare = e.r
			}
		}
		s.cands = c.nodesOf[rare]
		for _, ni := range s.cands {
			if fits(s.need, c.avail[ni]) {
				s.fit++
			}
		}
	}
}

func (c *checker) totalAvail() []int64 {
	t := make([]int64, len(c.names))
	for _, v := range c.avail {
		for _, e := range v {
			t[e.r] = satAdd(t[e.r], e.a)
		}
	}
	return t
}

// checkTotals compares summed requests with summed free amounts.
func (c *checker) checkTotals() []bool {
	req := make([]int64, len(c.names))
	for _, g := range c.groups {
		if !g.ok {
			continue
		}
		for _, s := range g.shapes {
			for _, e := range c.shapes[s].need {
				req[e.r] = satAdd(req[e.r], e.a)
			}
		}
	}
	avail := c.totalAvail()
	bad := make([]bool, len(c.names))
	for r, name := range c.names {
		if req[r] <= avail[r] {
			continue
		}
		bad[r] = true
		msg := fmt.Sprintf("not enough %s: requested %s %s, %s available", name, fmtAmount(req[r]), name, fmtAmount(avail[r]))
		var total int64
		for _, n := range c.nodes {
			if a := n.Total[name]; !math.IsNaN(a) && a > 0 {
				total = satAdd(total, toFixed(a))
			}
		}
		if total != avail[r] && total > 0 {
			msg += fmt.Sprintf(" (%s in total)", fmtAmount(total))
		}
		c.f.Errors = append(c.f.Errors, msg)
	}
	return bad
}

// best describes the node closest to fitting need.
func (c *checker) best(need vec) string {
	bestNode, bestMissing, bestShort := -1, 0, 0.0
	for ni, have := range c.avail {
		missing, short := 0, 0.0
		for _, e := range need {
			if a := have.get(e.r); a < e.a {
				missing++
				short += float64(e.a-a) / float64(e.a)
			}
		}
		if bestNode < 0 || missing < bestMissing || (missing == bestMissing && short < bestShort) {
			bestNode, bestMissing, bestShort = ni, missing, short
		}
	}
	if bestNode < 0 {
		return "no nodes are available"
	}
	var parts []string
	for _, e := range need {
		if a := c.avail[bestNode].get(e.r); a < e.a {
			parts = append(parts, fmt.Sprintf("%s %s", c.names[e.r], fmtAmount(a)))
		}
	}
	return fmt.Sprintf("best: node %s has %s free", c.nodes[bestNode].ID, strings.Join(parts, ", "))
}

// checkBundles reports bundles that fit no node on their own.
func (c *checker) checkBundles() {
	for gi := range c.groups {
		g := &c.groups[gi]
		if !g.ok || !slices.ContainsFunc(g.shapes, func(s int) bool { return c.shapes[s].fit == 0 }) {
			continue
		}
		first := map[int]int{}
		count := map[int]int{}
		var order []int
		for bi, s := range g.shapes {
			if c.shapes[s].fit > 0 {
				continue
			}
			if _, seen := first[s]; !seen {
				first[s] = bi
				order = append(order, s)
			}
			count[s]++
		}
		for _, s := range order {
			g.failed = true
			msg := fmt.Sprintf("bundle %d of group %q needs %s; no node has that free (%s)",
				first[s], g.req.Name, c.fmtVec(c.shapes[s].need), c.best(c.shapes[s].need))
			if n := count[s] - 1; n > 0 {
				msg += fmt.Sprintf("; %d more bundles of this group need the same", n)
			}
			c.f.Errors = append(c.f.Errors, msg)
		}
	}
}

func (c *checker) checkStrictPack() {
	for _, g := range c.groups {
		if !g.ok || g.failed || g.packed < 0 || c.shapes[g.packed].fit > 0 {
			continue
		}
		need := c.shapes[g.packed].need
		c.errf("group %q (STRICT_PACK) needs %s on a single node; no node has that free (%s)",
			g.req.Name, c.fmtVec(need), c.best(need))
	}
}

func (c *checker) checkStrictSpread() {
	for _, g := range c.groups {
		if !g.ok || g.failed || g.req.Strategy != StrategyStrictSpread {
			continue
		}
		n := len(g.shapes)
		if n > len(c.nodes) {
			c.errf("group %q (STRICT_SPREAD) needs %d distinct nodes, but only %d nodes exist", g.req.Name, n, len(c.nodes))
			continue
		}
		if m := c.spreadMatching(g.shapes); m < n {
			c.errf("group %q (STRICT_SPREAD) needs its %d bundles on distinct nodes, but at most %d can be placed that way",
				g.req.Name, n, m)
		}
	}
}

// spreadMatching is the maximum number of bundles placeable on distinct
// nodes, via max flow from bundle shapes to node classes (nodes that fit the
// same set of shapes).
func (c *checker) spreadMatching(bundleShapes []int) int {
	local := map[int]int{}
	var shapeIDs []int
	var counts []int64
	for _, s := range bundleShapes {
		i, ok := local[s]
		if !ok {
			i = len(shapeIDs)
			local[s] = i
			shapeIDs = append(shapeIDs, s)
			counts = append(counts, 0)
		}
		counts[i]++
	}
	classIdx := map[string]int{}
	var classSig [][]int
	var classCount []int64
	sig := make([]byte, 0, len(shapeIDs))
	for _, have := range c.avail {
		sig = sig[:0]
		var fitsAny bool
		for _, s := range shapeIDs {
			if fits(c.shapes[s].need, have) {
				sig = append(sig, 1)
				fitsAny = true
			} else {
				sig = append(sig, 0)
			}
		}
		if !fitsAny {
			continue
		}
		i, ok := classIdx[string(sig)] // no allocation for the lookup
		if !ok {
			i = len(classSig)
			classIdx[string(sig)] = i
			var members []int
			for j, b := range sig {
				if b == 1 {
					members = append(members, j)
				}
			}
			classSig = append(classSig, members)
			classCount = append(classCount, 0)
		}
		classCount[i]++
	}
	S, C := len(shapeIDs), len(classSig)
	src, sink := S+C, S+C+1
	f := newMaxFlow(S + C + 2)
	for i, n := range counts {
		f.addEdge(src, i, n)
	}
	for ci, members := range classSig {
		for _, si := range members {
			f.addEdge(si, S+ci, min(counts[si], classCount[ci]))
		}
		f.addEdge(S+ci, sink, classCount[ci])
	}
	return int(f.run(src, sink))
}

// checkSubsets: bundles needing resource r can only use nodes offering r, so
// their summed needs of every resource must fit within those nodes.
func (c *checker) checkSubsets(totalsBad []bool) {
	R := len(c.names)
	shapesOf := make([][]int, R)
	count := make([]int64, len(c.shapes))
	for _, g := range c.groups {
		if !g.ok {
			continue
		}
		for _, s := range g.shapes {
			if count[s] == 0 {
				for _, e := range c.shapes[s].need {
					shapesOf[e.r] = append(shapesOf[e.r], s)
				}
			}
			count[s]++
		}
	}
	need := make([]int64, R)
	have := make([]int64, R)
	for r := 0; r < R; r++ {
		if len(shapesOf[r]) == 0 {
			continue
		}
		minNeed, unplaceable := fixedMax, false
		for _, s := range shapesOf[r] {
			minNeed = min(minNeed, c.shapes[s].need.get(r))
			unplaceable = unplaceable || c.shapes[s].fit == 0
		}
		if unplaceable {
			continue // already reported per bundle
		}
		subset := 0
		for _, ni := range c.nodesOf[r] {
			if c.avail[ni].get(r) >= minNeed {
				subset++
			}
		}
		if subset == len(c.nodes) {
			continue // implied by the totals check
		}
		clear(need)
		clear(have)
		for _, s := range shapesOf[r] {
			for _, e := range c.shapes[s].need {
				need[e.r] = satAdd(need[e.r], satMul(e.a, count[s]))
			}
		}
		for _, ni := range c.nodesOf[r] {
			if c.avail[ni].get(r) < minNeed {
				continue
			}
			for _, e := range c.avail[ni] {
				have[e.r] = satAdd(have[e.r], e.a)
			}
		}
		for q := 0; q < R; q++ {
			if need[q] <= have[q] || totalsBad[q] {
				continue
			}
			c.errf("bundles needing %s request %s %s in total, but the %d node(s) offering %s have only %s %s free",
				c.names[r], fmtAmount(need[q]), c.names[q], subset, c.names[r], fmtAmount(have[q]), c.names[q])
		}
	}
}

func satMul(a, n int64) int64 {
	if n != 0 && a > fixedMax/n {
		return fixedMax
	}
	return a * n
}

type item struct {
	group  int32
	bundle int32 // -1 for a STRICT_PACK aggregate
	shape  int32
}

// greedy runs first-fit-decreasing over all groups on a copy of the free
// resources: most-constrained shapes first, then larger dominant share.
func (c *checker) greedy() {
	c.setDominantShares()
	items := c.orderItems(c.packingItems())
	avail := c.availCopy()
	// Next candidate to try per shape; per (shape, group) for STRICT_SPREAD.
	cursor := make([]int, len(c.shapes))
	type key struct{ shape, group int32 }
	spreadCursor := map[key]int{}
	used := map[int32]map[int]bool{}
	const maxReported = 5
	failures := 0
	for _, it := range items {
		g := c.groups[it.group]
		spread := g.req.Strategy == StrategyStrictSpread
		k := key{it.shape, it.group}
		p := cursor[it.shape]
		if spread {
			if used[it.group] == nil {
				used[it.group] = map[int]bool{}
			}
			p = spreadCursor[k]
		}
		s := &c.shapes[it.shape]
		for p < len(s.cands) {
			ni := s.cands[p]
			if (!spread || !used[it.group][ni]) && fits(s.need, avail[ni]) {
				break
			}
			p++
		}
		if spread {
			spreadCursor[k] = p
		} else {
			cursor[it.shape] = p
		}
		if p == len(s.cands) {
			failures++
			if failures <= maxReported {
				what := fmt.Sprintf("bundle %d of group %q (needs %s)", it.bundle, g.req.Name, c.fmtVec(s.need))
				if it.bundle < 0 {
					what = fmt.Sprintf("group %q (STRICT_PACK, needs %s on one node)", g.req.Name, c.fmtVec(s.need))
				}
				c.f.Warnings = append(c.f.Warnings, fmt.Sprintf(
					"greedy first-fit packing could not place %s after placing larger requests; Ray's scheduler may still find a placement", what))
			}
			continue
		}
		ni := s.cands[p]
		take(s.need, avail[ni])
		if spread {
			used[it.group][ni] = true
		}
	}
	if failures > maxReported {
		c.f.Warnings = append(c.f.Warnings, fmt.Sprintf("greedy first-fit packing could not place %d more requests", failures-maxReported))
	}
}

// setDominantShares sets each shape's dom: its largest share of the total
// free amount of a resource it needs.
func (c *checker) setDominantShares() {
	total := c.totalAvail()
	for si := range c.shapes {
		s := &c.shapes[si]
		for _, e := range s.need {
			if total[e.r] > 0 {
				s.dom = max(s.dom, float64(e.a)/float64(total[e.r]))
			}
		}
	}
}

// packingItems lists what greedy places, in group order: a STRICT_PACK
// group as one aggregate item, any other group's bundles one item each.
func (c *checker) packingItems() []item {
	n := 0
	for _, g := range c.groups {
		n += len(g.shapes)
	}
	items := make([]item, 0, n)
	for gi, g := range c.groups {
		if g.packed >= 0 {
			items = append(items, item{int32(gi), -1, int32(g.packed)})
			continue
		}
		for bi, s := range g.shapes {
			items = append(items, item{int32(gi), int32(bi), int32(s)})
		}
	}
	return items
}

// availCopy is a copy of each node's free resources for greedy to take
// from, all in one backing array.
func (c *checker) availCopy() []vec {
	avail := make([]vec, len(c.avail))
	backing := make(vec, 0, c.totalEntries())
	for i, v := range c.avail {
		from := len(backing)
		backing = append(backing, v...)
		avail[i] = backing[from:len(backing):len(backing)]
	}
	return avail
}

func (c *checker) totalEntries() int {
	n := 0
	for _, v := range c.avail {
		n += len(v)
	}
	return n
}

// orderItems stably sorts items by their shape's (fit ascending, dominant
// share descending): the shapes are sorted, then the items bucketed by
// their shape's place in that order.
func (c *checker) orderItems(items []item) []item {
	byKey := make([]int, len(c.shapes))
	for i := range byKey {
		byKey[i] = i
	}
	compare := func(a, b int) int {
		x, y := &c.shapes[a], &c.shapes[b]
		if x.fit != y.fit {
			return cmp.Compare(x.fit, y.fit)
		}
		return cmp.Compare(y.dom, x.dom)
	}
	slices.SortFunc(byKey, compare)
	// place[s] = position of shape s's key class; equal keys share one.
	place := make([]int, len(c.shapes))
	for i, s := range byKey {
		if i > 0 && compare(byKey[i-1], s) == 0 {
			place[s] = place[byKey[i-1]]
		} else {
			place[s] = i
		}
	}
	start := make([]int, len(c.shapes)+1)
	for _, it := range items {
		start[place[it.shape]+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	out := make([]item, len(items))
	for _, it := range items {
		out[start[place[it.shape]]] = it
		start[place[it.shape]]++
	}
	return out
}
