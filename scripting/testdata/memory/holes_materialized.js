// expect: budget. toReversed and slice materialize the holes of a sparse array of four million.
defineTool({ name: "holes_materialized", description: "hostile", parameters: { type: "object" }, run() {
  const sparse = new Array(4e6 - 1);
  const kept = [];
  for (let i = 0; ; i++) kept.push(i % 2 ? sparse.toReversed() : sparse.slice());
} });
