// expect: budget. Recursion in which every frame keeps a large array alive (the call stack cap
// is 256 frames; the memory runs out first).
defineTool({ name: "big_frames", description: "hostile", parameters: { type: "object" }, run() {
  function deeper(n) {
    const frame = new Array(2e5).fill(n);
    return deeper(n + 1) + frame.length;
  }
  return deeper(0);
} });
