package topology

// maxFlow is a small Dinic max-flow solver with int64 capacities.
type maxFlow struct {
	head  []int
	next  []int
	to    []int
	cap   []int64
	level []int
	iter  []int
}

func newMaxFlow(n int) *maxFlow {
	h := make([]int, n)
	for i := range h {
		h[i] = -1
	}
	return &maxFlow{head: h, level: make([]int, n), iter: make([]int, n)}
}

func (f *maxFlow) addEdge(u, v int, c int64) {
	f.to = append(f.to, v, u)
	f.cap = append(f.cap, c, 0)
	f.next = append(f.next, f.head[u], f.head[v])
	f.head[u] = len(f.to) - 2
	f.head[v] = len(f.to) - 1
}

func (f *maxFlow) bfs(s, t int) bool {
	for i := range f.level {
		f.level[i] = -1
	}
	f.level[s] = 0
	q := []int{s}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for e := f.head[u]; e >= 0; e = f.next[e] {
			if f.cap[e] > 0 && f.level[f.to[e]] < 0 {
				f.level[f.to[e]] = f.level[u] + 1
				q = append(q, f.to[e])
			}
		}
	}
	return f.level[t] >= 0
}

func (f *maxFlow) dfs(u, t int, push int64) int64 {
	if u == t {
		return push
	}
	for ; f.iter[u] >= 0; f.iter[u] = f.next[f.iter[u]] {
		e := f.iter[u]
		v := f.to[e]
		if f.cap[e] <= 0 || f.level[v] != f.level[u]+1 {
			continue
		}
		if d := f.dfs(v, t, min(push, f.cap[e])); d > 0 {
			f.cap[e] -= d
			f.cap[e^1] += d
			return d
		}
	}
	return 0
}

// run returns the maximum s-t flow.
func (f *maxFlow) run(s, t int) int64 {
	var total int64
	for f.bfs(s, t) {
		copy(f.iter, f.head)
		for {
			d := f.dfs(s, t, fixedMax)
			if d == 0 {
				break
			}
			total += d
		}
	}
	return total
}
