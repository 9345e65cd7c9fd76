// expect: heap. Strings made by concatenation stored in an array by index.
defineTool({ name: "string_keys", description: "hostile", parameters: { type: "object" }, run() {
  const a = [];
  for (let i = 0; ; i++) a[i] = "key-" + i;
} });
