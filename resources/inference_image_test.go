package resources_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/inference"
	"github.com/warrenhq/warren/internal/gobtest"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/resources"
)

// liveFake is a live model that is never asked: routing reads only its spec.
type liveFake struct{ spec models.LiveSpec }

func (m liveFake) ID() string { return "fake:" + m.spec.Model }
func (m liveFake) Turn(context.Context, *models.State, *models.View) (models.Reply, error) {
	return models.Reply{}, nil
}
func (m liveFake) Live() bool                               { return true }
func (m liveFake) Spec() models.LiveSpec                    { return m.spec }
func (m liveFake) Request(*models.View) ([]byte, error)     { return nil, nil }
func (m liveFake) Via(models.Endpoint) (models.Live, error) { return m, nil }

// installedInference is an Inference with one configured pool, installed in a world.
func installedInference(t *testing.T) *resources.Inference {
	t.Helper()
	in := &resources.Inference{Configs: []inference.Config{{Name: "main", Models: []string{"big"}, MaxConcurrency: 2, RequestsPerMinute: 60}}}
	set := &resources.Set{Inference: in}
	set.Install(ecs.NewWorld(ecs.Config{}))
	return in
}

// TestInferenceImageRestoresRoutesPoolsAndSpend: an Inference that routed a configured model and
// two unconfigured ones (implicit pools, in the order first used), queued and sent turns and
// spent, restored from its image (through gob) into a fresh one, has its pools in the same order
// with the same state, the same spend, and routes each model to the same pool.
func TestInferenceImageRestoresRoutesPoolsAndSpend(t *testing.T) {
	live := map[string]models.Live{
		"fake:small": liveFake{models.LiveSpec{Provider: "openai", Model: "small"}},
		"fake:big":   liveFake{models.LiveSpec{Provider: "openai", Model: "big"}},
		"fake:tiny":  liveFake{models.LiveSpec{Provider: "openai", Model: "tiny"}},
	}
	orig := installedInference(t)
	for _, id := range []string{"fake:small", "fake:big", "fake:tiny"} {
		r, err := orig.Route(id, live[id])
		if err != nil {
			t.Fatal(err)
		}
		for a := range uint64(3) {
			r.Pool.Enqueue(&inference.Ticket{Agent: a + 1, Estimate: 10, Value: fmt.Sprint(id, a+1)})
		}
	}
	now := time.Unix(1000, 0)
	for _, p := range orig.Pools {
		p.Admit(now, func(*inference.Ticket) inference.Verdict { return inference.Send })
	}
	orig.Charge("g", 1, "openai:a", components.Spend{Cost: 5, Turns: 1, Attempts: 2})
	orig.Charge("h", 4, "openai:b", components.Spend{Cost: 7, Turns: 1, Attempts: 1})
	orig.ReservedTokens, orig.ReservedCost = 30, 9
	img, err := orig.Image(func(t *inference.Ticket) (any, error) { return t.Value, nil })
	if err != nil {
		t.Fatal(err)
	}
	back := installedInference(t)
	err = back.Restore(ptrTo(gobtest.RoundTrip(t, img)), func(id string) (models.Live, error) { return live[id], nil },
		func(_ *inference.Ticket, v any) (any, error) { return v, nil })
	if err != nil {
		t.Fatal(err)
	}
	again, err := back.Image(func(t *inference.Ticket) (any, error) { return t.Value, nil })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gobtest.RoundTrip(t, again), gobtest.RoundTrip(t, img)) {
		t.Fatalf("restored inference images as\n%+v\nthe original\n%+v", again, img)
	}
	for i := range orig.Pools {
		if orig.Pools[i].Name() != back.Pools[i].Name() {
			t.Fatalf("pool %d is %s, the original %s", i, back.Pools[i].Name(), orig.Pools[i].Name())
		}
	}
	r, err := back.Route("fake:big", live["fake:big"])
	if err != nil || r.Pool.Name() != "main" {
		t.Fatalf("the configured model routes to %v (%v), want pool main", r.Pool.Name(), err)
	}
	if back.Run != orig.Run || back.Groups["h"].Cost != 7 || back.Trees[1].Attempts != 2 || back.Models["openai:a"].Cost != 5 || back.ReservedCost != 9 {
		t.Fatalf("spend restored as run %+v, groups %v, trees %v, models %v", back.Run, back.Groups, back.Trees, back.Models)
	}
	if err := back.Restore(&img, nil, nil); err == nil {
		t.Fatal("a second Restore into an Inference that routed models was taken")
	}
}

func ptrTo[T any](v T) *T { return &v }
