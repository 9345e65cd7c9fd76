// expect: budget. Keeps what host.readFile returns: a 4 MiB file of the workdir, read again and again.
defineTool({ name: "host_strings_kept", description: "hostile", parameters: { type: "object" }, run(args, host) {
  const kept = [];
  for (;;) kept.push(host.readFile("big.txt"));
} });
