package topology

import "hash/maphash"

var internSeed = maphash.MakeSeed()

// interner numbers strings by first appearance. It is an open-addressing
// table over maphash, at most half full: for the few distinct domain names
// looked up once per node or bundle it costs about half a map lookup.
type interner struct {
	slots []int32 // index+1 into names; 0 is empty
	names []string
}

func (t *interner) index(s string) int32 {
	if len(t.slots) == 0 {
		t.slots = make([]int32, 64)
	}
	mask := uint64(len(t.slots) - 1)
	for p := maphash.String(internSeed, s) & mask; ; p = (p + 1) & mask {
		j := t.slots[p]
		if j == 0 {
			t.names = append(t.names, s)
			t.slots[p] = int32(len(t.names))
			if 2*len(t.names) > len(t.slots) {
				t.grow()
			}
			return int32(len(t.names) - 1)
		}
		if t.names[j-1] == s {
			return j - 1
		}
	}
}

func (t *interner) grow() {
	t.slots = make([]int32, 2*len(t.slots))
	mask := uint64(len(t.slots) - 1)
	for i, s := range t.names {
		p := maphash.String(internSeed, s) & mask
		for t.slots[p] != 0 {
			p = (p + 1) & mask
		}
		t.slots[p] = int32(i + 1)
	}
}
