package tools

import "context"

// runLifetimeKey is the context key under which WithRunLifetime keeps the run's context.
type runLifetimeKey struct{}

// WithRunLifetime marks ctx as the context of a whole run, the parent of every call's context, so
// that work a call detaches from its turn (a background command) still ends with the run: Detach
// finds it below any call's context. The host's runtime sets it on the run's context, which it
// cancels when the run stops (a fixed point, the tick limit, an interrupt, a failure).
func WithRunLifetime(ctx context.Context) context.Context {
	return context.WithValue(ctx, runLifetimeKey{}, ctx)
}

// Detach returns a context for work that outlives its call (the turn's end, which cancels the
// call's context, must not stop it) but not its run: it keeps ctx's values, and it is cancelled
// when the run's context (WithRunLifetime, above ctx) ends. Without a run's context above ctx it
// is never cancelled, as context.WithoutCancel. release frees what the link to the run's context
// holds; call it when the work is done (calling it is optional: the link goes when the run ends).
// Without this, a background command of an interrupted run went on until its own timeout, and
// the tick waiting for its report kept the run from stopping.
func Detach(ctx context.Context) (detached context.Context, release func()) {
	d := context.WithoutCancel(ctx)
	run, ok := ctx.Value(runLifetimeKey{}).(context.Context)
	if !ok {
		return d, func() {}
	}
	c, cancel := context.WithCancelCause(d)
	stop := context.AfterFunc(run, func() { cancel(context.Cause(run)) })
	return c, func() {
		stop()
		cancel(context.Canceled)
	}
}
