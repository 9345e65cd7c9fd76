// expect: budget. Function.prototype.apply turns an array-like's length into an argument list.
defineTool({ name: "apply_arguments", description: "hostile", parameters: { type: "object" }, run() {
  const kept = [];
  for (;;) kept.push(Array.prototype.concat.apply([], { length: 1e6 }));
} });
