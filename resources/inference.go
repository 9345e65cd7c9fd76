package resources

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/models"
)

// Budgets are the run's limits on what live model turns may spend (zero fields: no limit). Each
// is checked before a turn is sent, against the turn's worst case (inference.Estimate, and the
// dearest price for it), so none is overrun after.
type Budgets struct {
	// TokensPerAgent bounds one agent's tokens (limits.max_tokens_per_agent): an agent whose next
	// turn could pass it ends failed.
	TokensPerAgent int64
	// TokensPerRun bounds the run's tokens (limits.max_tokens_per_run), and CostPerRun its cost
	// (limits.max_cost_usd): once a turn could pass either, it is not sent and its agent ends
	// failed; turns already sent finish.
	TokensPerRun int64
	CostPerRun   inference.Cost
}

// Route is how one live model's turns go out: the pool it asks first and the model bound to each
// pool of that pool's fallback chain.
type Route struct {
	// Pool is the model's pool.
	Pool *inference.Pool
	// Spec is the model's own description.
	Spec  models.LiveSpec
	bound map[*inference.Pool]models.Live
}

// Model is the model that sends the route's turns through pool p.
func (r *Route) Model(p *inference.Pool) models.Live { return r.bound[p] }

// Inference is the run's inference pools, its budgets and what its live turns spent: the run's,
// each group's and each agent tree's. It is a waiter of the world: turns waiting in a pool keep
// the run from a fixed point, and in virtual time the clock jumps to when a pool can next send.
// World goroutine only.
type Inference struct {
	// Configs are the host's [[inference_pools]]; Install makes Pools of them.
	Configs []inference.Config
	// Budgets are the run's limits.
	Budgets Budgets
	// Events receives the pools' breaker and fallback decisions (nil: none); the pools report to
	// it through the Inference, so it may be set after Install (a system does, to trace them).
	Events inference.Events
	// Pools are the pools in order: the configured ones, then the implicit pool of each live
	// model no configured pool serves, in the order the run first used them.
	Pools []*inference.Pool
	// Run, Groups, Trees and Models are what was spent: by the run, by group name, by the id of
	// each tree's top-level agent, by model id.
	Run    components.Spend
	Groups map[string]*components.Spend
	Trees  map[uint64]*components.Spend
	Models map[string]*components.Spend
	// ReservedTokens and ReservedCost are the worst cases of the turns in flight, counted against
	// the run's budgets until their answers come back.
	ReservedTokens int64
	ReservedCost   inference.Cost
	routes         map[string]*Route
	routeOrder     []string // route ids in the order the run first used them
	byName         map[string]*inference.Pool
	clock          *ecs.Clock
}

// install makes the configured pools.
func (in *Inference) install(w *ecs.World) {
	in.Pools = inference.New(in.Configs, in)
	in.byName = make(map[string]*inference.Pool, len(in.Pools))
	for _, p := range in.Pools {
		in.byName[p.Name()] = p
	}
	in.routes = map[string]*Route{}
	in.Groups = map[string]*components.Spend{}
	in.Trees = map[uint64]*components.Spend{}
	in.Models = map[string]*components.Spend{}
	in.clock = w.Clock()
	w.AddWaiter(in)
}

// Route returns the route of the live model m whose id is id, made on its first use: the
// configured pool serving m's model name, else an implicit pool of its own (named by id, with the
// default cap and no rate limits), with m bound to each pool of the fallback chain (the pool's
// endpoint and key; in a fallback pool, the same model name when it serves it or serves none,
// else its first model).
func (in *Inference) Route(id string, m models.Live) (*Route, error) {
	if r, ok := in.routes[id]; ok {
		return r, nil
	}
	spec := m.Spec()
	var pool *inference.Pool
	for _, p := range in.Pools {
		if c := p.Config(); !c.Implicit && slices.Contains(c.Models, spec.Model) {
			pool = p
			break
		}
	}
	if pool == nil {
		pool = inference.New([]inference.Config{{Name: id, Implicit: true}}, in)[0]
		in.Pools = append(in.Pools, pool)
		in.byName[id] = pool
	}
	r := &Route{Pool: pool, Spec: spec, bound: map[*inference.Pool]models.Live{}}
	for p := pool; p != nil; p = p.Fallback() {
		c := p.Config()
		if c.API != "" && c.API != spec.Provider {
			return nil, fmt.Errorf("model %s speaks %s, and pool %s's endpoint speaks %s (its api key)", id, spec.Provider, p.Name(), c.API)
		}
		ep := models.Endpoint{BaseURL: c.Endpoint, APIKeyEnv: c.APIKeyEnv, Caps: c.Caps}
		if p != pool && len(c.Models) > 0 && !slices.Contains(c.Models, spec.Model) {
			ep.Model = c.Models[0]
		}
		if ep == (models.Endpoint{}) {
			r.bound[p] = m
			continue
		}
		b, err := m.Via(ep)
		if err != nil {
			return nil, fmt.Errorf("model %s through pool %s: %w", id, p.Name(), err)
		}
		r.bound[p] = b
	}
	in.routes[id] = r
	in.routeOrder = append(in.routeOrder, id)
	return r, nil
}

// Charge counts what one answered attempt of an agent in group, in the tree under root, by the
// model model, spent.
func (in *Inference) Charge(group string, root uint64, model string, s components.Spend) {
	in.Run.Add(s)
	chargeTo(in.Groups, group, s)
	chargeTo(in.Trees, root, s)
	chargeTo(in.Models, model, s)
}

// chargeTo adds s to the spend of key in m, making it on first use.
func chargeTo[K comparable](m map[K]*components.Spend, key K, s components.Spend) {
	e := m[key]
	if e == nil {
		e = &components.Spend{}
		m[key] = e
	}
	e.Add(s)
}

// Pending implements ecs.Waiter: turns wait in a pool.
func (in *Inference) Pending() bool {
	for _, p := range in.Pools {
		if p.Pending() {
			return true
		}
	}
	return false
}

// NextDue implements ecs.Waiter: the first tick at which a pool can send what it holds back.
func (in *Inference) NextDue() (uint64, bool) {
	var best uint64
	found := false
	for _, p := range in.Pools {
		if at, ok := p.NextAt(); ok {
			if t := in.clock.TickAt(at); !found || t < best {
				best, found = t, true
			}
		}
	}
	return best, found
}

// Breaker implements inference.Events, forwarding to Events.
func (in *Inference) Breaker(p *inference.Pool, s inference.BreakerState, failures int) {
	if in.Events != nil {
		in.Events.Breaker(p, s, failures)
	}
}

// FallBack implements inference.Events, forwarding to Events.
func (in *Inference) FallBack(t *inference.Ticket, from, to *inference.Pool, reason string) {
	if in.Events != nil {
		in.Events.FallBack(t, from, to, reason)
	}
}

// InferenceImage is the run's inference state as data, for a world snapshot: the live models it
// routed, in the order it first did (which orders the implicit pools), every pool's image in
// order, what was spent (the groups' and trees' sorted by name and id) and what the turns in flight
// hold against the budgets.
type InferenceImage struct {
	Routes         []string
	Pools          []inference.PoolImage
	Run            components.Spend
	Groups         []GroupSpend
	Trees          []TreeSpend
	Models         []GroupSpend
	ReservedTokens int64
	ReservedCost   inference.Cost
}

// GroupSpend is one group's (or, in InferenceImage.Models, one model's) spend; TreeSpend one
// agent tree's, by its top-level agent's id.
type GroupSpend struct {
	Group string
	Spend components.Spend
}

// TreeSpend is one agent tree's spend, by its top-level agent's id.
type TreeSpend struct {
	Root  uint64
	Spend components.Spend
}

// Image returns the inference state as data; value gives the host's image of each queued ticket's
// Value (inference.Pool.Image).
func (in *Inference) Image(value func(*inference.Ticket) (any, error)) (InferenceImage, error) {
	img := InferenceImage{Routes: slices.Clone(in.routeOrder), Run: in.Run, ReservedTokens: in.ReservedTokens, ReservedCost: in.ReservedCost}
	for _, p := range in.Pools {
		pi, err := p.Image(value)
		if err != nil {
			return InferenceImage{}, err
		}
		img.Pools = append(img.Pools, pi)
	}
	for _, g := range slices.Sorted(maps.Keys(in.Groups)) {
		img.Groups = append(img.Groups, GroupSpend{Group: g, Spend: *in.Groups[g]})
	}
	for _, r := range slices.Sorted(maps.Keys(in.Trees)) {
		img.Trees = append(img.Trees, TreeSpend{Root: r, Spend: *in.Trees[r]})
	}
	for _, m := range slices.Sorted(maps.Keys(in.Models)) {
		img.Models = append(img.Models, GroupSpend{Group: m, Spend: *in.Models[m]})
	}
	return img, nil
}

// ErrInferenceImage is wrapped by the errors Restore returns for an image that does not fit.
var ErrInferenceImage = errors.New("inference image does not fit")

// Restore gives an installed Inference that routed nothing the state img holds: it routes the
// image's models again in order (live gives the model of a route id), so the implicit pools come
// back in their places, then restores every pool (value makes each queued ticket's Value again).
func (in *Inference) Restore(img *InferenceImage, live func(id string) (models.Live, error), value func(*inference.Ticket, any) (any, error)) error {
	if len(in.routeOrder) > 0 {
		return fmt.Errorf("%w: the run has routed models already", ErrInferenceImage)
	}
	for _, id := range img.Routes {
		m, err := live(id)
		if err != nil {
			return fmt.Errorf("%w: model %s: %w", ErrInferenceImage, id, err)
		}
		if _, err := in.Route(id, m); err != nil {
			return fmt.Errorf("%w: %w", ErrInferenceImage, err)
		}
	}
	if len(img.Pools) != len(in.Pools) {
		return fmt.Errorf("%w: %d pool images for %d pools", ErrInferenceImage, len(img.Pools), len(in.Pools))
	}
	for i, p := range in.Pools {
		if err := p.Restore(&img.Pools[i], value); err != nil {
			return fmt.Errorf("%w: %w", ErrInferenceImage, err)
		}
	}
	in.Run, in.ReservedTokens, in.ReservedCost = img.Run, img.ReservedTokens, img.ReservedCost
	for _, g := range img.Groups {
		s := g.Spend
		in.Groups[g.Group] = &s
	}
	for _, t := range img.Trees {
		s := t.Spend
		in.Trees[t.Root] = &s
	}
	for _, m := range img.Models {
		s := m.Spend
		in.Models[m.Group] = &s
	}
	return nil
}
