// expect: heap. Closures made in a loop, each keeping its own scope (about 800 bytes each).
defineTool({ name: "closures", description: "hostile", parameters: { type: "object" }, run() {
  const fs = [];
  for (let i = 0; ; i++) fs[i] = () => i;
} });
