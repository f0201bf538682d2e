package bchain

import "context"

type directSendKey struct{}

// WithDirectSend marks a send to go through the node itself, not through
// the alternative (private) providers: websocket sendTransaction's
// disableAlternativeRPC.
func WithDirectSend(ctx context.Context) context.Context {
	return context.WithValue(ctx, directSendKey{}, true)
}

// DirectSend tells whether ctx asks for a send through the node itself.
func DirectSend(ctx context.Context) bool {
	v, _ := ctx.Value(directSendKey{}).(bool)
	return v
}
