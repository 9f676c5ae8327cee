package standin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf16"
)

// The dashboard serialises with Python's json.dumps: ", " and ": " separators
// and floats always written with a fraction ("4.0"). The renderer below writes
// the same bytes so that response sizes match a real dashboard's.

type pyWriter struct{ bytes.Buffer }

// str writes s as json.dumps does by default (ensure_ascii, no HTML escaping).
func (w *pyWriter) str(s string) {
	w.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			w.WriteByte('\\')
			w.WriteRune(r)
		case r == '\n':
			w.WriteString(`\n`)
		case r == '\r':
			w.WriteString(`\r`)
		case r == '\t':
			w.WriteString(`\t`)
		case r < 0x20 || (r >= 0x7f && r <= 0xffff):
			fmt.Fprintf(w, `\u%04x`, r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(w, `\u%04x\u%04x`, r1, r2)
		default:
			w.WriteRune(r)
		}
	}
	w.WriteByte('"')
}

func (w *pyWriter) key(k string, first bool) {
	if !first {
		w.WriteString(", ")
	}
	w.str(k)
	w.WriteString(": ")
}

func (w *pyWriter) float(v float64) {
	switch {
	case math.IsInf(v, 1):
		w.WriteString("Infinity")
	case math.IsInf(v, -1):
		w.WriteString("-Infinity")
	case math.IsNaN(v):
		w.WriteString("NaN")
	default:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if math.Abs(v) < 1e16 && (math.Abs(v) >= 1e-4 || v == 0) {
			s = strconv.FormatFloat(v, 'f', -1, 64)
		}
		if !bytes.ContainsAny([]byte(s), ".eEn") {
			s += ".0"
		}
		w.WriteString(s)
	}
}

// writeMap writes m with sorted keys, each value with value.
func writeMap[V any](w *pyWriter, m map[string]V, value func(V)) {
	w.WriteByte('{')
	for i, k := range sortedKeys(m) {
		w.key(k, i == 0)
		value(m[k])
	}
	w.WriteByte('}')
}

func (w *pyWriter) floatMap(m map[string]float64) { writeMap(w, m, w.float) }

func (w *pyWriter) stringMap(m map[string]string) { writeMap(w, m, w.str) }

// anyMap writes a map of scalars (e.g. a group's stats).
func (w *pyWriter) anyMap(m map[string]any) { writeMap(w, m, w.scalar) }

func (w *pyWriter) scalar(v any) {
	switch v := v.(type) {
	case float64:
		w.float(v)
	case string:
		w.str(v)
	default:
		raw, _ := json.Marshal(v)
		w.Write(raw)
	}
}

func (w *pyWriter) bool(b bool) { w.WriteString(strconv.FormatBool(b)) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// strFields writes string fields in order; first is whether the object
// has no field yet.
func (w *pyWriter) strFields(first bool, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		w.key(kv[i], first && i == 0)
		w.str(kv[i+1])
	}
}

// nullableStr writes "" as null, as Ray sends an unset optional string.
func (w *pyWriter) nullableStr(k, v string) {
	w.key(k, false)
	if v == "" {
		w.WriteString("null")
		return
	}
	w.str(v)
}

func (w *pyWriter) boolField(k string, v bool) {
	w.key(k, false)
	w.bool(v)
}

func renderNode(n *Node, detail bool) []byte {
	var w pyWriter
	w.WriteByte('{')
	w.strFields(true, "node_id", n.NodeID, "node_ip", n.NodeIP)
	w.boolField("is_head_node", n.IsHeadNode)
	w.strFields(false, "state", n.State)
	w.nullableStr("state_message", n.StateMessage)
	w.strFields(false, "node_name", n.NodeName)
	w.key("resources_total", false)
	w.floatMap(n.ResourcesTotal)
	w.key("labels", false)
	w.stringMap(n.Labels)
	if detail {
		w.key("start_time_ms", false)
		w.WriteString(strconv.FormatInt(n.StartTimeMs, 10))
		w.key("end_time_ms", false)
		w.WriteString(strconv.FormatInt(n.EndTimeMs, 10))
	}
	w.WriteByte('}')
	return w.Bytes()
}

func (w *pyWriter) bundle(b *Bundle) {
	w.WriteByte('{')
	w.key("bundle_id", true)
	w.WriteByte('{')
	w.strFields(true, "placement_group_id", b.PlacementGroupID)
	w.key("bundle_index", false)
	w.WriteString(strconv.Itoa(b.BundleIndex))
	w.WriteByte('}')
	w.key("unit_resources", false)
	w.floatMap(b.UnitResources)
	if b.NodeID != "" { // left out for a bundle not placed yet
		w.strFields(false, "node_id", b.NodeID)
	}
	w.key("label_selector", false)
	w.stringMap(b.LabelSelector)
	w.WriteByte('}')
}

func renderGroup(g *PlacementGroup, detail bool) []byte {
	var w pyWriter
	w.WriteByte('{')
	w.strFields(true, "placement_group_id", g.PlacementGroupID, "name", g.Name, "creator_job_id", g.CreatorJobID, "state", g.State)
	if detail {
		w.key("bundles", false)
		w.WriteByte('[')
		for i := range g.Bundles {
			if i > 0 {
				w.WriteString(", ")
			}
			w.bundle(&g.Bundles[i])
		}
		w.WriteByte(']')
		w.boolField("is_detached", g.IsDetached)
		w.key("stats", false)
		w.anyMap(g.Stats)
		w.key("topology_strategy", false)
		w.stringMap(g.TopologyStrategy)
		w.key("topology_assignments", false)
		w.stringMap(g.TopologyAssignments)
	}
	w.WriteByte('}')
	return w.Bytes()
}
