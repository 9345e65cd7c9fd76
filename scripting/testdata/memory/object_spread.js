// expect: heap. Object spread of an array copies every element into a new object's properties.
defineTool({ name: "object_spread", description: "hostile", parameters: { type: "object" }, run() {
  const a = new Array(1e5).fill(0);
  const kept = [];
  for (;;) kept[kept.length] = { ...a };
} });
