// expect: heap. Promises kept in an array: push pays for the slot, the promise is plain JavaScript.
defineTool({ name: "promises", description: "hostile", parameters: { type: "object" }, run: async function () {
  const kept = [];
  for (let i = 0; ; i++) kept.push(Promise.resolve(i));
} });
