// expect: budget. A Map grown by set with new keys, without end.
defineTool({ name: "map_growth", description: "hostile", parameters: { type: "object" }, run() {
  const m = new Map();
  for (let i = 0; ; i++) m.set(i, i);
} });
