// expect: heap. A WeakMap whose keys stay reachable from an array.
defineTool({ name: "weakmap_growth", description: "hostile", parameters: { type: "object" }, run() {
  const wm = new WeakMap();
  const keys = [];
  for (let i = 0; ; i++) { const k = {}; keys[i] = k; wm.set(k, i); }
} });
