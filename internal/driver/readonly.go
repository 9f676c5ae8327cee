package driver

import (
	"context"
	"errors"
	"fmt"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// readOnlyKey marks a context whose command must leave Ray as it is.
type readOnlyKey struct{}

// ReadOnly marks ctx as a plan, refresh, validate or query: Terraform
// promises those change no real infrastructure, so every driver request
// run under it must be one that writes nothing (contract.Request.Writes).
func ReadOnly(ctx context.Context, command string) context.Context {
	return context.WithValue(ctx, readOnlyKey{}, command)
}

// ErrWriteInReadOnly is returned, before anything reaches Ray, for a
// writing request run under a ReadOnly context: a provider bug.
var ErrWriteInReadOnly = errors.New("driver: a writing request during a read-only command")

// checkReadOnly refuses req when ctx is ReadOnly and req writes.
func checkReadOnly(ctx context.Context, req contract.Request) error {
	if !req.Writes() {
		return nil
	}
	return refuseWrite(ctx, req.Action+" request")
}

// refuseWrite returns an error naming what would have been written when
// ctx is ReadOnly, nil otherwise.
func refuseWrite(ctx context.Context, what string) error {
	command, ok := ctx.Value(readOnlyKey{}).(string)
	if !ok {
		return nil
	}
	return fmt.Errorf("%w: %s would write a %s; this is a bug in the provider, nothing was written (please report it)",
		ErrWriteInReadOnly, command, what)
}
