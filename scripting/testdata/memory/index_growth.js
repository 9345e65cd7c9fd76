// expect: heap. An array grown by assigning past its end: no push, no built-in.
defineTool({ name: "index_growth", description: "hostile", parameters: { type: "object" }, run() {
  const a = [];
  for (let i = 0; ; i++) a[i] = i;
} });
