// expect: budget. flat and flatMap of arrays of arrays, kept.
defineTool({ name: "flat_kept", description: "hostile", parameters: { type: "object" }, run() {
  const inner = new Array(1000).fill(0);
  const outer = new Array(1000).fill(inner);
  const kept = [];
  for (let i = 0; ; i++) kept.push(i % 2 ? outer.flat() : outer.flatMap((x) => x));
} });
