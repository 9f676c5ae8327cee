package acctest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ray-infra/terraform-provider-ray/internal/provider"
)

// InProcessProvider starts the provider in this process without a CLI,
// configured for the dashboard at address, and returns it with the
// configuration type of the data source typeName: for reads at sizes the CLI
// would only slow down (the 10,000-node stand-in) and for bench/.
func InProcessProvider(ctx context.Context, address, typeName string) (tfprotov6.ProviderServer, tftypes.Object, error) {
	srv := provider.NewProtocol6Server("test")()
	sch, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		return nil, tftypes.Object{}, err
	}
	if err := DiagErrors(sch.Diagnostics); err != nil {
		return nil, tftypes.Object{}, err
	}
	ptype, ok := sch.Provider.ValueType().(tftypes.Object)
	if !ok {
		return nil, tftypes.Object{}, errors.New("provider schema is not an object")
	}
	cfg, err := tfprotov6.NewDynamicValue(ptype, ObjectWith(ptype, map[string]tftypes.Value{
		"address": tftypes.NewValue(tftypes.String, address),
	}))
	if err != nil {
		return nil, tftypes.Object{}, err
	}
	cr, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: &cfg})
	if err != nil {
		return nil, tftypes.Object{}, err
	}
	if err := DiagErrors(cr.Diagnostics); err != nil {
		return nil, tftypes.Object{}, err
	}
	ds, ok := sch.DataSourceSchemas[typeName]
	if !ok {
		return nil, tftypes.Object{}, fmt.Errorf("provider has no %s data source", typeName)
	}
	dsType, ok := ds.ValueType().(tftypes.Object)
	if !ok {
		return nil, tftypes.Object{}, fmt.Errorf("%s schema is not an object", typeName)
	}
	return srv, dsType, nil
}

// ObjectWith is an object of type t with the given attributes and every
// other attribute null.
func ObjectWith(t tftypes.Object, vals map[string]tftypes.Value) tftypes.Value {
	all := make(map[string]tftypes.Value, len(t.AttributeTypes))
	for name, at := range t.AttributeTypes {
		if v, ok := vals[name]; ok {
			all[name] = v
		} else {
			all[name] = tftypes.NewValue(at, nil)
		}
	}
	return tftypes.NewValue(t, all)
}

// DiagErrors joins the error diagnostics of a protocol response; nil when
// there are none.
func DiagErrors(diags []*tfprotov6.Diagnostic) error {
	var msgs []string
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			msgs = append(msgs, d.Summary+": "+d.Detail)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}
