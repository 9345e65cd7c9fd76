// expect: heap. An array spread into itself until it doubles past the host's memory.
defineTool({ name: "array_spread", description: "hostile", parameters: { type: "object" }, run() {
  let a = [1];
  for (;;) a = [...a, ...a];
} });
