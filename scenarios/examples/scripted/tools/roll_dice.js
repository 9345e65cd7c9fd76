// roll_dice: Math.random and Date are virtual (the agent's seeded stream, the virtual clock), so
// a replay rolls the same numbers at the same time. `host run` keeps local time in UTC, so the
// local-time string is the same on every machine too.
defineTool({
  name: "roll_dice",
  description: "Rolls n six-sided dice. Returns {rolls, total, at, local} where at is the current time and local the same in local time.",
  parameters: {
    type: "object",
    properties: { n: { type: "integer", minimum: 1, maximum: 20 } },
    required: ["n"],
    additionalProperties: false
  },
  run: function (args) {
    const rolls = [];
    for (let i = 0; i < args.n; i++) {
      rolls.push(1 + Math.floor(Math.random() * 6));
    }
    return { rolls: rolls, total: rolls.reduce((a, b) => a + b, 0), at: new Date().toISOString(), local: new Date().toString() };
  }
});
