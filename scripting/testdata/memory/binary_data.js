// expect: ok. Typed arrays and buffers allocate zeroed memory no interrupt stops: the sandbox
// removes them, so each attempt fails and the tool returns what it found.
defineTool({ name: "binary_data", description: "hostile", parameters: { type: "object" }, run() {
  const names = ["ArrayBuffer", "SharedArrayBuffer", "DataView", "Int8Array", "Uint8Array",
    "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float16Array",
    "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"];
  const found = names.filter((n) => typeof globalThis[n] !== "undefined");
  let made = 0;
  for (const n of names) {
    try { new globalThis[n](1 << 30); made++; } catch (e) { /* not there */ }
  }
  return { found: found.length, made };
} });
