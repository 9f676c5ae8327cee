package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// msgpackNil is the MessagePack encoding of nil: a null of any type.
var msgpackNil = []byte{0xc0}

// nullFunctionArgs encodes the null function arguments OpenTofu leaves empty.
// OpenTofu (checked on 1.10.6) sends a null argument of an AllowNullValue
// parameter as an empty DynamicValue, which the framework rejects before the
// function runs ("DynamicValue had no JSON or msgpack data set"); Terraform
// (checked on 1.11.4) sends an encoded null.
type nullFunctionArgs struct {
	tfprotov6.ProviderServer
}

func (s nullFunctionArgs) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	if req != nil {
		for i, arg := range req.Arguments {
			if arg == nil || (len(arg.MsgPack) == 0 && len(arg.JSON) == 0) {
				req.Arguments[i] = &tfprotov6.DynamicValue{MsgPack: msgpackNil}
			}
		}
	}
	return s.ProviderServer.CallFunction(ctx, req)
}
