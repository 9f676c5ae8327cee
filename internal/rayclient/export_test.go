package rayclient

import "github.com/ray-infra/terraform-provider-ray/internal/raystate"

// DecodeNodeList decodes a node list answer through the client's decode path,
// without the HTTP round trip, for the decode benchmark.
func DecodeNodeList(body []byte) (int, error) {
	var env stateEnvelope[raystate.Node]
	if err := (&Client{}).decode(request{}, &response{body: body}, &env); err != nil {
		return 0, err
	}
	return len(env.Data.Result.Result), nil
}
