package scenarios

import (
	"fmt"
	"maps"
	"slices"

	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/models"
)

// LiveKey is one way a run of the scenario sends a key: the variable it is read from and the base
// URL it goes to, and what in the scenario or host config says so. A host serving other people's
// scenarios checks each against the keys it gives (host serve).
type LiveKey struct {
	// Where names what sends it: "models.writer", or "models.writer through host.inference_pools
	// fast" for a pool that points the model at an endpoint or a key of its own.
	Where string
	// Env is the variable the key is read from; Named is whether a table named it (api_key_env
	// of the model or the pool), not the kind's default.
	Env   string
	Named bool
	// BaseURL is where the key goes.
	BaseURL string
}

// LiveKeys lists every key the scenario's live models may send, run under host (the scenario's
// own host config when nil): each live model to its own base URL, and through every pool of
// host that gives an endpoint or a key, which a model may reach as its pool or as a fallback.
// Models are listed once each, by key, in key order.
func (sc *Scenario) LiveKeys(host *hostconfig.Config) []LiveKey {
	if host == nil {
		host = sc.Host
	}
	live := map[string]models.LiveSpec{}
	add := func(key string, m models.Model) {
		if lm, ok := m.(models.Live); ok && lm.Live() {
			live[key] = lm.Spec()
		}
	}
	for i := range sc.Groups {
		add(sc.Groups[i].ModelKey, sc.Groups[i].Model)
		for _, sm := range sc.Groups[i].StageModels {
			add(sm.ModelKey, sm.Model)
		}
	}
	for _, key := range sortedKeys(sc.Spawn) {
		add(sc.Spawn[key].ModelKey, sc.Spawn[key].Model)
		for _, sm := range sc.Spawn[key].StageModels {
			add(sm.ModelKey, sm.Model)
		}
	}
	var out []LiveKey
	for _, key := range slices.Sorted(maps.Keys(live)) {
		spec := live[key]
		where := "models." + key
		out = append(out, LiveKey{Where: where, Env: spec.KeyEnv, Named: spec.KeyNamed, BaseURL: spec.BaseURL})
		if host == nil {
			continue
		}
		for _, p := range host.Pools {
			if p.Endpoint == "" && p.APIKeyEnv == "" {
				continue
			}
			k := LiveKey{Where: fmt.Sprintf("%s through host.inference_pools %s", where, p.Name), Env: spec.KeyEnv, Named: spec.KeyNamed, BaseURL: spec.BaseURL}
			if p.Endpoint != "" {
				k.BaseURL = p.Endpoint
			}
			if p.APIKeyEnv != "" {
				k.Env, k.Named = p.APIKeyEnv, true
			}
			out = append(out, k)
		}
	}
	return out
}
