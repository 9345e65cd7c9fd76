// A voter of a population that gossips and votes: local majority rule on a line.
//
// Each voter starts with an opinion, red or blue, drawn from its own seeded random stream. Then,
// for two rounds, it publishes its opinion in the group's shared folder, reads the opinions of
// PEERS neighbours picked at random among the RADIUS voters on either side of it, and adopts the
// majority of what it read (keeping its own if it heard no majority). Finally it votes, and
// remembers whether its vote changed from its first opinion and what share of the neighbours it
// last heard agree with it (the metrics' memory table, a sweep's results). This is
// the majority-rule model of opinion dynamics on a one-dimensional lattice: blocks of agreeing
// neighbours form and grow from round to round, while the overall split barely moves.
//
// Every voter makes the same six turns, so the whole population moves in lockstep and a round's
// files are all written before anyone reads them:
//
//   turn 0  write_file opinions/r0/<me>.txt          its first opinion
//   turn 1  read_file  opinions/r0/<neighbour>.txt   three neighbours
//   turn 2  write_file opinions/r1/<me>.txt          the majority it heard
//   turn 3  read_file  opinions/r1/<neighbour>.txt   three neighbours
//   turn 4  write_file votes/<me>.txt                its vote: the majority it heard
//          memory_set changed, agreement            what the vote changed, what it agrees with
//   turn 5  (no calls)                               done
//
// A voter remembers its opinion through its own conversation: the content of its last
// write_file call. Neighbours past either end of the line do not exist; reading one fails, and
// the voter simply hears one opinion fewer.
//
// PEERS and RADIUS are the scenario's [params] (a sweep's --param peers=1,2,3 gives them other
// values); params is the object of them every policy sees.

const RADIUS = params.radius;
const PEERS = params.peers;

definePolicy(function decide(obs) {
  const me = obs.agent.name;
  switch (obs.turn) {
    case 0: {
      const opinion = Math.random() < 0.5 ? "red" : "blue";
      return { text: me + " starts out " + opinion + ".", calls: [write("opinions/r0/" + me + ".txt", opinion)] };
    }
    case 1:
      return { calls: gossip(obs, "r0") };
    case 2: {
      const opinion = majority(obs);
      return { text: me + " heard " + heard(obs) + " and now thinks " + opinion + ".", calls: [write("opinions/r1/" + me + ".txt", opinion)] };
    }
    case 3:
      return { calls: gossip(obs, "r1") };
    case 4: {
      const vote = majority(obs);
      return {
        text: me + " heard " + heard(obs) + " and votes " + vote + ".",
        calls: [
          write("votes/" + me + ".txt", vote),
          remember("changed", vote !== firstWritten(obs)),
          remember("agreement", agreement(obs, vote)),
        ],
      };
    }
    default:
      return { text: me + " voted " + lastWritten(obs) + "." };
  }
});

// write is a write_file call.
function write(path, content) {
  return { tool: "write_file", args: { path: path, content: content } };
}

// remember is a memory_set call.
function remember(key, value) {
  return { tool: "memory_set", args: { key: key, value: value } };
}

// agreement is the share of the neighbours the last turn's reads heard that hold opinion, to
// two decimals (1 when none was heard): how settled this voter's neighbourhood is.
function agreement(obs, opinion) {
  let heardAny = 0;
  let agree = 0;
  for (let i = 0; i < obs.lastResults.length; i++) {
    const r = obs.lastResults[i];
    if (r.isError) continue;
    heardAny++;
    if (r.content === opinion) agree++;
  }
  return heardAny === 0 ? 1 : Math.round((100 * agree) / heardAny) / 100;
}

// gossip reads the opinions of PEERS distinct neighbours of the given round, picked at random
// within RADIUS places of this voter (none below index 0).
function gossip(obs, round) {
  const index = obs.agent.index;
  const offsets = [];
  for (let d = -RADIUS; d <= RADIUS; d++) {
    if (d !== 0 && index + d >= 0) offsets.push(d);
  }
  const calls = [];
  for (let k = 0; k < PEERS && k < offsets.length; k++) {
    const pick = k + Math.floor(Math.random() * (offsets.length - k)); // a partial Fisher-Yates shuffle
    const d = offsets[pick];
    offsets[pick] = offsets[k];
    offsets[k] = d;
    calls.push({ tool: "read_file", args: { path: "opinions/" + round + "/" + peerName(obs, index + d) + ".txt" } });
  }
  return calls;
}

// peerName is the name of the voter at index: agents are named <group>-<index>, the index
// zero-padded to the same width for the whole group, like this voter's own name.
function peerName(obs, index) {
  const me = obs.agent.name;
  const cut = me.lastIndexOf("-") + 1;
  return me.slice(0, cut) + String(index).padStart(me.length - cut, "0");
}

// majority is the opinion most of the last turn's reads gave; this voter's own on a tie.
function majority(obs) {
  let red = 0;
  let blue = 0;
  for (let i = 0; i < obs.lastResults.length; i++) {
    const r = obs.lastResults[i];
    if (r.isError) continue;
    if (r.content === "red") red++;
    else if (r.content === "blue") blue++;
  }
  if (red > blue) return "red";
  if (blue > red) return "blue";
  return lastWritten(obs);
}

// heard lists what the last turn's reads gave ("-" for a neighbour that does not exist).
function heard(obs) {
  const out = [];
  for (let i = 0; i < obs.lastResults.length; i++) {
    const r = obs.lastResults[i];
    out.push(r.isError ? "-" : r.content);
  }
  return out.join(", ");
}

// firstWritten is the content of this voter's first write_file call: its first opinion.
function firstWritten(obs) {
  for (let i = 0; i < obs.messages.length; i++) {
    const m = obs.messages[i];
    if (m.role !== "assistant") continue;
    for (let j = 0; j < m.calls.length; j++) {
      if (m.calls[j].tool === "write_file") return m.calls[j].args.content;
    }
  }
  throw new Error(obs.agent.name + " has no first opinion: no write_file call in its messages");
}

// lastWritten is the content of this voter's latest write_file call: its current opinion.
function lastWritten(obs) {
  for (let i = obs.messages.length - 1; i >= 0; i--) {
    const m = obs.messages[i];
    if (m.role !== "assistant") continue;
    for (let j = 0; j < m.calls.length; j++) {
      if (m.calls[j].tool === "write_file") return m.calls[j].args.content;
    }
  }
  throw new Error(obs.agent.name + " has no opinion: no write_file call in its latest messages");
}
