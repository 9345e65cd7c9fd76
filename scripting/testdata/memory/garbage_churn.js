// expect: ok. A call that allocates many times its budget in plain JavaScript and keeps none of
// it: objects, arrays and closures dropped as soon as they are made. The heap watch must tell
// garbage from growth and let it finish.
defineTool({ name: "garbage_churn", description: "hostile", parameters: { type: "object" }, run(args) {
  let checksum = 0;
  for (let i = 0; i < args.budget / 16; i++) {
    const o = { i, list: [i, i + 1], f: () => i };
    checksum = (checksum + o.list[1] + o.f()) % 1000003;
  }
  return { checksum };
} });
