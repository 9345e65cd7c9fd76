package ecs

import "math/rand/v2"

// AgentRNG returns the seeded random source of one agent: a PCG stream whose state derives from
// (scenario seed, agent id) alone. Each agent owning its stream means the numbers an agent draws
// do not depend on how many other agents drew before it, so adding an agent to a scenario does
// not perturb the others. The source is 16 bytes and is meant to be stored by value in a
// component.
func AgentRNG(seed, agentID uint64) rand.PCG {
	return *rand.NewPCG(splitmix64(seed), splitmix64(agentID^0x9e3779b97f4a7c15))
}

// splitmix64 scrambles x so that nearby seeds and ids give unrelated streams.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
