// expect: budget. new Array(n) costs nothing until fill materializes its million elements.
defineTool({ name: "fill_kept", description: "hostile", parameters: { type: "object" }, run() {
  const kept = [];
  for (;;) kept.push(new Array(1e6).fill(0));
} });
