package otelgenai

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/warrenhq/warren/internal/version"
)

// The environment variables FromEnv reads itself; the OTLP exporter and the SDK read the others
// (headers, timeout, compression, certificates, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER, OTEL_BSP_*). The endpoints are exported for hosts and their tests, which
// set or report them.
const (
	// EnvEndpoint is the collector's base URL (/v1/traces is added): setting it turns export on.
	EnvEndpoint = "OTEL_EXPORTER_OTLP_ENDPOINT"
	// EnvTracesEndpoint is the URL traces are posted to as given; it wins over EnvEndpoint.
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envSDKDisabled    = "OTEL_SDK_DISABLED"
	envTracesExporter = "OTEL_TRACES_EXPORTER"
)

// ScopeName is the instrumentation scope of every span Warren exports, what a backend shows as
// the library that made them.
const ScopeName = "github.com/warrenhq/warren/otelgenai"

// ErrConfig marks an environment that asks for spans Warren cannot send (another protocol or
// exporter than OTLP over HTTP), so that a caller can tell a bad setting, which the person
// running the host should fix, from a failure of the collector, which never stops a run.
var ErrConfig = errors.New("OpenTelemetry configuration")

// Exporter sends the GenAI spans of runs to an OTLP/HTTP collector. One Exporter serves any number
// of runs at once (host serve's), each through its own Writer or Tap. The work is split three
// ways so that the world never waits for telemetry: a run's goroutine only recognizes and parses
// the events spans need and queues what they hold; the Exporter's builder goroutine makes the
// spans (the SDK's costs: ids, attributes, snapshots); the SDK's BatchSpanProcessor sends them
// in batches from its own. A nil *Exporter is valid and does nothing: Writer and Tap give back
// what they were given and Close returns nil, so a host calls them whether or not export was
// asked for.
type Exporter struct {
	provider *sdktrace.TracerProvider
	tracer   oteltrace.Tracer
	sink     *guard
	log      zerolog.Logger

	// wakeCh wakes the builder (a batch of records is queued, or a run ended); stop ends it,
	// and built is closed when it has.
	wakeCh      chan struct{}
	stop, built chan struct{}
	// synced asks the builder to apply what is queued and close the channel it is sent.
	synced chan chan struct{}

	mu     sync.Mutex
	runs   map[*runSpans]struct{} // the runs whose end event the builder has not applied
	closed bool
	// ended counts the sampled spans the builder ended (the builder's own; Close reads it once
	// the builder is done), to compare with what was sent.
	ended int64
}

// enabled reports whether the environment asks for spans: an OTLP endpoint is set
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT), the SDK is not disabled
// (OTEL_SDK_DISABLED) and OTEL_TRACES_EXPORTER is not "none".
func enabled() bool {
	if strings.EqualFold(strings.TrimSpace(os.Getenv(envSDKDisabled)), "true") {
		return false
	}
	if slices.Contains(exporters(), "none") {
		return false
	}
	return endpoint() != ""
}

// endpoint returns the OTLP endpoint the environment names for traces, the per-signal variable
// first, "" when neither is set.
func endpoint() string {
	if e := strings.TrimSpace(os.Getenv(EnvTracesEndpoint)); e != "" {
		return e
	}
	return strings.TrimSpace(os.Getenv(EnvEndpoint))
}

// exporters lists OTEL_TRACES_EXPORTER's values, lower-cased.
func exporters() []string {
	var out []string
	for v := range strings.SplitSeq(os.Getenv(envTracesExporter), ",") {
		if v = strings.ToLower(strings.TrimSpace(v)); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// checkEnv refuses settings this package cannot honour, rather than send spans somewhere the
// person did not ask for or silently send none.
func checkEnv() error {
	if ex := exporters(); len(ex) > 0 && !slices.Contains(ex, "otlp") {
		return fmt.Errorf("%w: %s=%s: Warren exports spans over OTLP only (otlp, or none for no spans)",
			ErrConfig, envTracesExporter, os.Getenv(envTracesExporter))
	}
	name, proto := envTracesProtocol, strings.TrimSpace(os.Getenv(envTracesProtocol))
	if proto == "" {
		name, proto = envProtocol, strings.TrimSpace(os.Getenv(envProtocol))
	}
	switch proto {
	case "", "http/protobuf", "http/json":
		return nil
	}
	return fmt.Errorf("%w: %s=%s: Warren sends OTLP over HTTP (http/protobuf or http/json), not gRPC: point the endpoint at the collector's HTTP port (4318)",
		ErrConfig, name, proto)
}

// FromEnv builds the Exporter the standard OpenTelemetry environment variables describe, or
// returns nil (and no error) when they ask for none, so that a run without an endpoint builds
// nothing and pays nothing. The OTLP/HTTP exporter reads the endpoint, headers, timeout,
// compression and certificates itself; the SDK reads OTEL_SERVICE_NAME (default "warren"),
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and the batch processor's OTEL_BSP_* settings.
// Nothing connects yet: a collector that is down shows when the first batch is sent, as one
// warning on the zerolog logger of ctx (zerolog.Ctx), and never as an error of a trace write.
// An error wraps ErrConfig for settings Warren cannot honour (a gRPC protocol, another exporter).
func FromEnv(ctx context.Context) (*Exporter, error) {
	if !enabled() {
		return nil, nil
	}
	if err := checkEnv(); err != nil {
		return nil, err
	}
	client, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: the OTLP/HTTP exporter: %w", ErrConfig, err)
	}
	x, err := newExporter(ctx, client, *zerolog.Ctx(ctx))
	if err != nil {
		_ = client.Shutdown(ctx)
		return nil, err
	}
	return x, nil
}

// newExporter puts the tracer provider together around a span exporter.
func newExporter(ctx context.Context, client sdktrace.SpanExporter, log zerolog.Logger) (*Exporter, error) {
	// The service is "warren" unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise
	// (WithFromEnv comes last, so the environment wins).
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("warren"), semconv.ServiceVersion(version.Warren)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("%w: the resource: %w", ErrConfig, err)
	}
	sink := &guard{next: client, log: log}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(sink), sdktrace.WithResource(res))
	x := &Exporter{
		provider: provider,
		tracer: provider.Tracer(ScopeName, oteltrace.WithInstrumentationVersion(version.Warren),
			oteltrace.WithSchemaURL(schemaURL)),
		sink:   sink,
		log:    log,
		wakeCh: make(chan struct{}, 1),
		stop:   make(chan struct{}),
		built:  make(chan struct{}),
		synced: make(chan chan struct{}),
		runs:   map[*runSpans]struct{}{},
	}
	go x.build()
	return x, nil
}

// flushEvery is the longest a queued event waits for the builder when its run is quiet (a live
// model thinking): a collector shows a turn's span within about this much of its event.
const flushEvery = 100 * time.Millisecond

// wake tells the builder that records are waiting, without ever blocking the caller.
func (x *Exporter) wake() {
	select {
	case x.wakeCh <- struct{}{}:
	default:
	}
}

// newRun registers a run's spans; nil when the run records nothing (the sampler left it out, or
// the exporter is closed).
func (x *Exporter) newRun(id, scenario string) *runSpans {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	r := newRun(x, id, scenario)
	if r != nil {
		x.runs[r] = struct{}{}
	}
	return r
}

// build is the builder goroutine: it applies every run's queued records, in order, when woken,
// every flushEvery, and once more when the exporter closes, after which it ends the spans of runs
// that never reached their end event.
func (x *Exporter) build() {
	defer close(x.built)
	ticker := time.NewTicker(flushEvery)
	defer ticker.Stop()
	var runs []*runSpans
	for {
		var synced chan struct{}
		select {
		case <-x.wakeCh:
		case <-ticker.C:
		case synced = <-x.synced:
		case <-x.stop:
			runs = x.open(runs)
			for _, r := range runs {
				r.q.close()
			}
			x.drain(runs)
			now := time.Now()
			for _, r := range runs {
				r.abandon(now)
			}
			return
		}
		runs = x.drain(x.open(runs))
		if synced != nil {
			close(synced)
		}
	}
}

// sync waits until the builder has applied every record queued before the call: what tests and
// benchmarks need to tell the run's share of the work from the builder's.
func (x *Exporter) sync() {
	done := make(chan struct{})
	select {
	case x.synced <- done:
		<-done
	case <-x.built:
	}
}

// open lists the runs still open into runs' storage.
func (x *Exporter) open(runs []*runSpans) []*runSpans {
	runs = runs[:0]
	x.mu.Lock()
	for r := range x.runs {
		runs = append(runs, r)
	}
	x.mu.Unlock()
	return runs
}

// drain applies the queued records of runs, and forgets the runs that ended.
func (x *Exporter) drain(runs []*runSpans) []*runSpans {
	for _, r := range runs {
		chunks := r.q.take(r.last)
		for _, c := range chunks {
			for i := range c {
				r.apply(&c[i])
			}
		}
		r.last = chunks
		if r.done {
			r.q.close()
			x.mu.Lock()
			delete(x.runs, r)
			x.mu.Unlock()
		}
	}
	return runs
}

// Close ends the spans of runs whose trace never reached its end event (marked unfinished),
// sends every span still queued and stops the exporter, within ctx: a host calls it once its runs
// are over, with a deadline, because a collector that is down would otherwise hold the exit for
// the exporter's retries. Spans the batch queue dropped (it was full: OTEL_BSP_MAX_QUEUE_SIZE) or
// the deadline cut off are counted and logged once at warn. The error is the flush's, for the
// host to log: the runs' traces are complete whatever it says.
func (x *Exporter) Close(ctx context.Context) error {
	if x == nil {
		return nil
	}
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.closed = true
	x.mu.Unlock()
	close(x.stop)
	select {
	case <-x.built:
	case <-ctx.Done():
		return fmt.Errorf("otelgenai: making the last spans: %w", ctx.Err())
	}
	err := x.provider.Shutdown(ctx)
	exported, failed := x.sink.exported.Load(), x.sink.failed.Load()
	if lost := x.ended - exported - failed; lost > 0 {
		x.log.Warn().Int64("lost", lost).Int64("spans", x.ended).
			Msg("OpenTelemetry: spans were not sent: the batch queue was full (raise OTEL_BSP_MAX_QUEUE_SIZE, or sample with OTEL_TRACES_SAMPLER) or the flush ran out of time")
	}
	if err != nil {
		return fmt.Errorf("otelgenai: flushing the spans: %w", err)
	}
	return nil
}

// guard stands between the batch processor and the OTLP exporter: it counts what was sent and
// what failed, logs the first failure at warn, and hands the processor no error (which would go
// to OpenTelemetry's global handler, printed on every failed batch): a collector that is down is
// worth one line in the host's log, not one per batch, and never an error of the run.
type guard struct {
	next             sdktrace.SpanExporter
	log              zerolog.Logger
	warned           atomic.Bool
	exported, failed atomic.Int64
}

// ExportSpans implements sdktrace.SpanExporter.
func (g *guard) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := g.next.ExportSpans(ctx, spans); err != nil {
		g.failed.Add(int64(len(spans)))
		if g.warned.CompareAndSwap(false, true) {
			g.log.Warn().Err(err).Int("spans", len(spans)).
				Msg("OpenTelemetry: spans could not be exported; the run goes on, and later failures are not logged")
		}
		return nil
	}
	g.exported.Add(int64(len(spans)))
	return nil
}

// Shutdown implements sdktrace.SpanExporter.
func (g *guard) Shutdown(ctx context.Context) error { return g.next.Shutdown(ctx) }
