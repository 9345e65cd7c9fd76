package resources_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/internal/agenttree"
	"github.com/warrenhq/warren/internal/leases"
	"github.com/warrenhq/warren/internal/sandboxwire"
	"github.com/warrenhq/warren/internal/scripthost"
	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/resources"
	"github.com/warrenhq/warren/tools"
)

// get is resources.Get failing the test when the resource is missing.
func get[T any](t *testing.T, w *ecs.World) *T {
	t.Helper()
	r, err := resources.Get[T](w)
	if err != nil {
		t.Fatal(err)
	}
	if r == nil {
		t.Fatal("Get returned nil without an error")
	}
	return r
}

// denyAll is a Decider an embedder might install.
type denyAll struct{}

func (*denyAll) Decide(*gate.Policy, *gate.Request) gate.Decision { return gate.Decision{} }

// fakeServers counts leases.
type fakeServers struct{ leased []string }

func (f *fakeServers) Lease(s string)                  { f.leased = append(f.leased, s) }
func (f *fakeServers) Release(string)                  {}
func (f *fakeServers) Drain() []mcp.Event              { return nil }
func (f *fakeServers) Close() error                    { return nil }
func (f *fakeServers) Replayed(string, string, uint64) {}
func (f *fakeServers) Crash(string) bool               { return false }

// TestInstallDefaults: Install fills every field left zero with its default and adds every
// resource, each the very value the Set (or Installed) holds, so a system resolving one shares it
// with the composition root.
func TestInstallDefaults(t *testing.T) {
	w := ecs.NewWorld(ecs.Config{})
	var s resources.Set
	in := s.Install(w)

	run := get[resources.Run](t, w)
	if run != &s.Run || run.Context != context.Background() {
		t.Errorf("Run: %p with context %v, want the Set's with a background context", run, run.Context)
	}
	if get[resources.Lanes](t, w) != &s.Lanes {
		t.Error("Lanes is not the Set's")
	}
	sp := get[resources.Spawning](t, w)
	if sp != &s.Spawning || sp.InboxCap != resources.DefaultInboxCap || sp.MaxFanOutItems != resources.DefaultMaxFanOutItems {
		t.Errorf("Spawning = %+v, want the Set's with InboxCap %d and MaxFanOutItems %d", *sp, resources.DefaultInboxCap, resources.DefaultMaxFanOutItems)
	}
	if g := get[resources.Gate](t, w); g.Decider != (gate.Standard{}) || s.Gate != (gate.Standard{}) {
		t.Errorf("Gate decides with %T, want gate.Standard", g.Decider)
	}
	hub := get[gate.Hub](t, w)
	if hub != s.Hub {
		t.Error("the hub is not the Set's")
	}
	p := &gate.Prompt{Agent: 1, Name: "a", Tool: "write_file", Kind: gate.PromptApproval}
	hub.Add(0, 10, "g", p)
	if p.By != gate.ByUnanswered {
		t.Errorf("the default hub settled a prompt by %q, want %q (nobody answers)", p.By, gate.ByUnanswered)
	}
	if tb := get[tools.TaskBroker](t, w); tb != s.Tasks {
		t.Error("the task broker is not the Set's")
	}
	if a := get[components.Agents](t, w); a != s.Agents {
		t.Error("the agent store is not the Set's")
	}
	if ps := get[components.Profiles](t, w); ps != s.Profiles {
		t.Error("the profiles are not the Set's")
	}
	if tree := get[agenttree.State](t, w); tree != in.Tree || tree.Tree == nil || tree.Tree.Len() != 0 {
		t.Error("the agent tree is not Installed's empty one")
	}
	if l := get[leases.Leases](t, w); l != in.Leases || l.WriteEvents(0) != 0 {
		t.Error("the leases are not Installed's, of no servers")
	}
	if sw := get[sandboxwire.Wiring](t, w); sw != s.Sandbox {
		t.Error("the sandbox wiring is not the Set's")
	}
	get[scripthost.Dynamic](t, w)
	if bg := get[resources.Background](t, w); len(bg.Pending) != 0 {
		t.Errorf("background queue holds %d jobs, want none", len(bg.Pending))
	}
	if td := get[resources.Teardown](t, w); td != &s.Teardown {
		t.Error("Teardown is not the Set's")
	}
	if _, err := resources.Get[components.Records](w); !errors.Is(err, resources.ErrMissing) {
		t.Errorf("Records without a Set.Records: %v, want ErrMissing (the embedder keeps no records)", err)
	}
}

// TestInstallKeepsWhatIsGiven: fields the composition root filled are installed as given.
func TestInstallKeepsWhatIsGiven(t *testing.T) {
	type ctxKey struct{}
	ctx := context.WithValue(context.Background(), ctxKey{}, "root")
	dec := &denyAll{}
	servers := &fakeServers{}
	s := resources.Set{
		Run:      resources.Run{Context: ctx},
		Spawning: resources.Spawning{InboxCap: 5, MaxFanOutItems: 9},
		Gate:     dec,
		Hub:      gate.NewHub(nil),
		Tasks:    tools.NewTaskBroker(),
		Records:  &components.Records{},
		Agents:   &components.Agents{},
		Profiles: &components.Profiles{},
		Servers:  servers,
		Sandbox:  sandboxwire.New(nil, nil),
	}
	hub, tasks, records, agents, profiles, sandbox := s.Hub, s.Tasks, s.Records, s.Agents, s.Profiles, s.Sandbox
	w := ecs.NewWorld(ecs.Config{})
	in := s.Install(w)
	if get[resources.Run](t, w).Context != ctx {
		t.Error("the run's context was replaced")
	}
	if sp := get[resources.Spawning](t, w); sp.InboxCap != 5 || sp.MaxFanOutItems != 9 {
		t.Errorf("Spawning = %+v, want the given caps", *sp)
	}
	if get[resources.Gate](t, w).Decider != gate.Decider(dec) {
		t.Error("the given decider was replaced")
	}
	if get[gate.Hub](t, w) != hub || get[tools.TaskBroker](t, w) != tasks || get[components.Records](t, w) != records ||
		get[components.Agents](t, w) != agents || get[components.Profiles](t, w) != profiles || get[sandboxwire.Wiring](t, w) != sandbox {
		t.Error("a given service was replaced")
	}
	in.Leases.Lease([]string{"kv"}, 2)
	if !slices.Equal(servers.leased, []string{"kv", "kv"}) {
		t.Errorf("the leases reached %q, want the given servers leased twice", servers.leased)
	}
}

// TestInstallReplacesNonPositiveCaps: a cap of zero or less is no cap the host can run with, and
// gets the default.
func TestInstallReplacesNonPositiveCaps(t *testing.T) {
	for _, v := range []int{0, -1} {
		s := resources.Set{Spawning: resources.Spawning{InboxCap: v, MaxFanOutItems: v}}
		s.Install(ecs.NewWorld(ecs.Config{}))
		if s.Spawning.InboxCap != resources.DefaultInboxCap || s.Spawning.MaxFanOutItems != resources.DefaultMaxFanOutItems {
			t.Errorf("caps %d: got %+v, want the defaults", v, s.Spawning)
		}
	}
}

type neverInstalled struct{}

func TestGetMissing(t *testing.T) {
	installed := ecs.NewWorld(ecs.Config{})
	var s resources.Set
	s.Install(installed)
	for _, tc := range []struct {
		name string
		get  func() error
		want string
	}{
		{name: "a type no Set holds", want: "resources_test.neverInstalled",
			get: func() error { _, err := resources.Get[neverInstalled](installed); return err }},
		{name: "before Install", want: "resources.Run",
			get: func() error { _, err := resources.Get[resources.Run](ecs.NewWorld(ecs.Config{})); return err }},
		{name: "a service before Install", want: "gate.Hub",
			get: func() error { _, err := resources.Get[gate.Hub](ecs.NewWorld(ecs.Config{})); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.get()
			if !errors.Is(err, resources.ErrMissing) {
				t.Fatalf("Get = %v, want an error wrapping ErrMissing", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Get = %q, want it to name %s", err, tc.want)
			}
		})
	}
}

// hubSystem settles the prompts of a hub as they come due, recording the ticks it ran at.
type hubSystem struct {
	hub   *gate.Hub // nil: the world's, resolved in Initialize
	ranAt []uint64
}

func (*hubSystem) Name() string { return "hub" }
func (h *hubSystem) Initialize(w *ecs.World) error {
	if h.hub != nil {
		return nil
	}
	hub, err := resources.Get[gate.Hub](w)
	h.hub = hub
	return err
}
func (h *hubSystem) Update(w *ecs.World) {
	h.ranAt = append(h.ranAt, w.Tick())
	w.Touch(len(h.hub.Due(w.Tick())))
}
func (*hubSystem) Finalize(*ecs.World) {}

// answerIn answers every prompt after a fixed delay.
type answerIn uint64

func (a answerIn) Answer(*gate.PromptRequest) (string, uint64, bool) { return "once", uint64(a), true }

// TestInstallRegistersTheHubAsAWaiter: a world whose installed hub holds an open prompt is not at
// a fixed point; virtual time jumps to the prompt's due tick. A prompt in a hub the world does not
// know of does not keep it running.
func TestInstallRegistersTheHubAsAWaiter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prompt bool // open a prompt in the installed hub
		other  bool // open it in a hub the world does not know, which the system settles
		want   []uint64
	}{
		{name: "an open prompt is waited for", prompt: true, want: []uint64{0, 30, 31}},
		{name: "no prompt open", want: []uint64{0}},
		{name: "a prompt in a hub the world does not know", other: true, want: []uint64{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := ecs.NewWorld(ecs.Config{})
			s := resources.Set{Hub: gate.NewHub(answerIn(30))}
			s.Install(w)
			sys := &hubSystem{}
			p := &gate.Prompt{Agent: 1, Name: "a", Tool: "write_file", Kind: gate.PromptApproval}
			switch {
			case tc.prompt:
				s.Hub.Add(0, 100, "g", p)
			case tc.other:
				sys.hub = gate.NewHub(answerIn(30))
				sys.hub.Add(0, 100, "g", p)
			}
			sched := ecs.NewScheduler(w, sys)
			stop, err := sched.Run(context.Background(), 1000)
			sched.Finalize()
			if err != nil || stop != ecs.FixedPoint {
				t.Fatalf("Run = %v, %v; want a fixed point", stop, err)
			}
			if !slices.Equal(sys.ranAt, tc.want) {
				t.Fatalf("ran at ticks %v, want %v", sys.ranAt, tc.want)
			}
		})
	}
}

func TestTeardownAdd(t *testing.T) {
	var td resources.Teardown
	for _, step := range []resources.TeardownStep{
		{Order: resources.TeardownScripts, Name: "scripts-a"},
		{Order: resources.TeardownChildren, Name: "children-a"},
		{Order: resources.TeardownScripts, Name: "scripts-b"},
		{Order: resources.TeardownSandbox + 1, Name: "between-sandbox-and-mcp"},
		{Order: resources.TeardownChildren, Name: "children-b"},
		{Order: resources.TeardownTasks, Name: "tasks"},
		{Order: resources.TeardownScripts, Name: "scripts-c"},
	} {
		td.Add(step)
	}
	names := make([]string, len(td.Steps))
	for i, s := range td.Steps {
		names[i] = s.Name
	}
	want := []string{"children-a", "children-b", "between-sandbox-and-mcp", "scripts-a", "scripts-b", "scripts-c", "tasks"}
	if !slices.Equal(names, want) {
		t.Fatalf("steps %v, want %v (by order, equal orders in registration order)", names, want)
	}
	order := []resources.TeardownOrder{resources.TeardownChildren, resources.TeardownSandbox, resources.TeardownMCP,
		resources.TeardownScripts, resources.TeardownPrompts, resources.TeardownTasks}
	if !slices.IsSorted(order) {
		t.Fatalf("the documented teardown orders %v are not ascending", order)
	}
}

type reportOf string

func (r reportOf) Report() string { return string(r) }

func TestBackgroundImageKeepsTheQueueOrder(t *testing.T) {
	b := &resources.Background{}
	b.Add(resources.BackgroundJob{Due: 5, Agent: 9, CallID: "c1", Work: reportOf("live 1")})
	b.Add(resources.BackgroundJob{Due: 4, Agent: 2, CallID: "c7", Work: reportOf("live 2")})
	var asked []string
	back := resources.RestoreBackground(b.Image(), func(agent uint64, call string) tools.Detached {
		asked = append(asked, call)
		return reportOf("lost " + call)
	})
	if len(back.Pending) != 2 || back.Pending[0].Due != 5 || back.Pending[1].Agent != 2 || back.Pending[1].Work.Report() != "lost c7" {
		t.Fatalf("restored queue %+v", back.Pending)
	}
	if strings.Join(asked, ",") != "c1,c7" {
		t.Fatalf("asked for %q", asked)
	}
}
