package rayclient

import (
	"encoding/json"
	"reflect"

	fastjson "github.com/goccy/go-json"
)

// unmarshal decodes a JSON answer into v (a pointer). The state API's node
// list of a 10,000-node cluster is 6-7 MB, which encoding/json decodes in
// about 160 ms on the bench machine and go-json in about 40: most of a
// data-source read at that scale. go-json's errors are less clear ("bool
// unexpected end of JSON input" for a string where a bool belongs), so when
// it fails, v is reset and encoding/json decodes it again: its error (or, if
// go-json was wrong to fail, its result) is what the caller gets.
func unmarshal(data []byte, v any) error {
	if fastjson.Unmarshal(data, v) == nil {
		return nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv.Elem().SetZero()
	}
	return json.Unmarshal(data, v)
}
