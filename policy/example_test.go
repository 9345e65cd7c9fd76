package policy_test

import (
	"fmt"

	"github.com/warrenhq/warren/policy"
)

// safeList is a stand-in for the shipped safe-key list.
type safeList map[string]bool

func (s safeList) Covers(key string) bool { return s[key] }

// A resolver is built once per (host, blueprint, launch); each call is decided, then covered
// by the agent's safe keys and grants, and explained on request.
func ExampleResolver_Explain() {
	r, err := policy.NewResolver(
		policy.HostLayer{Global: map[string]policy.Verdict{"shell:rm": policy.Deny}},
		policy.BlueprintLayer{Name: "reviewer", Stages: []map[string]policy.Verdict{{"shell": policy.Allow}}},
		policy.Launch{},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	call := policy.Call{Tool: "shell", Keys: []string{"shell:ls"}, Parsed: true}
	fmt.Print(r.Explain(call, safeList{"shell:ls": true}, nil))
	// Output:
	// allow (safe, key shell:ls): every asking key is covered: shell:ls (safe)
	//   shell:ls -> ask (default: blueprint stage 0 sets shell = allow, but may not loosen the built-in default ask without [security] allow_blueprint_permissions)
	//     host             shell:ls  -      not set
	//     host:reviewer    shell:ls  -      not set
	//     blueprint:stage  shell     allow  ignored: may not loosen the default (ask) without [security] allow_blueprint_permissions
	//     blueprint:agent  shell:ls  -      not set
	//     default          shell     ask    applies
	//   coverage
	//     safe  shell:ls  covered  a safe key
}

// Grants answer an ask for the rest of a stage or run; a deny stays a deny whatever is granted.
func ExampleResolver_Cover() {
	r, err := policy.NewResolver(policy.HostLayer{Global: map[string]policy.Verdict{"shell:git push": policy.Deny}},
		policy.BlueprintLayer{}, policy.Launch{})
	if err != nil {
		fmt.Println(err)
		return
	}
	grants := new(policy.Grants)
	grants.Grant([]string{"write_file", "shell:git push"}, policy.ScopeRun, 0)
	for _, call := range []policy.Call{
		{Tool: "write_file"},
		{Tool: "shell", Keys: []string{"shell:git push"}, Parsed: true},
	} {
		d := r.Cover(call, r.Decide(call), nil, grants)
		fmt.Printf("%s: %s by %s\n", call.Tool, d.Verdict, d.Layer)
	}
	// Output:
	// write_file: allow by grant:run
	// shell: deny by host
}
